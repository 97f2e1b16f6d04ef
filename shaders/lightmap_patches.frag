#version 450 core
// Marks each covered atlas texel with the atlas triangle that covers its centre (index + 1; 0 =
// none). Triangle i of the draw is atlas triangle i, so gl_PrimitiveID is the index. Where
// triangles of a chart overlap in UV, the depth test keeps the one whose normal agrees best with
// the chart's plane (its depth, (1 − n·n_chart)/2, comes per triangle).
#include "interface.glsl"

layout(std430, binding = IBRR_B_PATCHES_TRIANGLE_DEPTH) readonly buffer TriangleDepth {
  float triangleDepth[];
};

layout(location = 0) out uint o_triangle;

void main() {
  o_triangle = uint(gl_PrimitiveID) + 1u;
  gl_FragDepth = triangleDepth[gl_PrimitiveID];
}
