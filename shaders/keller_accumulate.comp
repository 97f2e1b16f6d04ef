#version 450 core
// Keller's instant radiosity for one view: adds one VPL's light to every camera pixel,
//   L += ρ/π · Φ · g(x)·V(x),   g = I(ω)/Φ · cosθx / r²  (the bake's geometry term, same clamp),
// with the visibility V from the VPL's hemicube atlas used as a shadow map: x is lit when the
// surface its direction hits in the atlas is not nearer to the VPL than x (minus a bias).
// One dispatch per VPL; the accumulation image starts as the emission.
#include "interface.glsl"
#include "vpl_emission.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

layout(binding = IBRR_T_GBUFFER_POSITION) uniform sampler2D u_position;  // G-buffer: xyz world, w coverage
layout(binding = IBRR_T_GBUFFER_NORMAL) uniform sampler2D u_normal;    // G-buffer: normal facing the camera
layout(binding = IBRR_T_GBUFFER_ALBEDO) uniform sampler2D u_albedo;
layout(binding = IBRR_T_KELLER_ATLAS_POSITION) uniform sampler2DArray u_atlasPosition;  // hemicube atlas, layer 0: xyz world, w coverage
layout(binding = IBRR_I_KELLER_ACCUMULATION, rgba32f) uniform image2D u_accumulation;

layout(location = IBRR_U_KELLER_CENTRE) uniform vec3 u_centre;      // hemicube centre (the VPL), world units
layout(location = IBRR_U_KELLER_AXIS) uniform vec3 u_axis;        // surface normal / spot axis
layout(location = IBRR_U_KELLER_PROFILE) uniform int u_profile;      // 0 Lambertian surface, 1 isotropic point, 2 spot
layout(location = IBRR_U_KELLER_SPOT_COS) uniform vec2 u_spotCos;     // inner, outer cone cosines
layout(location = IBRR_U_KELLER_POWER) uniform vec3 u_power;       // Φ, per channel
layout(location = IBRR_U_KELLER_CLAMP) uniform float u_clamp;      // bound on g, 0 = none
layout(location = IBRR_U_KELLER_FACE_COUNT) uniform int u_faceCount;
layout(location = IBRR_U_KELLER_RESOLUTION) uniform int u_resolution;   // H
layout(location = IBRR_U_KELLER_BIAS_SCALE) uniform float u_biasScale;  // shadow bias per unit distance (≈ texel angle)
layout(location = IBRR_U_KELLER_BIAS_MIN) uniform float u_biasMin;    // world units
layout(location = IBRR_U_KELLER_FACE_FIRST_ROW) uniform int u_faceFirstRow[6];
layout(location = IBRR_U_KELLER_FACE_ROWS) uniform int u_faceRows[6];
layout(location = IBRR_U_KELLER_FACE_VIEW_PROJECTION) uniform mat4 u_faceViewProjection[6];

// Distance from the VPL to the nearest surface in the direction of x, from the atlas; -1 if the
// direction is outside every face (behind a hemicube) or nothing was drawn there.
float occluderDistance(vec3 x) {
  for (int f = 0; f < u_faceCount; ++f) {
    vec4 clip = u_faceViewProjection[f] * vec4(x, 1.0);
    if (clip.w <= 0.0) continue;
    vec2 ndc = clip.xy / clip.w;
    if (any(lessThan(ndc, vec2(-1.0))) || any(greaterThan(ndc, vec2(1.0)))) continue;
    ivec2 texel = ivec2(min(floor((ndc * 0.5 + 0.5) * vec2(u_resolution, u_faceRows[f])),
                            vec2(u_resolution - 1, u_faceRows[f] - 1)));
    texel.y += u_faceFirstRow[f];
    vec4 seen = texelFetch(u_atlasPosition, ivec3(texel, 0), 0);
    return seen.w < 0.5 ? 1e30 : distance(seen.xyz, u_centre);
  }
  return -1.0;
}

void main() {
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  ivec2 size = imageSize(u_accumulation);
  if (pixel.x >= size.x || pixel.y >= size.y) return;
  vec4 position = texelFetch(u_position, pixel, 0);
  if (position.w < 0.5) return;
  vec3 x = position.xyz;
  vec3 toCentre = u_centre - x;
  float r2 = max(dot(toCentre, toCentre), 1e-30);
  float r = sqrt(r2);
  vec3 towardsCentre = toCentre / r;
  vec3 normal = texelFetch(u_normal, pixel, 0).xyz;
  float cosX = dot(normal, towardsCentre);
  if (cosX <= 0.0) return;  // the VPL is behind the visible side
  float cosI = dot(u_axis, -towardsCentre);
  float profile = vplEmissionProfile(u_profile, cosI, u_spotCos);
  float g = profile * cosX / r2;
  if (u_clamp > 0.0) g = min(g, u_clamp);
  if (g <= 0.0) return;
  float occluder = occluderDistance(x);
  // The atlas texel's surface is sampled at the texel centre: allow for its slope over one texel.
  float bias = u_biasMin + u_biasScale * r / max(cosX, 0.05);
  if (occluder < 0.0 || occluder < r - bias) return;
  vec3 albedo = texelFetch(u_albedo, pixel, 0).rgb;
  vec4 sum = imageLoad(u_accumulation, pixel);
  imageStore(u_accumulation, pixel, vec4(sum.rgb + albedo / kVplPi * u_power * g, 1.0));
}
