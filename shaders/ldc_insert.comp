#version 450 core
// GPU insertion of hemicubes into the LDC store (Mertens & Van Reeth 2002, §4), reading the atlas where the
// hemicube pass rendered it: no readback. A dispatch takes several hemicubes of a batch, one a z (main), each
// summing into its own sums; one invocation per 2×2 block of atlas texels (insertBlock); the same steps as the
// CPU bake:
//   sample     the surface point p the texel sees, its normal n (facing the VPL) and g = I(ω)/Φ·cosθx/r²
//              (clamped to u_clamp when > 0); its footprint A = dω·r²/max(cosθ, 0.01) (ibrr::footprintArea)
//   merge      an aligned 2×2 block of a face that sees one plane is one sample (ibrr::mergeableBlock)
//   warp       the LDI of n's dominant axis, p's pixel coordinates there; outside the cube: dropped
//   splat      the parallelogram footprint of ibrr/splat.hpp (box, or the Gaussian of its covariance), the
//              own pixel always included; pixel q takes the share a_q = w_q·A/W, W = Σ w
//   match      the layer of pixel q whose plane (n_l, d_l) p lies on: |p·n_l − d_l| < ε_d, n·n_l > 1 − ε_n,
//              the nearest plane winning, among the seeded layers and those born before the sample
// Every value that decides a pixel, a layer or a sum is `precise` and computed in the operations and order of the
// C++ warp (ibrr/splat.hpp, ibrr/ldc_builder.cpp, src/bake/bake.cpp): no fused multiply-adds, no approximate
// reciprocal square roots (normalize, inversesqrt), since llvmpipe compiles those differently for each processor,
// and every division and square root rounded exactly (exactDivide, exactSqrt), since GPUs approximate them: the
// two warps must give the same store on llvmpipe on any processor and on a GPU.
// The miss pass (u_missPass = 1) runs first: it lists the samples whose own pixel has no layer, and
// ldc_open.comp opens their layers before the accumulating pass.
//   accumulate Σ a·g and Σ a of the matched layer in the hemicube's sums (ldc_insertion.glsl), and the layer
//              joins the touched list the first time a hemicube of this dispatch reaches it
#include "ldc_insertion.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

// xyz world, w = its hemicube's coverage mark where covered
layout(binding = IBRR_T_WARP_POSITION) uniform sampler2DArray u_atlasPosition;
layout(binding = IBRR_T_WARP_NORMAL) uniform sampler2DArray u_atlasNormal;    // xyz normal facing the VPL, w = g

layout(location = IBRR_U_WARP_FIRST_HEMICUBE) uniform int u_firstHemicube;  // b_hemicubes[u_firstHemicube + z] is z's
layout(location = IBRR_U_WARP_GROUP) uniform uint u_group;          // this dispatch's stamp, ≥ 1
layout(location = IBRR_U_WARP_CLAMP) uniform float u_clamp;        // bound on g, 0 = none
layout(location = IBRR_U_WARP_ORIGIN) uniform vec3 u_origin;        // LDC cube min corner, world units
layout(location = IBRR_U_WARP_INV_PIXEL_SIZE) uniform float u_invPixelSize; // 1 / LDI pixel width
layout(location = IBRR_U_WARP_LDC_RESOLUTION) uniform int u_ldcResolution;  // R
layout(location = IBRR_U_WARP_EPS_DISTANCE) uniform float u_epsDistance;  // ε_d, world units
layout(location = IBRR_U_WARP_MIN_COS) uniform float u_minCos;      // 1 − ε_n
layout(location = IBRR_U_WARP_GAUSSIAN) uniform int u_gaussian;      // 0 box, 1 Gaussian
layout(location = IBRR_U_WARP_MIN_AREA) uniform float u_minArea;     // footprint floor, world units²
layout(location = IBRR_U_WARP_MISS_PASS) uniform int u_missPass;      // 1: list own-pixel misses; 0: accumulate

// The constants of ibrr/hemicube_samples.hpp and ibrr/splat.hpp, set from there by src/bake/gpu_insertion.cpp.
layout(location = IBRR_U_WARP_MIN_FOOTPRINT_COS) uniform float kMinFootprintCos;
layout(location = IBRR_U_WARP_SPLAT_COVERAGE) uniform float kSplatCoverage;
layout(location = IBRR_U_WARP_MAX_HALF_EXTENT) uniform float kMaxHalfExtent;    // pixels
layout(location = IBRR_U_WARP_GAUSSIAN_CUTOFF2) uniform float kGaussianCutoff2;
layout(location = IBRR_U_WARP_EDGE_SLACK) uniform float kEdgeSlack;
layout(location = IBRR_U_WARP_EDGE_NORMAL_COS) uniform float kEdgeNormalCos;        // ibrr/hemicube_samples.hpp, edgeReachTowards
layout(location = IBRR_U_WARP_EDGE_MEET_FOOTPRINTS2) uniform float kEdgeMeetFootprints2;  // its square
layout(location = IBRR_U_WARP_MAX_EDGE_REACH) uniform float kMaxEdgeReach;         // ibrr/splat.hpp
layout(location = IBRR_U_WARP_EDGE_SWEEP) uniform float kEdgeSweep;            // ibrr/splat.hpp
layout(location = IBRR_U_WARP_MERGE_NORMAL_COS) uniform float kMergeNormalCos;   // ibrr/hemicube_samples.hpp, mergeableBlock
layout(location = IBRR_U_WARP_MERGE_OFF_PLANE2) uniform float kMergeOffPlane2;
layout(location = IBRR_U_WARP_MERGE_APART2) uniform float kMergeApart2;

// The invocation's hemicube (gl_WorkGroupID.z of the dispatch), set by main from b_hemicubes.
vec3 h_centre;         // world units
float h_coverage;      // the mark of the texels its draw covered
int h_atlasLayer;      // its slot
int h_resolution;      // H
int h_rows;            // atlas rows in use
int h_sideFaceRows;    // H/2 for a hemicube's half faces, H for a full cube
uint h_stamp;          // its number in the bake, ≥ 1
uint h_sumsBase;       // its sums: b_sums[4·(h_sumsBase + layer)]

int dominantAxis(vec3 n) {
  vec3 a = abs(n);
  if (a.x >= a.y && a.x >= a.z) return 0;
  return a.y >= a.z ? 1 : 2;
}
vec2 ldiPlane(int ldi, vec3 v) {  // (u, v) = ((a+1) mod 3, (a+2) mod 3)
  return ldi == 0 ? v.yz : (ldi == 1 ? v.zx : v.xy);
}
// a / b and √x rounded to float exactly as IEEE float arithmetic (the C++ warp) gives them. GLSL lets a GPU
// approximate float division and square roots, and NVIDIA's are off by an ulp or two, enough to move a splat's
// edge across a pixel centre. Computed in double and rounded to float they are exact: a double carries more than
// 2·24 + 2 bits, so the second rounding gives the correctly rounded float (and a few double ulps of error in the
// GPU's double division or root cannot reach a float rounding boundary).
float exactDivide(float a, float b) { return float(double(a) / double(b)); }
vec3 exactDivide(vec3 v, float b) { return vec3(exactDivide(v.x, b), exactDivide(v.y, b), exactDivide(v.z, b)); }
float exactSqrt(float x) { return float(sqrt(double(x))); }

// cross in glm's order of operations, as orderedDot (ldc_insertion.glsl).
vec3 orderedCross(vec3 x, vec3 y) {
  precise vec3 c = vec3(x.y * y.z - y.y * x.z, x.z * y.x - y.z * x.x, x.x * y.y - y.x * x.y);
  return c;
}

vec2 clampLength(vec2 v, float maxLength) {
  precise float len2 = orderedDot(v, v);
  return len2 <= maxLength * maxLength ? v : v * exactDivide(maxLength, exactSqrt(len2));
}

// The splat of ibrr/splat.hpp: matrix m (box: inverse of [e1 e2]; Gaussian: V⁻¹ with m[1][0] unused), bounds.
struct Splat {
  vec2 centre;
  float m00, m01, m10, m11;
  ivec2 lo, hi, own;
  bool ownOnly;
};

// The [lo, hi] range of a splat coordinate swept by `reach` half-edges: (midpoint, half-width)
// (ibrr/splat.hpp, detail::reachRange).
vec2 reachRange(float reach) {
  precise float r = clamp(reach, -kMaxEdgeReach, kMaxEdgeReach);
  precise float lo = min(-1.0, r - kEdgeSweep), hi = max(1.0, r + kEdgeSweep);
  precise vec2 range = vec2(0.5 * (lo + hi), 0.5 * (hi - lo));
  return range;
}

Splat prepareSplat(int ldi, vec3 p, vec3 n, float area, vec3 edgeReach) {
  precise Splat s;
  s.centre = (ldiPlane(ldi, p) - ldiPlane(ldi, u_origin)) * u_invPixelSize;
  precise vec2 e1 = vec2(0.0), e2 = vec2(0.0);
  if (area > 0.0) {
    precise vec3 w = p - h_centre;
    precise float dist2 = orderedDot(w, w);
    precise vec3 t1 = vec3(0.0);
    precise float cosTheta = 1.0;
    if (dist2 > 0.0) {
      precise vec3 wn = exactDivide(w, exactSqrt(dist2));
      cosTheta = max(abs(orderedDot(wn, n)), kMinFootprintCos);
      t1 = orderedCross(n, wn);
    }
    precise float t1len2 = orderedDot(t1, t1);
    if (t1len2 < 1e-12) {  // seen head-on (or from the point itself): any tangent will do
      t1 = abs(n.x) < 0.9 ? orderedCross(n, vec3(1, 0, 0)) : orderedCross(n, vec3(0, 1, 0));
      t1len2 = orderedDot(t1, t1);
    }
    t1 = exactDivide(t1, exactSqrt(t1len2));
    precise vec3 t2 = orderedCross(n, t1);
    precise float halfShort = 0.5 * exactSqrt(area * cosTheta);
    precise float halfLong = exactDivide(halfShort, cosTheta);
    e1 = ldiPlane(ldi, t1) * (kSplatCoverage * halfShort * u_invPixelSize);
    e2 = ldiPlane(ldi, t2) * (kSplatCoverage * halfLong * u_invPixelSize);
    if (edgeReach != vec3(0.0)) {  // extended towards an edge (ibrr/splat.hpp, splatFootprint)
      precise vec2 range1 = reachRange(exactDivide(orderedDot(edgeReach, t1), kSplatCoverage * halfShort));
      precise vec2 range2 = reachRange(exactDivide(orderedDot(edgeReach, t2), kSplatCoverage * halfLong));
      s.centre += range1.x * e1 + range2.x * e2;
      e1 *= range1.y;
      e2 *= range2.y;
    }
    e1 = clampLength(e1, kMaxHalfExtent);
    e2 = clampLength(e2, kMaxHalfExtent);
  }
  s.own = min(ivec2(s.centre), ivec2(u_ldcResolution - 1));
  precise vec2 halfExtent;
  s.ownOnly = false;
  if (u_gaussian == 0) {
    precise float det = e1.x * e2.y - e2.x * e1.y;
    if (!(abs(det) > 1e-12)) {
      s.ownOnly = true;
      s.lo = s.hi = s.own;
      return s;
    }
    precise float invDet = exactDivide(1.0, det);
    s.m00 = e2.y * invDet;
    s.m01 = -e2.x * invDet;
    s.m10 = -e1.y * invDet;
    s.m11 = e1.x * invDet;
    halfExtent = abs(e1) + abs(e2);
  } else {
    const float kTwelfth = 1.0 / 12.0;  // folded by the compiler
    precise float a = exactDivide(e1.x * e1.x + e2.x * e2.x, 3.0) + kTwelfth;
    precise float b = exactDivide(e1.x * e1.y + e2.x * e2.y, 3.0);
    precise float c = exactDivide(e1.y * e1.y + e2.y * e2.y, 3.0) + kTwelfth;
    precise float vdet = a * c - b * b;
    s.m00 = exactDivide(c, vdet);
    s.m01 = exactDivide(-b, vdet);
    s.m11 = exactDivide(a, vdet);
    halfExtent = vec2(exactSqrt(kGaussianCutoff2 * a), exactSqrt(kGaussianCutoff2 * c));
  }
  s.lo = max(ivec2(0), ivec2(ceil(s.centre - halfExtent - 0.5)));
  s.hi = min(ivec2(u_ldcResolution - 1), ivec2(floor(s.centre + halfExtent - 0.5)));
  s.lo = min(s.lo, s.own);
  s.hi = max(s.hi, s.own);
  return s;
}

// The kernel weight of pixel q, 0 when the splat does not cover it.
float splatWeight(Splat s, ivec2 q) {
  if (q == s.own) {
    if (u_gaussian == 0 || s.ownOnly) return 1.0;
  } else if (s.ownOnly) {
    return 0.0;
  }
  precise vec2 d = vec2(q) + 0.5 - s.centre;
  if (u_gaussian == 0) {
    precise float alpha = s.m00 * d.x + s.m01 * d.y;
    precise float beta = s.m10 * d.x + s.m11 * d.y;
    return abs(alpha) <= kEdgeSlack && abs(beta) <= kEdgeSlack ? 1.0 : 0.0;
  }
  precise float m2 = s.m00 * d.x * d.x + 2.0 * s.m01 * d.x * d.y + s.m11 * d.y * d.y;
  return q == s.own || m2 <= kGaussianCutoff2 ? exp(-0.5 * m2) : 0.0;
}

bool bornBy(uvec2 birth, uvec2 moment) { return birth.x < moment.x || (birth.x == moment.x && birth.y <= moment.y); }

// The layer of global pixel g that (p, n) lies on among those born by `moment`, or -1.
// ownPixel: g is the sample's own pixel. A seeded layer within ε wins; failing one, a sample in its own pixel
// matches the layers opened before it there, and spill into the pixels around matches nothing more, as on the
// CPU (ibrr/ldc_builder.cpp): an opened layer takes only the samples that lie in its pixel.
int matchLayer(uint g, vec3 p, vec3 n, uvec2 moment, bool ownPixel) {
  int best = -1;
  float bestDistance = u_epsDistance;
  for (uint l = b_offsets[g]; l < b_offsets[g + 1u]; ++l) {
    vec4 plane = b_planes[l];
    precise float distance = abs(orderedDot(p, plane.xyz) - plane.w);
    precise float cosine = orderedDot(n, plane.xyz);
    if (distance < bestDistance && cosine > u_minCos) {
      best = int(l);
      bestDistance = distance;
    }
  }
  for (int l = ownPixel && best < 0 ? b_extraHead[g] : -1; l >= 0; l = b_extraNext[l]) {
    vec4 plane = b_planes[l];
    precise float distance = abs(orderedDot(p, plane.xyz) - plane.w);
    precise float cosine = orderedDot(n, plane.xyz);
    if (distance < bestDistance && cosine > u_minCos && bornBy(b_births[l], moment)) {
      best = l;
      bestDistance = distance;
    }
  }
  return best;
}

// Solid angle of atlas texel (x, y) (ibrr::hemicubePixelSolidAngle): the front face's rows [0, H), then the
// side faces of h_sideFaceRows rows each, a half face covering [0, 1] of its face vertically.
float texelSolidAngle(ivec2 texel) {
  bool front = texel.y < h_resolution;
  int row = front ? texel.y : (texel.y - h_resolution) % h_sideFaceRows;
  bool halfFace = !front && h_sideFaceRows * 2 == h_resolution;
  precise float side = exactDivide(2.0, float(h_resolution));
  precise float a = -1.0 + (float(texel.x) + 0.5) * side;
  precise float b = (halfFace ? 0.0 : -1.0) + (float(row) + 0.5) * side;
  precise float rho2 = 1.0 + a * a + b * b;
  precise float solidAngle = exactDivide(side * side, rho2 * exactSqrt(rho2));
  return solidAngle;
}

// The edge reach of the texel's sample (p, n, area): the sum over its four neighbours within its face that meet
// its surface at an edge (ibrr::edgeReachTowards; src/bake/bake.cpp, edgeReach).
vec3 edgeReach(ivec2 texel, vec3 p, vec3 n, float area) {
  bool front = texel.y < h_resolution;
  int faceRows = front ? h_resolution : h_sideFaceRows;
  int firstRow = front ? 0 : h_resolution + ((texel.y - h_resolution) / h_sideFaceRows) * h_sideFaceRows;
  const ivec2 kSteps[4] = ivec2[4](ivec2(-1, 0), ivec2(1, 0), ivec2(0, -1), ivec2(0, 1));
  precise vec3 reach = vec3(0.0);
  for (int k = 0; k < 4; ++k) {
    ivec2 neighbour = texel + kSteps[k];
    if (neighbour.x < 0 || neighbour.x >= h_resolution || neighbour.y < firstRow || neighbour.y >= firstRow + faceRows)
      continue;
    vec4 position = texelFetch(u_atlasPosition, ivec3(neighbour, h_atlasLayer), 0);
    if (position.w != h_coverage) continue;
    precise vec3 apart = position.xyz - p;
    precise float cosine = orderedDot(n, texelFetch(u_atlasNormal, ivec3(neighbour, h_atlasLayer), 0).xyz);
    precise float apart2 = orderedDot(apart, apart);
    precise float meet2 = kEdgeMeetFootprints2 * area;
    if (cosine < kEdgeNormalCos && apart2 < meet2)
      reach += apart - n * orderedDot(apart, n);
  }
  return reach;
}

// One atlas texel's sample (ibrr::PixelSample; src/bake/bake.cpp, atlasPixelSample): not valid where the texel
// sees nothing or a surface the VPL does not light.
struct TexelSample {
  vec3 p;      // world units
  vec3 n;      // the rendered normal, facing the VPL
  vec3 reach;  // edge reach
  float g;     // clamped geometry term
  float area;  // footprint, world units²
  bool valid;
};

TexelSample texelSample(ivec2 texel) {
  TexelSample s;
  s.valid = false;
  vec4 position = texelFetch(u_atlasPosition, ivec3(texel, h_atlasLayer), 0);
  if (position.w != h_coverage) return s;
  vec4 normalGeometry = texelFetch(u_atlasNormal, ivec3(texel, h_atlasLayer), 0);
  s.g = normalGeometry.w;
  if (u_clamp > 0.0) s.g = min(s.g, u_clamp);
  if (!(s.g > 0.0)) return s;  // back-facing to the VPL or outside a spot's cone: no light
  s.p = position.xyz;
  s.n = normalGeometry.xyz;
  precise vec3 toCentre = h_centre - s.p;
  precise float distance = exactSqrt(orderedDot(toCentre, toCentre));
  precise float cosTheta = distance > 0.0 ? exactDivide(orderedDot(s.n, toCentre), distance) : 1.0;
  precise float area = exactDivide(texelSolidAngle(texel) * distance * distance, max(abs(cosTheta), kMinFootprintCos));
  s.area = area;
  s.reach = edgeReach(texel, s.p, s.n, s.area);
  s.valid = true;
  return s;
}

// ibrr::mergeableBlock: the aligned 2×2 block (k = 2·row + column) sees one plane.
bool mergeableBlock(TexelSample block[4]) {
  float maxArea = 0.0;
  for (int k = 0; k < 4; ++k) {
    if (!block[k].valid || block[k].reach != vec3(0.0)) return false;
    maxArea = max(maxArea, block[k].area);
  }
  for (int k = 1; k < 4; ++k) {
    precise vec3 apart = block[k].p - block[0].p;
    precise float offPlane = orderedDot(apart, block[0].n);
    precise float offPlane2 = offPlane * offPlane;
    precise float offPlaneBound = kMergeOffPlane2 * maxArea;
    precise float apartBound = kMergeApart2 * maxArea;
    if (!(orderedDot(block[k].n, block[0].n) >= kMergeNormalCos && offPlane2 <= offPlaneBound &&
          orderedDot(apart, apart) <= apartBound))
      return false;
  }
  return true;
}

// ibrr::mergedSample: sums in the order k = 0..3, the centroid and g divided by the summed footprint.
TexelSample mergedSample(TexelSample block[4]) {
  TexelSample merged = block[0];
  precise float area = 0.0, areaG = 0.0;
  precise vec3 areaPosition = vec3(0.0);
  for (int k = 0; k < 4; ++k) {
    area += block[k].area;
    areaG += block[k].area * block[k].g;
    areaPosition += block[k].area * block[k].p;
  }
  merged.p = exactDivide(areaPosition, area);
  merged.g = exactDivide(areaG, area);
  merged.area = area;
  return merged;
}

// Inserts one sample of the hemicube, `order` its place in the hemicube's order; returns the LDI pixels its splat
// covered (0 when it is dropped).
uint insertSample(TexelSample chosen, uint order, inout uint samples) {
  vec3 p = chosen.p;
  float g = chosen.g;
  precise float area = chosen.area;
  precise float len2 = orderedDot(chosen.n, chosen.n);
  bool valid = len2 > 1e-20 && !any(isinf(p)) && !any(isnan(p)) && !isinf(area) && !isnan(area) && !isinf(g);
  precise float invLength = exactDivide(1.0, exactSqrt(max(len2, 1e-30)));
  precise vec3 n = chosen.n * invLength;  // ibrr::sampleUnitNormal, len2 being > 1e-20
  int ldi = dominantAxis(n);
  precise vec2 pixel = (ldiPlane(ldi, p) - ldiPlane(ldi, u_origin)) * u_invPixelSize;
  if (!valid || any(lessThan(pixel, vec2(0.0))) || any(greaterThanEqual(pixel, vec2(u_ldcResolution)))) {
    if (u_missPass == 0) atomicAdd(b_control[6], 1u);
    return 0u;
  }
  uvec2 moment = uvec2(h_stamp, order);  // the sample's place in the order
  // The pixel the sample lies in (an edge reach may move the splat's centre, and its own pixel, out of it).
  ivec2 lies = min(ivec2(pixel), ivec2(u_ldcResolution - 1));
  uint base = uint(ldi * u_ldcResolution * u_ldcResolution);
  if (u_missPass == 1) {
    // A share of the pixel it lies in that matches no layer opens one: listed when the splat covers that pixel.
    // Most samples match, so the splat is set up only for those that do not.
    uint liesPixel = base + uint(lies.y * u_ldcResolution + lies.x);
    if (matchLayer(liesPixel, p, n, moment, true) >= 0) return 0u;
    Splat s = prepareSplat(ldi, p, n, max(area, 0.0), chosen.reach);
    if (any(lessThan(lies, s.lo)) || any(greaterThan(lies, s.hi)) || splatWeight(s, lies) == 0.0) return 0u;
    uint index = atomicAdd(b_control[10], 1u);
    if (index < b_control[11]) {  // always: the list holds every texel of the batch
      b_misses[index] = uvec4(moment.y, liesPixel, floatBitsToUint(p.x), floatBitsToUint(p.y));
      b_misses[b_control[11] + index] = uvec4(floatBitsToUint(p.z), floatBitsToUint(n));
      int previous = atomicExchange(b_missHead[liesPixel], int(index));
      b_misses[2u * b_control[11] + index] = uvec4(h_stamp, uint(previous), 0u, 0u);
      if (previous < 0) {  // the pixel's first miss: list the pixel, a group of ldc_open.comp per 64
        uint k = atomicAdd(b_control[15], 1u);
        b_missedPixels[k] = liesPixel;
        if (k % kOpenGroupSize == 0u) atomicAdd(b_control[12], 1u);
      }
    }
    return 0u;
  }
  Splat s = prepareSplat(ldi, p, n, max(area, 0.0), chosen.reach);
  ++samples;
  precise float weightSum = 0.0;
  for (int j = s.lo.y; j <= s.hi.y; ++j)
    for (int i = s.lo.x; i <= s.hi.x; ++i) weightSum += splatWeight(s, ivec2(i, j));
  precise float areaScale = exactDivide(max(area, u_minArea), weightSum);  // A/W
  uint writes = 0u;
  for (int j = s.lo.y; j <= s.hi.y; ++j)
    for (int i = s.lo.x; i <= s.hi.x; ++i) {
      float w = splatWeight(s, ivec2(i, j));
      if (w == 0.0) continue;
      ++writes;
      uint global = base + uint(j * u_ldcResolution + i);
      int layer = matchLayer(global, p, n, moment, ivec2(i, j) == lies);
      if (layer < 0) {
        if (ivec2(i, j) == lies) atomicAdd(b_control[7], 1u);  // the miss pass opened one: never
        continue;  // spill beside the layers: dropped, as on the CPU
      }
      precise float a = w * areaScale;  // world units²
      uint at = 4u * (h_sumsBase + uint(layer));
      atomicAdd64(at, floor(a * g * kSumScale + 0.5));
      atomicAdd64(at + 2u, floor(a * u_invPixelSize * u_invPixelSize * kAreaScale + 0.5));
      if (b_stamps[layer] != u_group && atomicExchange(b_stamps[layer], u_group) != u_group) {
        uint index = atomicAdd(b_control[3], 1u);
        b_touched[index] = uint(layer);
        if (index % kFlushGroupSize == 0u) atomicAdd(b_control[0], 1u);
      }
    }
  return writes;
}

// Inserts the samples of one aligned 2×2 block of a face: invocation (column, atlas row) takes the block whose
// first texel is (2·column, row) when that row is a block's first in its face, and nothing otherwise. The block's
// merged sample (ibrr::mergeableBlock), or each texel's own: in the hemicube's order (faces, then blocks row by
// row, then the texels of a block row by row: src/bake/bake.cpp, captureToSamples), whose keys
// (firstRow + block row)·2H + 4·(block column) + k grow in that order, H even, for any face height.
uint insertBlock(ivec2 invocation, inout uint samples) {
  ivec2 origin = ivec2(2 * invocation.x, invocation.y);
  if (origin.x >= h_resolution || origin.y >= h_rows) return 0u;
  bool front = origin.y < h_resolution;
  int faceRows = front ? h_resolution : h_sideFaceRows;
  int firstRow = front ? 0 : h_resolution + ((origin.y - h_resolution) / h_sideFaceRows) * h_sideFaceRows;
  int row = origin.y - firstRow;
  if ((row & 1) != 0) return 0u;
  uint order = uint(origin.y * 2 * h_resolution + 2 * origin.x);
  TexelSample block[4];
  for (int b = 0; b < 4; ++b) {
    block[b].valid = false;
    if (row + (b >> 1) < faceRows) block[b] = texelSample(origin + ivec2(b & 1, b >> 1));
  }
  if (mergeableBlock(block)) return insertSample(mergedSample(block), order, samples);
  uint writes = 0u;
  for (int b = 0; b < 4; ++b)
    if (block[b].valid) writes += insertSample(block[b], order + uint(b), samples);
  return writes;
}

shared uint s_writes;
shared uint s_samples;

void main() {
  WarpHemicube hemicube = b_hemicubes[u_firstHemicube + int(gl_WorkGroupID.z)];
  h_centre = hemicube.centreCoverage.xyz;
  h_coverage = hemicube.centreCoverage.w;
  h_atlasLayer = hemicube.atlasLayout.x;
  h_resolution = hemicube.atlasLayout.y;
  h_rows = hemicube.atlasLayout.z;
  h_sideFaceRows = hemicube.atlasLayout.w;
  h_stamp = hemicube.stamps.x;
  h_sumsBase = hemicube.stamps.y;
  if (gl_LocalInvocationIndex == 0u) {
    s_writes = 0u;
    s_samples = 0u;
  }
  barrier();
  uint samples = 0u;
  uint writes = insertBlock(ivec2(gl_GlobalInvocationID.xy), samples);
  if (writes != 0u) atomicAdd(s_writes, writes);
  if (samples != 0u) atomicAdd(s_samples, samples);
  barrier();
  if (gl_LocalInvocationIndex == 0u) {  // one global atomic per group for the counters
    uint old = atomicAdd(b_control[4], s_writes);
    if (old + s_writes < old) atomicAdd(b_control[5], 1u);
    old = atomicAdd(b_control[8], s_samples);
    if (old + s_samples < old) atomicAdd(b_control[9], 1u);
  }
}
