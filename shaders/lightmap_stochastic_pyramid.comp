#version 450 core
// Stochastic iteration, one level of the selection pyramid (the paper's mipmap, as sums): cell
// (x, y) of level k + 1 holds the sum of the up to four cells (2x + dx, 2y + dy) of level k that
// lie inside it, so every level sums to Φ = Σ lum(L_src) A and the top (1 × 1) is Φ. Levels of any
// size (ceil halving), so the atlas need not be a power of two.
layout(local_size_x = 8, local_size_y = 8) in;

#include "interface.glsl"

layout(std430, binding = IBRR_B_STOCHASTIC_PYRAMID) buffer Pyramid { float u_pyramid[]; };

layout(location = IBRR_U_STOCHASTIC_PYRAMID_INPUT) uniform uvec3 u_input;   // offset, width, height of level k
layout(location = IBRR_U_STOCHASTIC_PYRAMID_OUTPUT) uniform uvec3 u_output;  // the same of level k + 1

void main() {
  uvec2 cell = gl_GlobalInvocationID.xy;
  if (cell.x >= u_output.y || cell.y >= u_output.z) return;
  float sum = 0.0;
  for (uint dy = 0u; dy < 2u; ++dy) {
    for (uint dx = 0u; dx < 2u; ++dx) {
      uvec2 child = 2u * cell + uvec2(dx, dy);
      if (child.x < u_input.y && child.y < u_input.z) sum += u_pyramid[u_input.x + child.y * u_input.y + child.x];
    }
  }
  u_pyramid[u_output.x + cell.y * u_output.y + cell.x] = sum;
}
