#version 450 core
// Pixel radiance L = L_e (front faces) + ρ(pixel) · H, where H is the lightmap's incident radiance
// (irradiance / π, W·sr⁻¹·m⁻²), bilinearly filtered (the atlas is dilated into its padding, so
// filtering near chart edges reads the chart's own values), and ρ(pixel) is the material's albedo
// times its texture at this pixel. A texel of the lightmap averages ρ over its square; multiplying
// here instead brings back every detail of the albedo texture and of the emitters smaller than a
// texel, whatever the lightmap's density. Emitters emit from the front only.
#include "scene_uniforms.glsl"

in vec2 v_lightmapUv;
in vec2 v_texcoord;

layout(binding = IBRR_T_LIGHTMAP_INCIDENT) uniform sampler2D u_incidentRadiance;

layout(location = 0) out vec4 o_radiance;

void main() {
  vec3 albedo = u_albedo;
  if (u_hasAlbedoTexture != 0) albedo *= texture(u_albedoTexture, v_texcoord, u_textureLodBias).rgb;
  vec3 incident = texture(u_incidentRadiance, v_lightmapUv).rgb;
  o_radiance = vec4((gl_FrontFacing ? u_emission : vec3(0.0)) + albedo * incident, 1.0);
}
