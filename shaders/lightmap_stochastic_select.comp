#version 450 core
// Stochastic iteration, the shooters (seed 000 §3.1 on the GPU): invocation s descends the sum
// pyramid from its top with the target u = ξ_s · Φ (ξ_s uniform in [0, 1)): at each level it walks
// the up to four children in a fixed order, keeps the one whose running sum first exceeds u and
// subtracts the sums before it. It ends at texel j with probability P_j = lum(L_src,j) A_j / Φ and
// writes the shot: j, P_j and the radiance each of the S shooters carries,
//   L_shot = L_src,j / (P_j · S)         (W·sr⁻¹·m⁻², the 1/p(y) of the random operator, eq. 3)
layout(local_size_x = 64) in;

layout(std430, binding = 3) readonly buffer Source { vec4 u_radiance[]; };  // the shooting source L_src per valid texel
layout(std430, binding = 4) readonly buffer Pyramid { float u_pyramid[]; };
layout(std430, binding = 6) readonly buffer CompactOf { uint u_compactOf[]; };  // per atlas texel
layout(std430, binding = 7) readonly buffer Levels { uvec4 u_level[]; };  // offset, width, height, -
layout(std430, binding = 8) readonly buffer Random { float u_random[]; };  // ξ_s
struct Shot {
  uint texel;          // valid-texel index j
  float probability;   // P_j
  uint unused0;
  uint unused1;
  vec4 radiance;       // L_shot
};
layout(std430, binding = 9) writeonly buffer Shots { Shot u_shot[]; };

layout(location = 0) uniform uint u_shooters;  // S
layout(location = 1) uniform uint u_levels;    // pyramid levels, the atlas (level 0) included

float cellValue(uint level, uvec2 cell) {
  uvec4 l = u_level[level];
  return u_pyramid[l.x + cell.y * l.y + cell.x];
}

void main() {
  uint s = gl_GlobalInvocationID.x;
  if (s >= u_shooters) return;
  float total = cellValue(u_levels - 1u, uvec2(0u));
  float u = u_random[s] * total;
  uvec2 cell = uvec2(0u);
  for (int level = int(u_levels) - 2; level >= 0; --level) {
    uvec4 l = u_level[level];
    uvec2 chosen = uvec2(0xffffffffu);
    uvec2 lastPositive = uvec2(0xffffffffu);
    float before = 0.0, lastBefore = 0.0;
    for (uint k = 0u; k < 4u; ++k) {
      uvec2 child = 2u * cell + uvec2(k & 1u, k >> 1u);
      if (child.x >= l.y || child.y >= l.z) continue;
      float v = cellValue(uint(level), child);
      if (v <= 0.0) continue;
      lastPositive = child;
      lastBefore = before;
      if (u < before + v) {
        chosen = child;
        break;
      }
      before += v;
    }
    if (chosen.x == 0xffffffffu) {  // u at or past the children's sum by rounding: the last one
      chosen = lastPositive;
      before = lastBefore;
    }
    u = clamp(u - before, 0.0, cellValue(uint(level), chosen));
    cell = chosen;
  }
  uvec4 base = u_level[0];
  uint j = u_compactOf[cell.y * base.y + cell.x];
  float probability = cellValue(0u, cell) / total;
  u_shot[s] = Shot(j, probability, 0u, 0u, vec4(u_radiance[j].rgb / (probability * float(u_shooters)), 0.0));
}
