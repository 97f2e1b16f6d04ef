#version 450 core
// What a gathering hemicube pixel sees: the lightmap texel under the visible surface point, by
// nearest sampling (each hemicube pixel sees exactly one texel, so the form factor F_ij is the
// multiplier-map weight of the pixels that see j). u_seen holds per atlas texel what a hemicube
// sees there, already resolved on the CPU: for a valid texel its own value, for a padding texel
// next to a chart (UVs on a chart's border round into it) the value of the nearest valid texel,
// else nothing. Back faces are the unlit inside of closed objects: they hide what lies behind them
// and see black.
//
// Radiance mode: u_seen is RGBA32F radiance (W·sr⁻¹·m⁻²). GATHER_TEXEL_IDS: u_seen is R32I, the
// atlas index of the texel seen or −1; the pixel stores 1 + that index, 0 for nothing.

#include "interface.glsl"

in vec2 v_lightmapUv;  // texel units

#ifdef GATHER_TEXEL_IDS
layout(binding = IBRR_T_GATHER_SEEN) uniform isampler2D u_seen;
layout(location = 0) out uint o_texel;
#else
layout(binding = IBRR_T_GATHER_SEEN) uniform sampler2D u_seen;
layout(location = 0) out vec4 o_radiance;
#endif

void main() {
  ivec2 texel = clamp(ivec2(floor(v_lightmapUv)), ivec2(0), textureSize(u_seen, 0) - 1);
#ifdef GATHER_TEXEL_IDS
  int id = texelFetch(u_seen, texel, 0).r;
  o_texel = gl_FrontFacing && id >= 0 ? uint(id) + 1u : 0u;
#else
  o_radiance = gl_FrontFacing ? vec4(texelFetch(u_seen, texel, 0).rgb, 1.0) : vec4(0.0);
#endif
}
