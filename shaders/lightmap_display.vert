#version 450 core
// The atlas triangles from a camera, carrying normalised lightmap UVs.
layout(location = 0) in vec3 a_position;  // world
layout(location = 2) in vec2 a_lightmapUv;  // texel units
layout(location = 3) in uint a_material;

layout(location = 16) uniform mat4 u_viewProjection;
layout(location = 17) uniform vec2 u_atlasSize;  // texels

out vec2 v_lightmapUv;  // normalised: texel (x, y) has its centre at ((x + ½)/width, (y + ½)/height)
flat out uint v_material;

void main() {
  v_lightmapUv = a_lightmapUv / u_atlasSize;
  v_material = a_material;
  gl_Position = u_viewProjection * vec4(a_position, 1.0);
}
