#version 450 core
// Form-factor matrix solver: one product y = N x with the dense k-bounce matrix (3 channels of
// n × n floats, row-major, row i = receiving patch i); acc = y, or acc += y when chaining products
// (y then becomes the next x). See src/lightmap/matrix.hpp.
//
// One invocation per 4 consecutive rows, each whole row in one loop, small workgroups: every
// invocation reads the same x[j] at each step and uses it for 4 rows. On llvmpipe (2 cores) one
// invocation per row ran 2.5–3× faster than a workgroup per row with a shared-memory reduction
// (vec4 loads were slower still).
#ifndef GROUP
#define GROUP 8
#endif
layout(local_size_x = GROUP) in;

#include "interface.glsl"

layout(std430, binding = IBRR_B_MATRIX_DENSE) readonly buffer Matrix0 { float u_m0[]; };
layout(std430, binding = IBRR_B_MATRIX_DENSE + 1) readonly buffer Matrix1 { float u_m1[]; };
layout(std430, binding = IBRR_B_MATRIX_DENSE + 2) readonly buffer Matrix2 { float u_m2[]; };
layout(std430, binding = IBRR_B_MATRIX_INPUT) readonly buffer Input { vec4 u_x[]; };
layout(std430, binding = IBRR_B_MATRIX_OUTPUT) writeonly buffer Output { vec4 u_y[]; };
layout(std430, binding = IBRR_B_MATRIX_ACCUMULATE) buffer Accumulate { vec4 u_acc[]; };

layout(location = IBRR_U_MATRIX_COUNT) uniform uint u_count;       // n
layout(location = IBRR_U_MATRIX_ACCUMULATE) uniform uint u_accumulate;  // 0: acc = y, 1: acc += y

void main() {
  const uint first = 4u * gl_GlobalInvocationID.x;
  if (first >= u_count) return;
  // Rows past n repeat the last row (computed, not written), so the loop has no branch.
  const uint last = u_count - 1u;
  const uint b0 = first * u_count, b1 = min(first + 1u, last) * u_count, b2 = min(first + 2u, last) * u_count,
             b3 = min(first + 3u, last) * u_count;
  vec3 s0 = vec3(0.0), s1 = vec3(0.0), s2 = vec3(0.0), s3 = vec3(0.0);
  for (uint j = 0u; j < u_count; ++j) {
    const vec3 x = u_x[j].rgb;
    s0 += vec3(u_m0[b0 + j], u_m1[b0 + j], u_m2[b0 + j]) * x;
    s1 += vec3(u_m0[b1 + j], u_m1[b1 + j], u_m2[b1 + j]) * x;
    s2 += vec3(u_m0[b2 + j], u_m1[b2 + j], u_m2[b2 + j]) * x;
    s3 += vec3(u_m0[b3 + j], u_m1[b3 + j], u_m2[b3 + j]) * x;
  }
  const vec3 sums[4] = vec3[4](s0, s1, s2, s3);
  for (uint k = 0u; k < 4u && first + k < u_count; ++k) {
    const uint i = first + k;
    u_y[i] = vec4(sums[k], 0.0);
    u_acc[i] = vec4(u_accumulate != 0u ? u_acc[i].rgb + sums[k] : sums[k], 0.0);
  }
}
