#version 450 core
// Transforms scene vertices to world space and clip space; shared by the passes that draw the
// scene with a camera or a hemicube face.
#include "scene_uniforms.glsl"

layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_texcoord;

out VertexData {
  vec3 worldPosition;
  vec3 worldNormal;
  vec2 texcoord;
} v_out;

void main() {
  vec4 world = u_objectToWorld * vec4(a_position, 1.0);
  v_out.worldPosition = world.xyz;
  v_out.worldNormal = mat3(u_normalToWorld) * a_normal;
  v_out.texcoord = a_texcoord;
  gl_Position = u_viewProjection * world;
}
