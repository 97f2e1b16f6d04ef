#version 450 core
#extension GL_ARB_shader_viewport_layer_array : require
// Hemicubes of the gathering solver, many per draw (Tjahyono et al. §IV.B): a command of the batch's
// multi-draw draws one chunk of the atlas triangles for face slot mod 5 of hemicube slot / 5
// (a_slot: an instanced attribute, so the command's baseInstance selects it), routed to
// texture-array layer slot / 5 (gl_Layer) and to the viewport of that face in the layer
// (gl_ViewportIndex: the front face in rows [0, H), the four half faces H/2 rows each above it).

#include "interface.glsl"

layout(location = 0) in vec3 a_position;     // world space
layout(location = 2) in vec2 a_lightmapUv;   // texel units
layout(location = 4) in uint a_slot;         // 5 · hemicube + face within the batch

// World → clip for every face of the batch's hemicubes: 5 per hemicube, in hemicube order, from
// entry u_firstEntry of the bound range.
layout(std430, binding = IBRR_B_GATHER_FACE_MATRICES) readonly buffer FaceMatrices { mat4 u_faceViewProjection[]; };
layout(location = IBRR_U_GATHER_FIRST_ENTRY) uniform int u_firstEntry;

out vec2 v_lightmapUv;

// The radiance and the texel-id programs must rasterise identically (the Gauss–Seidel check
// compares them pixel for pixel).
invariant gl_Position;

void main() {
  int hemicube = int(a_slot) / 5;
  int face = int(a_slot) - 5 * hemicube;
  gl_Position = u_faceViewProjection[u_firstEntry + 5 * hemicube + face] * vec4(a_position, 1.0);
  gl_Layer = hemicube;
  gl_ViewportIndex = face;
  v_lightmapUv = a_lightmapUv;
}
