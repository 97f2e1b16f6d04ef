#version 450 core
// Form-factor matrix solver: one product y = N x with the compressed k-bounce matrix. Entry (r, c)
// of the stored (reordered) matrix = the log-mapped remainder in the BC1 texture, q in 0..255 per
// channel → scale_r · exp(R (q/255 − 1)) (0 where q = 0), times x[columnOrder[c]]; plus the exact
// corrections of row r (patch columns); the result belongs to patch rowOrder[r].
// HARDWARE_BC1: the GL decodes the GL_COMPRESSED_RGB_S3TC_DXT1_EXT texture; otherwise the blocks
// are decoded here from a buffer exactly as decodeBc1Block() does on the CPU, and the log mapping
// is undone once per palette colour (4 per block) instead of once per entry.
// One invocation per block row (4 stored rows): each x[c] and each block is read once for 4 rows.
// See src/lightmap/matrix.hpp.
#ifndef GROUP
#define GROUP 8
#endif
layout(local_size_x = GROUP) in;

#include "interface.glsl"

#ifdef HARDWARE_BC1
layout(binding = IBRR_T_MATRIX_BLOCKS) uniform sampler2D u_blocks;
#else
layout(std430, binding = IBRR_B_MATRIX_BLOCKS) readonly buffer Blocks { uvec2 u_blocks[]; };
#endif
layout(std430, binding = IBRR_B_MATRIX_ROW_ORDER) readonly buffer RowOrder { uint u_rowOrder[]; };
layout(std430, binding = IBRR_B_MATRIX_COLUMN_ORDER) readonly buffer ColumnOrder { uint u_columnOrder[]; };
layout(std430, binding = IBRR_B_MATRIX_INPUT) readonly buffer Input { vec4 u_x[]; };
layout(std430, binding = IBRR_B_MATRIX_OUTPUT) writeonly buffer Output { vec4 u_y[]; };
layout(std430, binding = IBRR_B_MATRIX_ACCUMULATE) buffer Accumulate { vec4 u_acc[]; };
layout(std430, binding = IBRR_B_MATRIX_ROW_SCALE) readonly buffer RowScale { vec4 u_rowScale[]; };
layout(std430, binding = IBRR_B_MATRIX_EXACT_START) readonly buffer ExactStart { uint u_exactStart[]; };
layout(std430, binding = IBRR_B_MATRIX_EXACT_COLUMN) readonly buffer ExactColumn { uint u_exactColumn[]; };
layout(std430, binding = IBRR_B_MATRIX_EXACT_VALUE) readonly buffer ExactValue { vec4 u_exactValue[]; };

layout(location = IBRR_U_MATRIX_COUNT) uniform uint u_count;       // n
layout(location = IBRR_U_MATRIX_ACCUMULATE) uniform uint u_accumulate;  // 0: acc = y, 1: acc += y
layout(location = IBRR_U_MATRIX_PADDED) uniform uint u_padded;      // n rounded up to a multiple of 4
layout(location = IBRR_U_MATRIX_LOG_RANGE) uniform float u_logRange;   // R

// The log mapping undone, without the row's scale (applied once per row): 0 for q = 0.
vec3 entry(vec3 q) { return mix(vec3(0.0), exp(u_logRange * (q / 255.0 - 1.0)), greaterThan(q, vec3(0.5))); }

#ifndef HARDWARE_BC1
ivec3 expand565(uint c) {
  const int r = int((c >> 11) & 31u), g = int((c >> 5) & 63u), b = int(c & 31u);
  return ivec3((r << 3) | (r >> 2), (g << 2) | (g >> 4), (b << 3) | (b >> 2));
}
vec3 pick(uint index, vec3 v0, vec3 v1, vec3 v2, vec3 v3) {
  return index < 2u ? (index == 0u ? v0 : v1) : (index == 2u ? v2 : v3);
}
#endif

void main() {
  const uint blockRow = gl_GlobalInvocationID.x;
  const uint first = 4u * blockRow;
  if (first >= u_count) return;
  vec3 s0 = vec3(0.0), s1 = vec3(0.0), s2 = vec3(0.0), s3 = vec3(0.0);
  const uint blocksPerRow = u_padded / 4u;
  for (uint b = 0u; b < blocksPerRow; ++b) {
#ifdef HARDWARE_BC1
    for (uint x = 0u; x < 4u; ++x) {
      const uint c = 4u * b + x;
      if (c >= u_count) break;
      const vec3 xc = u_x[u_columnOrder[c]].rgb;
      s0 += entry(round(texelFetch(u_blocks, ivec2(c, first), 0).rgb * 255.0)) * xc;
      s1 += entry(round(texelFetch(u_blocks, ivec2(c, first + 1u), 0).rgb * 255.0)) * xc;
      s2 += entry(round(texelFetch(u_blocks, ivec2(c, first + 2u), 0).rgb * 255.0)) * xc;
      s3 += entry(round(texelFetch(u_blocks, ivec2(c, first + 3u), 0).rgb * 255.0)) * xc;
    }
#else
    const uvec2 block = u_blocks[blockRow * blocksPerRow + b];
    const uint c0 = block.x & 0xffffu, c1 = block.x >> 16;
    const ivec3 e0 = expand565(c0), e1 = expand565(c1);
    const bool four = c0 > c1;
    const vec3 v0 = entry(vec3(e0)), v1 = entry(vec3(e1));
    const vec3 v2 = entry(vec3(four ? (2 * e0 + e1) / 3 : (e0 + e1) / 2));
    const vec3 v3 = four ? entry(vec3((e0 + 2 * e1) / 3)) : vec3(0.0);
    for (uint x = 0u; x < 4u; ++x) {
      const uint c = 4u * b + x;
      if (c >= u_count) break;
      const vec3 xc = u_x[u_columnOrder[c]].rgb;
      const uint bits = block.y >> (2u * x);  // texel (x, y) index at bits 2(4y + x)
      s0 += pick(bits & 3u, v0, v1, v2, v3) * xc;
      s1 += pick((bits >> 8) & 3u, v0, v1, v2, v3) * xc;
      s2 += pick((bits >> 16) & 3u, v0, v1, v2, v3) * xc;
      s3 += pick((bits >> 24) & 3u, v0, v1, v2, v3) * xc;
    }
#endif
  }
  const vec3 sums[4] = vec3[4](s0, s1, s2, s3);
  for (uint k = 0u; k < 4u && first + k < u_count; ++k) {
    const uint r = first + k;
    vec3 sum = sums[k] * u_rowScale[r].rgb;
    for (uint e = u_exactStart[r]; e < u_exactStart[r + 1u]; ++e) sum += u_exactValue[e].rgb * u_x[u_exactColumn[e]].rgb;
    const uint i = u_rowOrder[r];
    u_y[i] = vec4(sum, 0.0);
    u_acc[i] = vec4(u_accumulate != 0u ? u_acc[i].rgb + sum : sum, 0.0);
  }
}
