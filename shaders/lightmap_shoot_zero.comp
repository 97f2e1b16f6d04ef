#version 450 core
// Progressive refinement, end of a shot: the shooting cluster has shot all of its residual, so its
// texels' ΔL become 0 (a pass apart, because the update pass reads them in the near field).
layout(local_size_x = 64) in;

#include "interface.glsl"

layout(std430, binding = IBRR_B_SHOOT_RESIDUAL) buffer Residual { vec4 u_residual[]; };
layout(std430, binding = IBRR_B_SHOOT_CLUSTER_FIRST) readonly buffer ClusterFirst { uint u_clusterFirst[]; };
layout(std430, binding = IBRR_B_SHOOT_RESULT) readonly buffer Result { float u_maxPower; uint u_cluster; };
layout(std430, binding = IBRR_B_SHOOT_CLUSTER_TEXELS) readonly buffer ClusterTexels { uint u_clusterTexel[]; };

void main() {
  uint i = u_clusterFirst[u_cluster] + gl_GlobalInvocationID.x;
  if (i < u_clusterFirst[u_cluster + 1u]) u_residual[u_clusterTexel[i]] = vec4(0.0);
}
