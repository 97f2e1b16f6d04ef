// Uniforms set by gpu::SceneRenderer for every draw (locations in interface.glsl).
#include "interface.glsl"
layout(location = IBRR_U_OBJECT_TO_WORLD) uniform mat4 u_objectToWorld;
layout(location = IBRR_U_NORMAL_TO_WORLD) uniform mat4 u_normalToWorld;   // inverse transpose of u_objectToWorld
layout(location = IBRR_U_VIEW_PROJECTION) uniform mat4 u_viewProjection;
layout(location = IBRR_U_ALBEDO) uniform vec3 u_albedo;          // linear diffuse reflectance ρ
layout(location = IBRR_U_EMISSION) uniform vec3 u_emission;        // emitted radiance L_e (front side only)
layout(location = IBRR_U_HAS_ALBEDO_TEXTURE) uniform int u_hasAlbedoTexture;
layout(location = IBRR_U_MATERIAL_INDEX) uniform int u_materialIndex;
// 0, or −log2 N while a frame supersampled by N is drawn: each sample then filters the texture over its own
// 1/N of a pixel, as a frame drawn at N times the size would.
layout(location = IBRR_U_TEXTURE_LOD_BIAS) uniform float u_textureLodBias;
layout(binding = IBRR_T_ALBEDO) uniform sampler2D u_albedoTexture;
