#version 450 core
// Progressive refinement, next shooter (GPU Gems 2 ch. 39 §39.2.3, as a compute reduction instead
// of the chapter's z-buffer sort). Stage 1 (one invocation per cluster): a cluster's residual
// radiance ΔL_c = Σ ΔL_s A_s / A_c (W·sr⁻¹·m⁻²) and power Φ_c = π · mean_rgb(ΔL_c) · A_c, then per
// workgroup the largest Φ_c (and its cluster) and the sum of Φ_c. Stage 2 (FINAL_STAGE, one
// workgroup) reduces the workgroups' partials to one record: 16 bytes for the CPU to read back.
// Ties keep the lower cluster index, so a run is deterministic.
layout(local_size_x = 256) in;

#include "interface.glsl"

struct Choice {
  float maxPower;
  uint cluster;
  float totalPower;
  float unused;
};
layout(std430, binding = IBRR_B_SHOOT_PARTIALS) buffer Partials { Choice u_partial[]; };
layout(std430, binding = IBRR_B_SHOOT_RESULT) buffer Result { Choice u_result; };

layout(location = IBRR_U_SHOOT_SELECT_COUNT) uniform uint u_count;  // clusters (stage 1) or partials (stage 2)

shared float s_max[256];
shared uint s_index[256];
shared float s_sum[256];

#ifndef FINAL_STAGE
#include "lightmap_shoot.glsl"
layout(std430, binding = IBRR_B_SHOOT_RECEIVERS) readonly buffer Receivers { Receiver u_receiver[]; };
layout(std430, binding = IBRR_B_SHOOT_RESIDUAL) readonly buffer Residual { vec4 u_residual[]; };  // ΔL per valid texel
layout(std430, binding = IBRR_B_SHOOT_CLUSTER_FIRST) readonly buffer ClusterFirst { uint u_clusterFirst[]; };  // C + 1 offsets
layout(std430, binding = IBRR_B_SHOOT_CLUSTER_TEXELS) readonly buffer ClusterTexels { uint u_clusterTexel[]; };
layout(std430, binding = IBRR_B_SHOOT_CLUSTER_RESIDUAL) writeonly buffer ClusterResidual { vec4 u_clusterResidual[]; };  // (ΔL_c, Φ_c)
#endif

void main() {
  uint thread = gl_LocalInvocationIndex;
  float best = -1.0;
  uint bestIndex = 0xffffffffu;
  float sum = 0.0;
#ifndef FINAL_STAGE
  uint cluster = gl_GlobalInvocationID.x;
  if (cluster < u_count) {
    vec3 weighted = vec3(0.0);
    float area = 0.0;
    for (uint i = u_clusterFirst[cluster]; i < u_clusterFirst[cluster + 1u]; ++i) {
      uint t = u_clusterTexel[i];
      float a = u_receiver[t].positionArea.w;
      weighted += u_residual[t].rgb * a;
      area += a;
    }
    vec3 residual = weighted / max(area, 1e-30);
    float power = 3.14159265358979 * (weighted.r + weighted.g + weighted.b) / 3.0;
    u_clusterResidual[cluster] = vec4(residual, power);
    best = power;
    bestIndex = cluster;
    sum = power;
  }
#else
  for (uint i = thread; i < u_count; i += 256u) {
    Choice c = u_partial[i];
    if (c.maxPower > best || (c.maxPower == best && c.cluster < bestIndex)) {
      best = c.maxPower;
      bestIndex = c.cluster;
    }
    sum += c.totalPower;
  }
#endif
  s_max[thread] = best;
  s_index[thread] = bestIndex;
  s_sum[thread] = sum;
  barrier();
  for (uint stride = 128u; stride > 0u; stride >>= 1u) {
    if (thread < stride) {
      float other = s_max[thread + stride];
      uint otherIndex = s_index[thread + stride];
      if (other > s_max[thread] || (other == s_max[thread] && otherIndex < s_index[thread])) {
        s_max[thread] = other;
        s_index[thread] = otherIndex;
      }
      s_sum[thread] += s_sum[thread + stride];
    }
    barrier();
  }
  if (thread == 0u) {
    Choice c = Choice(s_max[0], s_index[0], s_sum[0], 0.0);
#ifndef FINAL_STAGE
    u_partial[gl_WorkGroupID.x] = c;
#else
    u_result = c;
#endif
  }
}
