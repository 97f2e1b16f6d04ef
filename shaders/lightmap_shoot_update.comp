#version 450 core
// Progressive refinement, one shot's receivers (GPU Gems 2 ch. 39, listings 39-3 and 39-4) in one
// pass over every valid texel r:
//   ΔL_r = ρ_r · ΔL_c · A_c · max(cosθ_r cosθ_c, 0) / (π d² + A_c) · V(r)      (W·sr⁻¹·m⁻²)
// the disc form factor from r to the shooting cluster c (area A_c scene units², residual radiance
// ΔL_c, at distance d), added to L_r and to the residual ΔL_r. V(r): r's direction in the
// hemisphere buffer shows r's own chart (a flat chart cannot hide itself) or a surface no nearer
// than r, within a pixel's depth slope. (lightmap_shoot_zero.comp then zeroes the cluster.)
//
// Near field: the disc formula's A_c in the denominator caps F next to the shooter but loses
// energy there (a receiver beside a cluster at a room's corner sees it at up to 90°; one shot of a
// 6×6-texel cluster in a box delivered 82% of its power). Receivers closer than u_nearRadius use
// instead the sum over the cluster's texels of texelFormFactor() (lightmap_shoot.glsl: next to a
// texel its exact polygon form factor, farther its own disc formula).
layout(local_size_x = 64) in;

#include "interface.glsl"
#include "lightmap_shoot.glsl"

layout(std430, binding = IBRR_B_SHOOT_RECEIVERS) readonly buffer Receivers { Receiver u_receiver[]; };
layout(std430, binding = IBRR_B_SHOOT_RESIDUAL) buffer Residual { vec4 u_residual[]; };  // ΔL per valid texel
layout(std430, binding = IBRR_B_SHOOT_CLUSTER_RESIDUAL) readonly buffer ClusterResidual { vec4 u_clusterResidual[]; };
layout(std430, binding = IBRR_B_SHOOT_RADIANCE) buffer Radiance { vec4 u_radiance[]; };  // L per valid texel
layout(std430, binding = IBRR_B_SHOOT_RESULT) readonly buffer Result { float u_maxPower; uint u_cluster; };
layout(std430, binding = IBRR_B_SHOOT_CLUSTER_FIRST) readonly buffer ClusterFirst { uint u_clusterFirst[]; };
layout(std430, binding = IBRR_B_SHOOT_CLUSTER_TEXELS) readonly buffer ClusterTexels { uint u_clusterTexel[]; };
layout(std430, binding = IBRR_B_SHOOT_AXES) readonly buffer Axes { TexelAxes u_axes[]; };

#ifdef RECORD_SHOT
// Adaptive subdivision: each receiver's ΔL of this shot, so that a leaf split after the shot can
// take it back from its children and give them their own (the buffer is cleared before the shot).
layout(std430, binding = IBRR_B_SHOOT_LAST_SHOT) buffer LastShot { vec4 u_lastShot[]; };
#endif
#ifdef SUBSET
// Only these receivers (the children of a split, taking the shot again at their own size).
layout(std430, binding = IBRR_B_SHOOT_SUBSET) readonly buffer Subset { uint u_subset[]; };
#endif

layout(binding = IBRR_T_SHOOT_HEMISPHERE) uniform sampler2DArray u_hemisphere;  // RG32F: distance, chart (layer 0)

layout(location = IBRR_U_SHOOT_SHOOTER) uniform vec3 u_shooter;     // centroid of the cluster (scene units)
layout(location = IBRR_U_SHOOT_TO_SHOOTER) uniform mat3 u_toShooter;   // rows: tangent, bitangent, normal
layout(location = IBRR_U_SHOOT_COUNT) uniform uint u_count;       // valid texels (elements; SUBSET: the subset's)
layout(location = IBRR_U_SHOOT_AREA) uniform float u_area;       // A_c
layout(location = IBRR_U_SHOOT_DEPTH_EPSILON) uniform float u_depthEpsilon;  // absolute slack of the depth test (scene units)
layout(location = IBRR_U_SHOOT_NEAR_RADIUS) uniform float u_nearRadius;    // exact per-texel form factors below this distance

void main() {
  if (gl_GlobalInvocationID.x >= u_count) return;
#ifdef SUBSET
  uint r = u_subset[gl_GlobalInvocationID.x];
#else
  uint r = gl_GlobalInvocationID.x;
#endif
  Receiver receiver = u_receiver[r];
  if (receiver.chartShooter.y == u_cluster) return;
  vec3 toReceiver = receiver.positionArea.xyz - u_shooter;
  float d2 = dot(toReceiver, toReceiver);
  float d = sqrt(d2);
  vec3 local = u_toShooter * toReceiver / max(d, 1e-30);  // unit direction in the shooter's frame
  float cosShooter = local.z;
  float cosReceiver = -dot(receiver.normal.xyz, toReceiver) / max(d, 1e-30);
  if (cosShooter <= 0.0 || cosReceiver <= 0.0) return;

  ivec2 size = textureSize(u_hemisphere, 0).xy;
  vec2 seen = texelFetch(u_hemisphere, ivec3(hemispherePixel(local, size), 0), 0).rg;
  if (!visibleFromShooter(seen, receiver.chartShooter.x, d, cosShooter, cosReceiver, float(size.x), u_depthEpsilon))
    return;

  vec3 incident;  // Σ_s F_s ΔL_s: the irradiance over π
  if (d >= u_nearRadius) {
    float formFactor = u_area * cosShooter * cosReceiver / (kPi * d2 + u_area);
    incident = u_clusterResidual[u_cluster].rgb * formFactor;
  } else {
    incident = vec3(0.0);
    for (uint i = u_clusterFirst[u_cluster]; i < u_clusterFirst[u_cluster + 1u]; ++i) {
      uint s = u_clusterTexel[i];
      incident += u_residual[s].rgb * texelFormFactor(receiver.positionArea.xyz, receiver.normal.xyz, u_receiver[s], u_axes[s]);
    }
  }
  vec3 delta = receiver.albedo.rgb * incident;
  u_radiance[r].rgb += delta;
  u_residual[r].rgb += delta;
#ifdef RECORD_SHOT
  u_lastShot[r] = vec4(delta, 0.0);
#endif
}
