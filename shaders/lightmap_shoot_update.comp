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
// instead the sum over the cluster's texels: next to a texel its exact point-to-polygon form factor
// (Lambert's formula) for the parallelogram P ± ½∂P/∂u ± ½∂P/∂v,
//   F_s = (1/2π) Σ_edges θ_k (n_r · γ_k),  γ_k = unit normal of the edge's plane through r,
// scaled by A_s / |∂P/∂u × ∂P/∂v| (the texel's share of its chart's area over its parallelogram's),
// farther its own disc formula.
layout(local_size_x = 64) in;

struct Receiver {
  vec4 positionArea;
  vec4 normal;
  vec4 albedo;
  uvec4 chartCluster;
};
layout(std430, binding = 0) readonly buffer Receivers { Receiver u_receiver[]; };
layout(std430, binding = 1) buffer Residual { vec4 u_residual[]; };  // ΔL per valid texel
layout(std430, binding = 6) readonly buffer ClusterResidual { vec4 u_clusterResidual[]; };
layout(std430, binding = 7) buffer Radiance { vec4 u_radiance[]; };  // L per valid texel
layout(std430, binding = 4) readonly buffer Result { float u_maxPower; uint u_cluster; };
layout(std430, binding = 2) readonly buffer ClusterFirst { uint u_clusterFirst[]; };
layout(std430, binding = 5) readonly buffer ClusterTexels { uint u_clusterTexel[]; };
struct TexelAxes {
  vec4 u;  // ∂P/∂u: world displacement per texel along the atlas x axis (scene units)
  vec4 v;  // ∂P/∂v
};
layout(std430, binding = 8) readonly buffer Axes { TexelAxes u_axes[]; };

layout(binding = 0) uniform sampler2D u_hemisphere;  // RG32F: distance, chart

layout(location = 0) uniform vec3 u_shooter;     // centroid of the cluster (scene units)
layout(location = 1) uniform mat3 u_toShooter;   // rows: tangent, bitangent, normal
layout(location = 3) uniform uint u_count;       // valid texels
layout(location = 4) uniform float u_area;       // A_c
layout(location = 5) uniform float u_depthEpsilon;  // absolute slack of the depth test (scene units)
layout(location = 6) uniform float u_nearRadius;    // exact per-texel form factors below this distance

const float kPi = 3.14159265358979;
// Within the near field, receivers closer to a cluster texel than 5 of its sides (d² < 25 A_s) take
// its exact polygon form factor, the others its own disc formula (under-estimate ≤ 1/(25π) = 1.3%
// on those texels' share, decaying as 1/d²).
const float kExactTexelSides2 = 25.0;

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= u_count) return;
  Receiver receiver = u_receiver[r];
  if (receiver.chartCluster.y == u_cluster) return;
  vec3 toReceiver = receiver.positionArea.xyz - u_shooter;
  float d2 = dot(toReceiver, toReceiver);
  float d = sqrt(d2);
  vec3 local = u_toShooter * toReceiver / max(d, 1e-30);  // unit direction in the shooter's frame
  float cosShooter = local.z;
  float cosReceiver = -dot(receiver.normal.xyz, toReceiver) / max(d, 1e-30);
  if (cosShooter <= 0.0 || cosReceiver <= 0.0) return;

  ivec2 size = textureSize(u_hemisphere, 0);
  ivec2 pixel = clamp(ivec2((local.xy * 0.5 + 0.5) * vec2(size)), ivec2(0), size - 1);
  vec2 seen = texelFetch(u_hemisphere, pixel, 0).rg;
  // A pixel spans 2/size in x, y: an angle of about 2/(size·cosθ_c) towards the horizon, over
  // which r's own surface moves in distance by d·angle/cosθ_r.
  float pixelAngle = 2.0 / (float(size.x) * max(cosShooter, 0.05));
  float slack = 1.5 * d * pixelAngle / max(cosReceiver, 0.05) + u_depthEpsilon;
  bool visible = (seen.y >= 0.0 && uint(seen.y) == receiver.chartCluster.x) || d <= seen.x + slack;
  if (!visible) return;

  vec3 incident;  // Σ_s F_s ΔL_s: the irradiance over π
  if (d >= u_nearRadius) {
    float formFactor = u_area * cosShooter * cosReceiver / (kPi * d2 + u_area);
    incident = u_clusterResidual[u_cluster].rgb * formFactor;
  } else {
    incident = vec3(0.0);
    vec3 p = receiver.positionArea.xyz;
    vec3 n = receiver.normal.xyz;
    for (uint i = u_clusterFirst[u_cluster]; i < u_clusterFirst[u_cluster + 1u]; ++i) {
      uint s = u_clusterTexel[i];
      Receiver texel = u_receiver[s];
      if (dot(p - texel.positionArea.xyz, texel.normal.xyz) <= 0.0) continue;  // behind the texel
      vec3 toTexel = texel.positionArea.xyz - p;
      float texelD2 = dot(toTexel, toTexel);
      float formFactor;
      if (texelD2 >= kExactTexelSides2 * texel.positionArea.w) {
        // Far from this texel: its own disc, as the chapter's per-element formula.
        float cosR = dot(n, toTexel), cosS = -dot(texel.normal.xyz, toTexel);
        formFactor = texel.positionArea.w * max(cosR * cosS, 0.0) / texelD2 / (kPi * texelD2 + texel.positionArea.w);
      } else {
        vec3 du = u_axes[s].u.xyz, dv = u_axes[s].v.xyz;
        vec3 corner[4] = vec3[4](texel.positionArea.xyz - 0.5 * du - 0.5 * dv, texel.positionArea.xyz + 0.5 * du - 0.5 * dv,
                                 texel.positionArea.xyz + 0.5 * du + 0.5 * dv, texel.positionArea.xyz - 0.5 * du + 0.5 * dv);
        float sum = 0.0;
        for (int k = 0; k < 4; ++k) {
          vec3 a = normalize(corner[k] - p), b = normalize(corner[(k + 1) & 3] - p);
          vec3 c = cross(a, b);
          float sinAngle = length(c);
          if (sinAngle > 1e-12) sum += atan(sinAngle, dot(a, b)) * dot(n, c / sinAngle);
        }
        float parallelogram = length(cross(du, dv));
        formFactor = abs(sum) / (2.0 * kPi) * texel.positionArea.w / max(parallelogram, 1e-30);
      }
      incident += u_residual[s].rgb * formFactor;
    }
  }
  vec3 delta = receiver.albedo.rgb * incident;
  u_radiance[r].rgb += delta;
  u_residual[r].rgb += delta;
}
