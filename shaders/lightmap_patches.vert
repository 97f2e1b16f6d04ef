#version 450 core
// The atlas triangles drawn in UV space: lightmap UV in texel units maps to window coordinates
// one to one (viewport = width × height), so fragment (x, y) is atlas texel (x, y) and the
// rasteriser's coverage rule selects the texels whose centre lies inside a triangle.
#include "interface.glsl"

layout(location = 2) in vec2 a_lightmapUv;  // texel units

layout(location = IBRR_U_PATCHES_ATLAS_SIZE) uniform vec2 u_atlasSize;  // width, height in texels

void main() {
  gl_Position = vec4(a_lightmapUv / u_atlasSize * 2.0 - 1.0, 0.0, 1.0);
}
