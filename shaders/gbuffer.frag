#version 450 core
// Camera G-buffer: world position, shading normal (facing the viewer), albedo and emission, each
// in an RGBA32F target. Alpha of the position target marks covered pixels (1) from background (0).
#include "scene_uniforms.glsl"

in VertexData {
  vec3 worldPosition;
  vec3 worldNormal;
  vec2 texcoord;
} v_in;

layout(location = IBRR_U_GBUFFER_EYE) uniform vec3 u_eye;  // camera position, world units

layout(location = 0) out vec4 o_position;
layout(location = 1) out vec4 o_normal;
layout(location = 2) out vec4 o_albedo;
layout(location = 3) out vec4 o_emission;

void main() {
  vec3 normal = normalize(v_in.worldNormal);
  // Surfaces are two-sided for reflection: the normal on the side the camera sees (the winding
  // decides, and a shading normal that disagrees with it is turned towards the eye). The hemicube
  // pass applies the same rule towards the VPL, so that both find the same store layers.
  // Emission is one-sided: front faces only.
  if (!gl_FrontFacing) normal = -normal;
  if (dot(normal, u_eye - v_in.worldPosition) < 0.0) normal = -normal;
  vec3 albedo = u_albedo;
  if (u_hasAlbedoTexture != 0) albedo *= texture(u_albedoTexture, v_in.texcoord, u_textureLodBias).rgb;
  o_position = vec4(v_in.worldPosition, 1.0);
  o_normal = vec4(normal, float(u_materialIndex));
  o_albedo = vec4(albedo, 1.0);
  o_emission = vec4(gl_FrontFacing ? u_emission : vec3(0.0), 1.0);
}
