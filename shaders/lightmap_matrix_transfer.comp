#version 450 core
// Form-factor matrix solver, transfer to the lightmap: per patch i, L = L_e + s·e + r (radiance;
// s = 1 when e is the ray-traced direct light, 0 when e = L_e), written to its atlas texel. The
// display samples this coarse atlas bilinearly (src/lightmap/matrix.hpp).
layout(local_size_x = 64) in;

#include "interface.glsl"

layout(std430, binding = IBRR_B_MATRIX_INPUT) readonly buffer Input { vec4 u_e[]; };
layout(std430, binding = IBRR_B_MATRIX_ACCUMULATE) readonly buffer Accumulate { vec4 u_r[]; };
layout(std430, binding = IBRR_B_MATRIX_PATCH_TEXEL) readonly buffer PatchTexel { uint u_texel[]; };
layout(std430, binding = IBRR_B_MATRIX_EMISSION) readonly buffer Emission { vec4 u_emission[]; };
layout(rgba32f, binding = IBRR_I_MATRIX_ATLAS) uniform writeonly image2D u_atlas;

layout(location = IBRR_U_MATRIX_COUNT) uniform uint u_count;         // n
layout(location = IBRR_U_MATRIX_WIDTH) uniform uint u_width;         // atlas width in texels
layout(location = IBRR_U_MATRIX_DIRECT_WEIGHT) uniform float u_directWeight; // s

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= u_count) return;
  const vec3 radiance = u_emission[i].rgb + u_directWeight * u_e[i].rgb + u_r[i].rgb;
  const uint texel = u_texel[i];
  imageStore(u_atlas, ivec2(texel % u_width, texel / u_width), vec4(radiance, 1.0));
}
