// Retrieval from the layered depth cube store on the GPU: the same matching and filters as
// LayeredDepthCube::radiosity in ibrr/ldc.cpp (keep the two in step).
//
// Buffers: offsets[3·R² + 1] (layers of global pixel g = a·R² + j·R + i are
// layers[offsets[g] .. offsets[g+1])), and per layer its plane (unit normal, d; decoded from the store's
// octahedral normal on upload) and its radiosity (r, g, b before ρ; w the hemicube count).

#include "interface.glsl"

layout(std430, binding = IBRR_B_LDC_OFFSETS) readonly buffer LdcOffsets { uint u_offsets[]; };
layout(std430, binding = IBRR_B_LDC_PLANES) readonly buffer LdcPlanes { vec4 u_planes[]; };
layout(std430, binding = IBRR_B_LDC_RADIOSITY) readonly buffer LdcRadiosity { vec4 u_radiosity[]; };

layout(location = IBRR_U_LDC_ORIGIN) uniform vec3 u_ldcOrigin;      // min corner of the cube, world units
layout(location = IBRR_U_LDC_INV_PIXEL) uniform float u_ldcInvPixel;   // 1 / pixel width
layout(location = IBRR_U_LDC_RESOLUTION) uniform int u_ldcResolution;   // R
layout(location = IBRR_U_LDC_EPS_DISTANCE) uniform float u_ldcEpsDistance;  // ε_d, world units
layout(location = IBRR_U_LDC_MIN_COS) uniform float u_ldcMinCos;     // 1 − ε_n
layout(location = IBRR_U_LDC_FILTER) uniform int u_ldcFilter;       // 0 nearest, 1 average, 2 bilinear
layout(location = IBRR_U_LDC_FILTER_RADIUS) uniform int u_ldcFilterRadius; // k of the average filter, pixels

const int kFilterNearest = 0;
const int kFilterAverage = 1;
const int kFilterBilinear = 2;

int ldcDominantAxis(vec3 n) {
  vec3 a = abs(n);
  if (a.x >= a.y && a.x >= a.z) return 0;
  return a.y >= a.z ? 1 : 2;
}

// LDI a has image axes u = (a+1) mod 3 and v = (a+2) mod 3.
vec2 ldcToPixel(int ldi, vec3 p) {
  int u = ldi == 2 ? 0 : ldi + 1;
  int v = ldi == 0 ? 2 : ldi - 1;
  return vec2(p[u] - u_ldcOrigin[u], p[v] - u_ldcOrigin[v]) * u_ldcInvPixel;
}

// The best-matching layer of a pixel: smallest |p·n_l − d_l| < ε_d with n·n_l > 1 − ε_n; -1 if none.
int ldcMatchLayer(int ldi, int i, int j, vec3 p, vec3 n) {
  uint pixel = uint(ldi * u_ldcResolution * u_ldcResolution + j * u_ldcResolution + i);
  int best = -1;
  float bestDistance = u_ldcEpsDistance;
  uint end = u_offsets[pixel + 1u];
  for (uint k = u_offsets[pixel]; k < end; ++k) {
    vec4 plane = u_planes[k];
    float distance = abs(dot(p, plane.xyz) - plane.w);
    if (distance < bestDistance && dot(n, plane.xyz) > u_ldcMinCos) {
      best = int(k);
      bestDistance = distance;
    }
  }
  return best;
}

vec3 ldcLayerValue(int k) { return u_radiosity[k].rgb; }

// Radiosity at p with normal n from one LDI; .w = 1 if found, 0 if no layer matched.
vec4 ldcLookupInLdi(int ldi, vec3 p, vec3 n, int filterMode) {
  int res = u_ldcResolution;
  vec2 pix = ldcToPixel(ldi, p);
  if (!(pix.x >= 0.0 && pix.y >= 0.0 && pix.x < float(res) && pix.y < float(res))) return vec4(0.0);
  int ci = min(int(pix.x), res - 1);
  int cj = min(int(pix.y), res - 1);
  if (filterMode == kFilterAverage) {
    int k = clamp(u_ldcFilterRadius, 0, 8);
    vec3 sum = vec3(0.0);
    int matched = 0;
    for (int j = max(0, cj - k); j <= min(res - 1, cj + k); ++j)
      for (int i = max(0, ci - k); i <= min(res - 1, ci + k); ++i) {
        int layer = ldcMatchLayer(ldi, i, j, p, n);
        if (layer >= 0) {
          sum += ldcLayerValue(layer);
          ++matched;
        }
      }
    return matched == 0 ? vec4(0.0) : vec4(sum / float(matched), 1.0);
  }
  if (filterMode == kFilterBilinear) {
    float x = pix.x - 0.5, y = pix.y - 0.5;
    int i0 = int(floor(x)), j0 = int(floor(y));
    float fx = x - float(i0), fy = y - float(j0);
    vec3 sum = vec3(0.0);
    float weightSum = 0.0;
    bool any = false;
    for (int dj = 0; dj < 2; ++dj)
      for (int di = 0; di < 2; ++di) {
        int i = i0 + di, j = j0 + dj;
        if (i < 0 || j < 0 || i >= res || j >= res) continue;
        int layer = ldcMatchLayer(ldi, i, j, p, n);
        if (layer < 0) continue;
        float w = (di == 1 ? fx : 1.0 - fx) * (dj == 1 ? fy : 1.0 - fy);
        sum += w * ldcLayerValue(layer);
        weightSum += w;
        any = true;
      }
    if (!any) return vec4(0.0);
    if (weightSum >= 1e-6) return vec4(sum / weightSum, 1.0);
    // Only zero-weight neighbours matched: fall through to the nearest pixel.
  }
  int layer = ldcMatchLayer(ldi, ci, cj, p, n);
  return layer < 0 ? vec4(0.0) : vec4(ldcLayerValue(layer), 1.0);
}

// Radiosity (before ρ) at p with normal n; .w = 1 if a layer matched, 0 for a hole.
vec4 ldcRadiosity(vec3 p, vec3 n) {
  n = normalize(n);
  int first = ldcDominantAxis(n);
  vec4 result = ldcLookupInLdi(first, p, n, u_ldcFilter);
  if (result.w > 0.0) return result;
  int second = (first + 1) % 3, third = (first + 2) % 3;
  if (abs(n[third]) > abs(n[second])) {
    int swapped = second;
    second = third;
    third = swapped;
  }
  result = ldcLookupInLdi(second, p, n, u_ldcFilter);
  if (result.w > 0.0) return result;
  return ldcLookupInLdi(third, p, n, u_ldcFilter);
}
