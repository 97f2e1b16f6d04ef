#version 450 core
// The gathering solver's hemicube integration (Tjahyono et al. §IV.C) in one pass: workgroup k
// sums w_j · L_j over the 3H² pixels of texture-array layer k (w: the multiplier map, Σ w_j = 1,
// so the sum is the texel's irradiance over π) and writes the texel's new exitant radiance
//   L = base + ρ · Σ_j w_j L_j        (W·sr⁻¹·m⁻²)
// where base is L_e (or L_e plus the direct light already gathered). The tree reduction has a
// fixed order, so a run is deterministic.
layout(local_size_x = 256) in;

#include "interface.glsl"

layout(binding = IBRR_T_REDUCE_HEMICUBES) uniform sampler2DArray u_hemicubes;  // H × 3H per layer, RGBA32F radiance
layout(binding = IBRR_T_REDUCE_BASE) uniform sampler2D u_base;            // RGBA32F per texel
layout(binding = IBRR_I_REDUCE_OUTPUT, rgba32f) uniform writeonly image2D u_output;

layout(std430, binding = IBRR_B_REDUCE_MULTIPLIER) readonly buffer Multiplier { float u_weight[]; };  // H × 3H, row-major
struct Patch {
  ivec2 texel;
  ivec2 unused;
  vec4 albedo;  // ρ
};
layout(std430, binding = IBRR_B_REDUCE_PATCHES) readonly buffer Patches { Patch u_patch[]; };  // the batch's, from u_firstEntry

layout(location = IBRR_U_REDUCE_FIRST_ENTRY) uniform int u_firstEntry;
layout(location = IBRR_U_REDUCE_RESOLUTION) uniform int u_resolution;  // H

shared vec3 s_partial[256];

void main() {
  int layer = int(gl_WorkGroupID.x);
  uint thread = gl_LocalInvocationIndex;
  int width = u_resolution;
  int pixels = 3 * u_resolution * u_resolution;
  vec3 sum = vec3(0.0);
  for (int i = int(thread); i < pixels; i += 256) {
    ivec3 p = ivec3(i % width, i / width, layer);
    sum += u_weight[i] * texelFetch(u_hemicubes, p, 0).rgb;
  }
  s_partial[thread] = sum;
  barrier();
  for (uint stride = 128u; stride > 0u; stride >>= 1u) {
    if (thread < stride) s_partial[thread] += s_partial[thread + stride];
    barrier();
  }
  if (thread == 0u) {
    Patch q = u_patch[u_firstEntry + layer];
    vec3 radiance = texelFetch(u_base, q.texel, 0).rgb + q.albedo.rgb * s_partial[0];
    imageStore(u_output, q.texel, vec4(radiance, 1.0));
  }
}
