#version 450 core
// The end of one hemicube's GPU insertion: every layer it touched adds the hemicube's area-weighted mean
//   B_h = Φ · Σ a·g / Σ a
// to its total and counts one more hemicube (the same meaning as the CPU builder, ibrr/ldc_builder.hpp), then
// clears its sums. One invocation per touched layer; dispatched indirectly with the group count the insertion
// pass kept.
#include "ldc_insertion.glsl"

layout(local_size_x = 64) in;

layout(location = IBRR_U_FLUSH_POWER) uniform vec3 u_power;      // Φ of the hemicube's VPL, per channel
layout(location = IBRR_U_FLUSH_PIXEL_AREA) uniform float u_pixelArea;  // LDI pixel area, world units²

void main() {
  uint index = gl_GlobalInvocationID.x;
  if (index >= b_control[3]) return;
  uint layer = b_touched[index];
  uint at = 4u * layer;
  float sumAG = read64(at) / kSumScale;
  float sumA = read64(at + 2u) / kAreaScale * u_pixelArea;
  if (sumA > 0.0) b_totals[layer] += vec4(u_power * (sumAG / sumA), 1.0);
  b_sums[at] = 0u;
  b_sums[at + 1u] = 0u;
  b_sums[at + 2u] = 0u;
  b_sums[at + 3u] = 0u;
}
