#version 450 core
// Stochastic iteration, the selection pyramid's base (seed 000 §3.1): per valid texel i at atlas
// texel t the luminance of its radiated power, lum(L_src,i) · A_i (Rec. 709 luminance of the shooting
// source, L̃ or the last iterate, times the texel's area; W/π per unit of luminance). Invalid texels stay 0.
layout(local_size_x = 64) in;

#include "interface.glsl"
#include "lightmap_shoot.glsl"

layout(std430, binding = IBRR_B_STOCHASTIC_RECEIVERS) readonly buffer Receivers { Receiver u_receiver[]; };
layout(std430, binding = IBRR_B_STOCHASTIC_RADIANCE) readonly buffer Source { vec4 u_radiance[]; };  // the shooting source L_src per valid texel
layout(std430, binding = IBRR_B_STOCHASTIC_PYRAMID) writeonly buffer Pyramid { float u_pyramid[]; };  // level 0 first
layout(std430, binding = IBRR_B_STOCHASTIC_ATLAS_TEXEL) readonly buffer AtlasTexel { uint u_atlasTexel[]; };  // per valid texel

layout(location = IBRR_U_STOCHASTIC_POWER_COUNT) uniform uint u_count;  // valid texels

const vec3 kLuminance = vec3(0.2126, 0.7152, 0.0722);

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= u_count) return;
  u_pyramid[u_atlasTexel[i]] = dot(kLuminance, max(u_radiance[i].rgb, vec3(0.0))) * u_receiver[i].positionArea.w;
}
