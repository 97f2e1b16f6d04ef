#version 450 core
#extension GL_ARB_shader_viewport_layer_array : require
// The faces of a batch of hemicubes, drawn in one pass (gpu/hemicube.hpp, gpu::SceneRenderer::drawViews): every
// command of the draw carries its face as its baseInstance, which reaches this shader as the instanced attribute
// a_view. The face sends its triangles to its hemicube's slot of the atlas (gl_Layer) and to its rows of the
// slot (gl_ViewportIndex); the vertex is transformed as scene.vert transforms it.
#include "scene_uniforms.glsl"

layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = IBRR_A_VIEW) in uint a_view;  // the face within the batch

struct HemicubeFaceDraw {
  mat4 viewProjection;  // world → the face's clip space
  int hemicube;         // the batch's hemicube it belongs to (HemicubeSources)
  int layer;            // the hemicube's slot: its layer of the atlas
  int viewport;         // the viewport of its rows in the slot
  int unused;
};
layout(std430, binding = IBRR_B_HEMICUBE_FACES) readonly buffer HemicubeFaces { HemicubeFaceDraw b_faces[]; };
struct HemicubeSourceDraw {
  vec4 centreCoverage;  // xyz: the VPL's position (the render centre), world units; w: the coverage mark, ≥ 1
  vec4 axis;            // xyz: surface normal / spot axis, unit
  vec2 spotCos;         // cos of the inner and outer cone half-angles
  int profile;          // 0 Lambertian surface, 1 isotropic point, 2 spot
  int unused;
};
layout(std430, binding = IBRR_B_HEMICUBE_SOURCES) readonly buffer HemicubeSources { HemicubeSourceDraw b_sources[]; };

// The hemicube's VPL travels to hemicube.frag as flat values: read there from b_sources, it was read after the
// draw call had returned on llvmpipe, which shades fragments later, and the next pass's upload had replaced it.
out VertexData {
  vec3 worldPosition;
  vec3 worldNormal;
  flat vec4 centreCoverage;
  flat vec3 axis;
  flat vec2 spotCos;
  flat int profile;
} v_out;

void main() {
  HemicubeFaceDraw face = b_faces[a_view];
  vec4 world = u_objectToWorld * vec4(a_position, 1.0);
  v_out.worldPosition = world.xyz;
  v_out.worldNormal = mat3(u_normalToWorld) * a_normal;
  HemicubeSourceDraw source = b_sources[face.hemicube];
  v_out.centreCoverage = source.centreCoverage;
  v_out.axis = source.axis.xyz;
  v_out.spotCos = source.spotCos;
  v_out.profile = source.profile;
  gl_Position = face.viewProjection * world;
  gl_Layer = face.layer;
  gl_ViewportIndex = face.viewport;
}
