#version 450 core
// Stochastic iteration, the second pass (seed 000 §3.2) in one compute pass over every valid texel
// x, for the S shots of the iteration at once (shot s: cluster c, lightmap_stochastic_select.comp):
//   (T* L_src)(x) = ρ_x Σ_s L_shot,c · F(x → c) · V(x, c's centroid)
// F: beyond kNearFieldSides·√A_c of the centroid the disc formula A_c cosθ_x cosθ_c / (π d² + A_c),
// nearer the sum over c's texels of texelFormFactor() · L_shot,j — progressive refinement's kernel
// for the same clusters; V: the shot's hemisphere layer (lightmap_shoot.glsl). Then the running
// average, in place (the shots carry their own radiance, so no invocation reads another's):
//   L_m = L_e + T* L_src,   L̃_m = L_m / n + (1 − 1/n) L̃_{m−1}   (n: the iterates averaged, m or m − W)
// where the shooting source L_src is L̃_{m−1} (the paper's eq. 2) or the last iterate L_{m−1},
// which this pass then also stores (stochastic.hpp, StochasticShootFrom).
layout(local_size_x = 64) in;

#include "interface.glsl"
#include "lightmap_shoot.glsl"

layout(std430, binding = IBRR_B_STOCHASTIC_RECEIVERS) readonly buffer Receivers { Receiver u_receiver[]; };
layout(std430, binding = IBRR_B_STOCHASTIC_RADIANCE) buffer Radiance { vec4 u_radiance[]; };  // L̃ per valid texel
layout(std430, binding = IBRR_B_STOCHASTIC_ITERATE) buffer Iterate { vec4 u_iterate[]; };   // L_m per valid texel
layout(std430, binding = IBRR_B_STOCHASTIC_AXES) readonly buffer Axes { TexelAxes u_axes[]; };
layout(std430, binding = IBRR_B_STOCHASTIC_EMISSION) readonly buffer Emission { vec4 u_emission[]; };  // L_e per valid texel
struct Shot {
  uint cluster;       // c
  float probability;  // P_c
  uint first;         // c's first entry in ClusterTexels
  uint count;         // its texels
  vec4 radiance;      // L_shot,c
};
layout(std430, binding = IBRR_B_STOCHASTIC_SHOTS) readonly buffer Shots { Shot u_shot[]; };
struct ShotFrame {
  vec4 position;  // the cluster's centroid (scene units), its area A_c (scene units²)
  vec4 tangent;   // rows of the frame the hemisphere was rendered in: tangent, bitangent, normal
  vec4 bitangent;
  vec4 normal;
};
layout(std430, binding = IBRR_B_STOCHASTIC_FRAMES) readonly buffer ShotFrames { ShotFrame u_frame[]; };

layout(std430, binding = IBRR_B_STOCHASTIC_CLUSTER_TEXELS) readonly buffer ClusterTexels { uint u_clusterTexel[]; };
layout(std430, binding = IBRR_B_STOCHASTIC_MEMBER_SHOTS) readonly buffer MemberShots { vec4 u_memberShot[]; };  // S × u_maxMembers, L_shot,j

layout(binding = IBRR_T_STOCHASTIC_HEMISPHERE) uniform sampler2DArray u_hemisphere;  // RG32F distance, chart; layer s = shooter s

layout(location = IBRR_U_STOCHASTIC_COUNT) uniform uint u_count;          // valid texels
layout(location = IBRR_U_STOCHASTIC_SHOOTERS) uniform uint u_shooters;       // S
layout(location = IBRR_U_STOCHASTIC_ITERATION) uniform float u_iteration;     // n: the iterates in the average, this one included
layout(location = IBRR_U_STOCHASTIC_DEPTH_EPSILON) uniform float u_depthEpsilon;  // absolute slack of the depth test (scene units)
layout(location = IBRR_U_STOCHASTIC_NEAR_FIELD_SIDES) uniform float u_nearFieldSides;
layout(location = IBRR_U_STOCHASTIC_STORE_ITERATE) uniform bool u_storeIterate;  // the last iterate is the shooting source
layout(location = IBRR_U_STOCHASTIC_MAX_MEMBERS) uniform uint u_maxMembers;    // the largest cluster's texels

void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= u_count) return;
  Receiver receiver = u_receiver[r];
  ivec2 size = textureSize(u_hemisphere, 0).xy;
  vec3 incident = vec3(0.0);  // Σ_s F_s L_shot,s: the irradiance over π
  for (uint s = 0u; s < u_shooters; ++s) {
    Shot shot = u_shot[s];
    if (receiver.chartShooter.y == shot.cluster) continue;
    ShotFrame frame = u_frame[s];
    vec3 toReceiver = receiver.positionArea.xyz - frame.position.xyz;
    float d2 = dot(toReceiver, toReceiver);
    float d = sqrt(d2);
    vec3 direction = toReceiver / max(d, 1e-30);
    vec3 local = vec3(dot(frame.tangent.xyz, direction), dot(frame.bitangent.xyz, direction),
                      dot(frame.normal.xyz, direction));  // unit direction in the shooter's frame
    float cosShooter = local.z;
    float cosReceiver = -dot(receiver.normal.xyz, direction);
    if (cosShooter <= 0.0 || cosReceiver <= 0.0) continue;
    vec2 seen = texelFetch(u_hemisphere, ivec3(hemispherePixel(local, size), int(s)), 0).rg;
    if (!visibleFromShooter(seen, receiver.chartShooter.x, d, cosShooter, cosReceiver, float(size.x), u_depthEpsilon))
      continue;
    float area = frame.position.w;
    if (d >= u_nearFieldSides * sqrt(area)) {
      incident += shot.radiance.rgb * (area * cosShooter * cosReceiver / (kPi * d2 + area));
    } else {
      for (uint k = 0u; k < shot.count; ++k) {
        uint t = u_clusterTexel[shot.first + k];
        incident += u_memberShot[s * u_maxMembers + k].rgb *
                    texelFormFactor(receiver.positionArea.xyz, receiver.normal.xyz, u_receiver[t], u_axes[t]);
      }
    }
  }
  vec3 estimate = u_emission[r].rgb + receiver.albedo.rgb * incident;  // L_m = L_e + T* L_src
  u_radiance[r].rgb = estimate / u_iteration + (1.0 - 1.0 / u_iteration) * u_radiance[r].rgb;
  if (u_storeIterate) u_iterate[r] = vec4(estimate, 0.0);
}
