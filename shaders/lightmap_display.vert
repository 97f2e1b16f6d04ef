#version 450 core
// The atlas triangles from a camera, carrying normalised lightmap UVs and the mesh's texture
// coordinates (for the albedo texture). The atlas is in world space: u_objectToWorld is unused.
#include "scene_uniforms.glsl"

layout(location = 0) in vec3 a_position;  // world
layout(location = 2) in vec2 a_lightmapUv;  // texel units
layout(location = 4) in vec2 a_texcoord;

layout(location = IBRR_U_LIGHTMAP_ATLAS_SIZE) uniform vec2 u_atlasSize;  // texels

out vec2 v_lightmapUv;  // normalised: texel (x, y) has its centre at ((x + ½)/width, (y + ½)/height)
out vec2 v_texcoord;

void main() {
  v_lightmapUv = a_lightmapUv / u_atlasSize;
  v_texcoord = a_texcoord;
  gl_Position = u_viewProjection * vec4(a_position, 1.0);
}
