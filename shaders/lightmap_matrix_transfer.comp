#version 450 core
// Form-factor matrix solver, transfer to the lightmap: per patch i, L = L_e + s·e + r (radiance;
// s = 1 when e is the ray-traced direct light, 0 when e = L_e), written to its atlas texel. The
// display samples this coarse atlas bilinearly (src/lightmap/matrix.hpp).
layout(local_size_x = 64) in;

layout(std430, binding = 3) readonly buffer Input { vec4 u_e[]; };
layout(std430, binding = 5) readonly buffer Accumulate { vec4 u_r[]; };
layout(std430, binding = 10) readonly buffer PatchTexel { uint u_texel[]; };
layout(std430, binding = 11) readonly buffer Emission { vec4 u_emission[]; };
layout(rgba32f, binding = 0) uniform writeonly image2D u_atlas;

layout(location = 0) uniform uint u_count;         // n
layout(location = 4) uniform uint u_width;         // atlas width in texels
layout(location = 5) uniform float u_directWeight; // s

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= u_count) return;
  const vec3 radiance = u_emission[i].rgb + u_directWeight * u_e[i].rgb + u_r[i].rgb;
  const uint texel = u_texel[i];
  imageStore(u_atlas, ivec2(texel % u_width, texel / u_width), vec4(radiance, 1.0));
}
