#version 450 core
// Opens the layers of a batch's misses on the GPU, between ldc_insert.comp's miss pass and its accumulating pass
// (src/bake/gpu_insertion.hpp), by the rule of the CPU builder (ibrr/ldc_builder.cpp) as if the batch's hemicubes
// had been warped one by one: a pixel's misses are taken in sample order (hemicube stamp, then atlas texel); one
// that lies on a layer opened earlier in its pixel (|p·n_l − d_l| < ε_d, n·n_l > 1 − ε_n) joins it, and any other
// opens a layer (n, p·n), born at its moment, at the end of its pixel's list. Since a miss looks at its own pixel's
// layers only, pixels are independent: one invocation per pixel with a listed miss, dispatched indirectly with the
// group count the miss pass kept. A layer's index is taken with an atomic, so it varies from run to run; the store
// does not, since it is read pixel by pixel in list order.
#include "ldc_insertion.glsl"

layout(local_size_x = 64) in;

layout(location = IBRR_U_OPEN_EPS_DISTANCE) uniform float u_epsDistance;  // ε_d, world units
layout(location = IBRR_U_OPEN_MIN_COS) uniform float u_minCos;            // 1 − ε_n

bool earlier(uvec2 a, uvec2 b) { return a.x < b.x || (a.x == b.x && a.y < b.y); }

uint missCapacity() { return b_control[11]; }
uvec2 missMoment(int miss) { return uvec2(b_misses[2u * missCapacity() + uint(miss)].x, b_misses[miss].x); }
int nextMiss(int miss) { return int(b_misses[2u * missCapacity() + uint(miss)].y); }

// The miss of `pixel`'s list that comes first after `after`, or -1.
int firstMissAfter(int head, uvec2 after) {
  int first = -1;
  uvec2 firstMoment = uvec2(0xFFFFFFFFu);
  for (int miss = head; miss >= 0; miss = nextMiss(miss)) {
    uvec2 moment = missMoment(miss);
    if (earlier(after, moment) && earlier(moment, firstMoment)) {
      first = miss;
      firstMoment = moment;
    }
  }
  return first;
}

// Opens a layer for miss `miss` of `pixel`, unless it lies on one opened there before.
void openLayer(uint pixel, int miss) {
  uvec4 a = b_misses[miss], b = b_misses[missCapacity() + uint(miss)];
  vec3 p = vec3(uintBitsToFloat(a.z), uintBitsToFloat(a.w), uintBitsToFloat(b.x));
  vec3 n = uintBitsToFloat(b.yzw);
  int last = -1;
  for (int l = b_extraHead[pixel]; l >= 0; l = b_extraNext[l]) {
    vec4 plane = b_planes[l];
    precise float distance = abs(orderedDot(p, plane.xyz) - plane.w);
    precise float cosine = orderedDot(n, plane.xyz);
    if (distance < u_epsDistance && cosine > u_minCos) return;  // the host's matchExtra would find one
    last = l;
  }
  uint layer = atomicAdd(b_control[16], 1u);
  if (layer >= b_control[17]) {
    atomicAdd(b_control[18], 1u);
    return;
  }
  b_planes[layer] = vec4(n, orderedDot(p, n));
  b_births[layer] = missMoment(miss);
  b_extraNext[layer] = -1;
  if (last < 0)
    b_extraHead[pixel] = int(layer);
  else
    b_extraNext[last] = int(layer);
}

void main() {
  uint index = gl_GlobalInvocationID.x;
  if (index >= b_control[15]) return;
  uint pixel = b_missedPixels[index];
  int head = b_missHead[pixel];
  b_missHead[pixel] = -1;  // empty for the next batch
  uvec2 moment = uvec2(0u);  // before every sample: the seeds' birth
  for (int miss = firstMissAfter(head, moment); miss >= 0; miss = firstMissAfter(head, moment)) {
    moment = missMoment(miss);
    openLayer(pixel, miss);
  }
}
