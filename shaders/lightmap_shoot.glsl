// The receiver side of a shot, shared by progressive refinement (lightmap_shoot_update.comp) and
// stochastic iteration (lightmap_stochastic_update.comp): the valid texels' records, the
// visibility test against the shooter's hemisphere buffer (lightmap_shoot_hemisphere.*) and the
// form factor from a receiving point to one shooting texel.

struct Receiver {
  vec4 positionArea;   // world position (scene units), area A (scene units²)
  vec4 normal;         // unit, front side
  vec4 albedo;         // ρ
  uvec4 chartShooter;  // chart, the shooter it belongs to (progressive: its cluster; stochastic: itself), -, -
};
struct TexelAxes {
  vec4 u;  // ∂P/∂u: world displacement per texel along the atlas x axis (scene units)
  vec4 v;  // ∂P/∂v
};

const float kPi = 3.14159265358979;

// The hemisphere buffer's pixel of a unit direction `local` in the shooter's frame (x, y of the
// direction: the hemispherical projection).
ivec2 hemispherePixel(vec3 local, ivec2 size) {
  return clamp(ivec2((local.xy * 0.5 + 0.5) * vec2(size)), ivec2(0), size - 1);
}

// V(r): the receiver's direction in the hemisphere buffer shows its own chart (a flat chart cannot
// hide itself) or a surface no nearer than it, within a pixel's depth slope. `seen` = (distance,
// chart) of that pixel; d the receiver's distance; the cosines at the shooter and receiver.
bool visibleFromShooter(vec2 seen, uint receiverChart, float d, float cosShooter, float cosReceiver, float size,
                        float depthEpsilon) {
  // A pixel spans 2/size in x, y: an angle of about 2/(size·cosθ_c) towards the horizon, over
  // which r's own surface moves in distance by d·angle/cosθ_r.
  float pixelAngle = 2.0 / (size * max(cosShooter, 0.05));
  float slack = 1.5 * d * pixelAngle / max(cosReceiver, 0.05) + depthEpsilon;
  return (seen.y >= 0.0 && uint(seen.y) == receiverChart) || d <= seen.x + slack;
}

// Receivers closer to a shooting texel than 5 of its sides (d² < 25 A_s) take its exact polygon
// form factor, the others its disc formula (under-estimate ≤ 1/(25π) = 1.3% there, decaying as 1/d²).
const float kExactTexelSides2 = 25.0;

// The form factor from the point p (unit normal n) to the texel s (dimensionless, ≤ 1): next to it
// the exact point-to-polygon form factor (Lambert's formula) of its parallelogram P ± ½∂P/∂u ± ½∂P/∂v,
//   F_s = (1/2π) Σ_edges θ_k (n · γ_k),  γ_k = unit normal of the edge's plane through p,
// scaled by A_s / |∂P/∂u × ∂P/∂v| (the texel's share of its chart's area over its parallelogram's);
// farther its disc formula A_s cosθ_p cosθ_s / (π d² + A_s). 0 behind the texel.
float texelFormFactor(vec3 p, vec3 n, Receiver texel, TexelAxes axes) {
  if (dot(p - texel.positionArea.xyz, texel.normal.xyz) <= 0.0) return 0.0;  // behind the texel
  vec3 toTexel = texel.positionArea.xyz - p;
  float texelD2 = dot(toTexel, toTexel);
  if (texelD2 >= kExactTexelSides2 * texel.positionArea.w) {
    float cosR = dot(n, toTexel), cosS = -dot(texel.normal.xyz, toTexel);  // both × d
    return texel.positionArea.w * max(cosR * cosS, 0.0) / texelD2 / (kPi * texelD2 + texel.positionArea.w);
  }
  vec3 du = axes.u.xyz, dv = axes.v.xyz;
  vec3 centre = texel.positionArea.xyz;
  vec3 corner[4] = vec3[4](centre - 0.5 * du - 0.5 * dv, centre + 0.5 * du - 0.5 * dv, centre + 0.5 * du + 0.5 * dv,
                           centre - 0.5 * du + 0.5 * dv);
  float sum = 0.0;
  for (int k = 0; k < 4; ++k) {
    vec3 a = normalize(corner[k] - p), b = normalize(corner[(k + 1) & 3] - p);
    vec3 c = cross(a, b);
    float sinAngle = length(c);
    if (sinAngle > 1e-12) sum += atan(sinAngle, dot(a, b)) * dot(n, c / sinAngle);
  }
  float parallelogram = length(cross(du, dv));
  return abs(sum) / (2.0 * kPi) * texel.positionArea.w / max(parallelogram, 1e-30);
}
