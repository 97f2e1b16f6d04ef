#version 450 core
// Stochastic iteration, the shooters (seed 000 §3.1 on the GPU): invocation s descends the sum
// pyramid from its top with the target u = ξ_s · Φ (ξ_s uniform in [0, 1)): at each level it walks
// the up to four children in a fixed order, keeps the one whose running sum first exceeds u and
// subtracts the sums before it. It ends at texel j with probability P_j = lum(L_j) A_j / Φ
// (L = L_src, the shooting source) and shoots j's cluster c (a block of texels of one chart,
// shooting.hpp), which is so drawn with probability P_c = Σ_{j∈c} P_j. It writes the shot: c, P_c
// and the radiance it carries, the 1/p of the random operator (eq. 3) shared by the S shooters,
//   L_shot,c = (Σ_{j∈c} L_j A_j / A_c) / (P_c · S)          (W·sr⁻¹·m⁻², the cluster's far field)
//   L_shot,j = L_j / (P_c · S)  for each member j            (its near field)
// Over the draw, Σ_c P_c · (L_c / P_c) = Σ_c L_c: each cluster shoots all of its light once in
// expectation, so E[T* L] = T L for the clustered kernel.
layout(local_size_x = 64) in;

#include "interface.glsl"
#include "lightmap_shoot.glsl"

layout(std430, binding = IBRR_B_STOCHASTIC_RECEIVERS) readonly buffer Receivers { Receiver u_receiver[]; };
layout(std430, binding = IBRR_B_STOCHASTIC_RADIANCE) readonly buffer Source { vec4 u_radiance[]; };  // the shooting source L_src per valid texel
layout(std430, binding = IBRR_B_STOCHASTIC_PYRAMID) readonly buffer Pyramid { float u_pyramid[]; };
layout(std430, binding = IBRR_B_STOCHASTIC_COMPACT_OF) readonly buffer CompactOf { uint u_compactOf[]; };  // per atlas texel
layout(std430, binding = IBRR_B_STOCHASTIC_LEVELS) readonly buffer Levels { uvec4 u_level[]; };  // offset, width, height, -
layout(std430, binding = IBRR_B_STOCHASTIC_RANDOM) readonly buffer Random { float u_random[]; };  // ξ_s
struct Shot {
  uint cluster;        // c
  float probability;   // P_c
  uint first;          // c's first entry in ClusterTexels
  uint count;          // its texels
  vec4 radiance;       // L_shot,c
};
layout(std430, binding = IBRR_B_STOCHASTIC_SHOTS) writeonly buffer Shots { Shot u_shot[]; };
layout(std430, binding = IBRR_B_STOCHASTIC_CLUSTER_FIRST) readonly buffer ClusterFirst { uint u_clusterFirst[]; };  // C + 1 offsets
layout(std430, binding = IBRR_B_STOCHASTIC_CLUSTER_TEXELS) readonly buffer ClusterTexels { uint u_clusterTexel[]; };
layout(std430, binding = IBRR_B_STOCHASTIC_MEMBER_SHOTS) writeonly buffer MemberShots { vec4 u_memberShot[]; };  // S × u_maxMembers

layout(location = IBRR_U_STOCHASTIC_SELECT_SHOOTERS) uniform uint u_shooters;    // S
layout(location = IBRR_U_STOCHASTIC_SELECT_LEVELS) uniform uint u_levels;      // pyramid levels, the atlas (level 0) included
layout(location = IBRR_U_STOCHASTIC_SELECT_MAX_MEMBERS) uniform uint u_maxMembers;  // the largest cluster's texels

const vec3 kLuminance = vec3(0.2126, 0.7152, 0.0722);

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
  uint j = u_compactOf[cell.y * u_level[0].y + cell.x];
  uint c = u_receiver[j].chartShooter.y;
  uint first = u_clusterFirst[c], count = u_clusterFirst[c + 1u] - first;
  float power = 0.0, area = 0.0;
  vec3 radianceArea = vec3(0.0);
  for (uint k = 0u; k < count; ++k) {
    uint t = u_clusterTexel[first + k];
    float a = u_receiver[t].positionArea.w;
    vec3 l = max(u_radiance[t].rgb, vec3(0.0));
    power += dot(kLuminance, l) * a;
    radianceArea += l * a;
    area += a;
  }
  float probability = power / total;
  float weight = 1.0 / (probability * float(u_shooters));
  u_shot[s] = Shot(c, probability, first, count, vec4(radianceArea / area * weight, 0.0));
  for (uint k = 0u; k < count; ++k)
    u_memberShot[s * u_maxMembers + k] = vec4(max(u_radiance[u_clusterTexel[first + k]].rgb, vec3(0.0)) * weight, 0.0);
}
