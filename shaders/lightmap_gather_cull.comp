#version 450 core
// Gathering hemicubes, per batch: which chunks of the sorted triangle list each face draws
// (gather_hemicubes.hpp). Invocation (slot, chunk) writes command slot · chunks + chunk: the
// chunk's vertex range, baseInstance = slot (5·hemicube + face), and instanceCount 1 unless the
// chunk's box lies wholly outside one plane of the face's clip volume −w ≤ x, y, z ≤ w. Clip
// coordinates are linear in the world position, so a box all of whose 8 corners are outside the
// same plane is outside the frustum: culling never removes a visible triangle.
layout(local_size_x = 64) in;

#include "interface.glsl"

layout(std430, binding = IBRR_B_GATHER_FACE_MATRICES) readonly buffer FaceMatrices { mat4 u_faceViewProjection[]; };
struct Chunk {
  vec4 lower;
  vec4 upper;
  uint firstVertex;
  uint vertexCount;
  uint unused0;
  uint unused1;
};
layout(std430, binding = IBRR_B_GATHER_CHUNKS) readonly buffer Chunks { Chunk u_chunk[]; };
struct Command {
  uint count;
  uint instanceCount;
  uint first;
  uint baseInstance;
};
layout(std430, binding = IBRR_B_GATHER_COMMANDS) writeonly buffer Commands { Command u_command[]; };

layout(location = IBRR_U_GATHER_FIRST_ENTRY) uniform int u_firstEntry;  // the batch's first matrix within the bound range
layout(location = IBRR_U_GATHER_CHUNKS) uniform uint u_chunks;
layout(location = IBRR_U_GATHER_SLOTS) uniform uint u_slots;      // 5 × hemicubes of the batch

void main() {
  uint pair = gl_GlobalInvocationID.x;
  if (pair >= u_slots * u_chunks) return;
  uint slot = pair / u_chunks;
  uint c = pair - slot * u_chunks;
  Chunk chunk = u_chunk[c];
  mat4 m = u_faceViewProjection[u_firstEntry + int(slot)];
  // Per plane, whether every corner is outside it: bits of (x > w, x < −w, y > w, y < −w, z > w, z < −w).
  uint allOutside = 63u;
  for (uint k = 0u; k < 8u; ++k) {
    vec3 corner = vec3((k & 1u) != 0u ? chunk.upper.x : chunk.lower.x, (k & 2u) != 0u ? chunk.upper.y : chunk.lower.y,
                       (k & 4u) != 0u ? chunk.upper.z : chunk.lower.z);
    vec4 p = m * vec4(corner, 1.0);
    uint outside = (p.x > p.w ? 1u : 0u) | (p.x < -p.w ? 2u : 0u) | (p.y > p.w ? 4u : 0u) | (p.y < -p.w ? 8u : 0u) |
                   (p.z > p.w ? 16u : 0u) | (p.z < -p.w ? 32u : 0u);
    allOutside &= outside;
  }
  u_command[pair] = Command(chunk.vertexCount, allOutside == 0u ? 1u : 0u, chunk.firstVertex, slot);
}
