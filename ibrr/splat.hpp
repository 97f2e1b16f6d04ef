#pragma once
// Splatting one hemicube sample over the LDI pixels its footprint covers (paper §4.3, and the Gaussian splat
// of its further work).
//
// Footprint. A hemicube pixel of solid angle dω seeing a surface at distance r and angle θ (between the surface
// normal n and the view direction w from the hemicube centre) covers a parallelogram of area A = dω r²/cos θ
// (footprintArea). Its short side, across the tilt, is s = √(A cos θ) = √dω·r; its long side, along the tilt
// (the projection of w onto the surface), is l = √(A / cos θ) = s / cos θ. So with t1 = normalize(n × w) and
// t2 = n × t1 the footprint is  p + α·(s/2)·t1 + β·(l/2)·t2,  |α|, |β| ≤ 1.  Projecting the two half-edges onto
// the LDI image plane (dropping the LDI axis) gives e1, e2 in pixel units. Using the long side along the tilt
// is what keeps surfaces seen at grazing angles from the VPL free of holes; an isotropic square of the same
// area would leave gaps of up to 1/cos θ pixels between neighbouring samples.
// Coverage margin. The true preimage of a hemicube pixel is the pixel's (slightly oblong, sheared) angular
// square cut by the surface: a parallelogram of area A whose edges need not lie along and across the tilt.
// Near face edges a pixel's longest angular side is up to 1.19·√dω, and the shear rotates the cross-section
// relative to the tilt. The equal-area rectangle above is therefore scaled by kSplatCoverage = 1.25 on both
// axes: enough for neighbouring splats to overlap and close the gaps these shape differences leave (the
// grazing-angle test checks that no LDI pixel on a visible surface stays empty), while keeping a splat near its
// true size so shadow edges move little and insertion stays cheap (1.7 pixels per sample at H = R). The
// overlap is harmless because splats of one hemicube are averaged on a layer, never summed.
//
// Box kernel (the paper's "stretched pixels"): weight 1 on every pixel whose centre lies in the projected
// parallelogram, plus always the pixel containing p.
// Gaussian kernel (EWA-style, Heckbert 1989 / Zwicker et al. 2001): the footprint's covariance
// V = (e1 e1ᵀ + e2 e2ᵀ)/3 (a uniform parallelogram) plus the pixel's own box variance I/12, weight
// exp(−m²/2) with m² = dᵀ V⁻¹ d, d = pixel centre − p, cut off at m ≤ kGaussianCutoff = 2 (along the axes that
// reaches 1.15 of the scaled half-edges, at the diagonals 0.82 of them, about the unscaled footprint). The
// pixel containing p is always included (its weight is at least e⁻³, as m² ≤ 6 there), so a splat is never
// empty. A sample's weights are normalised over its splat and scaled by its area (ldc_builder.hpp), so each
// pixel takes the area-weighted mean and shadow edges are not pushed outward as with the box.

#include "ibrr/hemicube_samples.hpp"
#include "ibrr/ldc_frame.hpp"

#include <glm/glm.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ibrr {

enum class SplatKernel {
  Box,       // paper §4.3
  Gaussian,  // paper §6.2 further work
};

// A splat's half-edges are clamped to this many pixels, bounding the work per sample at extreme grazing angles.
inline constexpr float kMaxSplatHalfExtentPixels = 16.0f;
inline constexpr float kGaussianCutoff = 2.0f;
inline constexpr float kSplatCoverage = 1.25f;

// The footprint of one sample in one LDI, in continuous pixel coordinates.
struct SplatFootprint {
  glm::vec2 centre{0.0f};  // p in pixel coordinates
  glm::vec2 e1{0.0f};      // half-edge across the tilt, pixels
  glm::vec2 e2{0.0f};      // half-edge along the tilt, pixels
};

// p: sample position, n: unit normal, hemicubeCentre: the VPL, area: footprint area m² (footprintArea).
namespace detail {
// floor and ceil for |x| < 2³¹ as plain integer arithmetic: without SSE4.1 the library versions cost a dozen
// instructions each, and the splat setup and rasteriser call them per sample and per row.
inline int floorToInt(float x) {
  const int i = static_cast<int>(x);
  return i - (x < static_cast<float>(i) ? 1 : 0);
}
inline int ceilToInt(float x) {
  const int i = static_cast<int>(x);
  return i + (x > static_cast<float>(i) ? 1 : 0);
}
// Scales v down so that its length is at most maxLength (pixels).
inline glm::vec2 clampLength(const glm::vec2& v, float maxLength) {
  const float len2 = glm::dot(v, v);
  if (len2 <= maxLength * maxLength) return v;
  return v * (maxLength / std::sqrt(len2));
}
}  // namespace detail

// Edge reach (hemicube_samples.hpp, edgeReachTowards): a world displacement r in the sample's plane. The box is
// extended along its own axes towards p + r: with r1 = r·t1 / (kSplatCoverage·s/2) and r2 = r·t2 /
// (kSplatCoverage·l/2) in half-edges, capped at ±kMaxEdgeReach, α ∈ [min(−1, r1 − c), max(1, r1 + c)] and β
// likewise, c = kEdgeSweep; that is the centre moved by the ranges' midpoints along e1, e2 and the half-edges
// scaled by their half-widths. c = 0 takes in the point p + r (a box corner where r runs diagonally to the axes,
// so neighbouring boxes can leave a few pixels along the edge between their corners); c = 1 sweeps the whole box
// by r (no gap, but its bounding box spills sideways). Measured (docs/bias_compensation.md): c = 0, 0.5, 1 give
// the Cornell box 2.57%, 2.55%, 2.56% and the Sibenik nave's energy 0.990 1.007 1.024, 1.009 1.026 1.042,
// 1.029 1.046 1.062: the sweep carries light into contact shadows, so c = 0.
inline constexpr float kMaxEdgeReach = 4.0f;
inline constexpr float kEdgeSweep = 0.0f;

namespace detail {
// The [lo, hi] range of a splat coordinate swept by `reach` (in half-edges): (midpoint, half-width).
inline glm::vec2 reachRange(float reach) {
  const float r = std::clamp(reach, -kMaxEdgeReach, kMaxEdgeReach);
  const float lo = std::min(-1.0f, r - kEdgeSweep), hi = std::max(1.0f, r + kEdgeSweep);
  return glm::vec2(0.5f * (lo + hi), 0.5f * (hi - lo));
}
}  // namespace detail

inline SplatFootprint splatFootprint(const LdcFrame& frame, int ldi, const glm::vec3& p, const glm::vec3& n,
                                     const glm::vec3& hemicubeCentre, float area,
                                     const glm::vec3& edgeReach = glm::vec3(0.0f)) {
  SplatFootprint fp;
  fp.centre = frame.toPixel(ldi, p);
  if (!(area > 0.0f)) return fp;  // zero footprint: only the own pixel
  const glm::vec3 w = p - hemicubeCentre;
  const float dist2 = glm::dot(w, w);
  glm::vec3 t1;
  float cosTheta = 1.0f;
  if (dist2 > 0.0f) {
    const glm::vec3 wn = w / std::sqrt(dist2);
    cosTheta = std::max(std::fabs(glm::dot(wn, n)), kMinFootprintCos);
    t1 = glm::cross(n, wn);
  } else {
    t1 = glm::vec3(0.0f);
  }
  float t1len2 = glm::dot(t1, t1);
  if (t1len2 < 1e-12f) {  // seen head-on (or from the point itself): any tangent will do
    t1 = std::fabs(n.x) < 0.9f ? glm::cross(n, glm::vec3(1, 0, 0)) : glm::cross(n, glm::vec3(0, 1, 0));
    t1len2 = glm::dot(t1, t1);
  }
  t1 /= std::sqrt(t1len2);
  const glm::vec3 t2 = glm::cross(n, t1);
  // Half sides: s/2 = ½√(A cos θ) across the tilt, l/2 = ½√(A / cos θ) along it (world units).
  const float halfShort = 0.5f * std::sqrt(area * cosTheta);
  const float halfLong = halfShort / cosTheta;  // = ½√(A / cos θ)
  const int u = ldiAxisU(ldi);
  const int v = ldiAxisV(ldi);
  const float k1 = kSplatCoverage * halfShort * frame.invPixelSize();
  const float k2 = kSplatCoverage * halfLong * frame.invPixelSize();
  glm::vec2 e1 = glm::vec2(t1[u], t1[v]) * k1;
  glm::vec2 e2 = glm::vec2(t2[u], t2[v]) * k2;
  if (edgeReach != glm::vec3(0.0f)) {
    const glm::vec2 range1 = detail::reachRange(glm::dot(edgeReach, t1) / (kSplatCoverage * halfShort));
    const glm::vec2 range2 = detail::reachRange(glm::dot(edgeReach, t2) / (kSplatCoverage * halfLong));
    fp.centre += range1.x * e1 + range2.x * e2;
    e1 *= range1.y;
    e2 *= range2.y;
  }
  fp.e1 = detail::clampLength(e1, kMaxSplatHalfExtentPixels);
  fp.e2 = detail::clampLength(e2, kMaxSplatHalfExtentPixels);
  return fp;
}

// A splat set up for rasterising: its pixel bounds and the kernel's matrix, computed once per sample.
struct SplatRaster {
  glm::vec2 centre{0.0f};  // p in pixel coordinates
  // Box: the inverse of [e1 e2], so (α, β) = (m00·dx + m01·dy, m10·dx + m11·dy).
  // Gaussian: V⁻¹ = [[m00, m01], [m01, m11]] (m10 unused), m² = dᵀ V⁻¹ d.
  float m00 = 0.0f, m01 = 0.0f, m10 = 0.0f, m11 = 0.0f;
  float invM00 = 0.0f, invM10 = 0.0f;           // box: 1/m00 and 1/m10 where |m| > 1e-30, else 0 (detail::boxRowSpan)
  std::int16_t i0 = 0, i1 = 0, j0 = 0, j1 = 0;  // inclusive pixel bounds, the own pixel included
  std::int16_t ownI = 0, ownJ = 0;              // the pixel containing p
  bool ownOnly = false;                         // degenerate footprint: just the own pixel
};

// Requires the centre to lie in [0, R)² (the caller drops samples outside the cube); R ≤ kMaxResolution.
inline SplatRaster prepareSplat(const SplatFootprint& fp, SplatKernel kernel, int resolution) {
  SplatRaster r;
  r.centre = fp.centre;
  const int ownI = std::min(static_cast<int>(fp.centre.x), resolution - 1);
  const int ownJ = std::min(static_cast<int>(fp.centre.y), resolution - 1);
  r.ownI = static_cast<std::int16_t>(ownI);
  r.ownJ = static_cast<std::int16_t>(ownJ);
  float halfU = 0.0f;
  float halfV = 0.0f;
  if (kernel == SplatKernel::Box) {
    const float det = fp.e1.x * fp.e2.y - fp.e2.x * fp.e1.y;
    if (!(std::fabs(det) > 1e-12f)) {
      r.ownOnly = true;
      r.i0 = r.i1 = r.ownI;
      r.j0 = r.j1 = r.ownJ;
      return r;
    }
    const float invDet = 1.0f / det;
    r.m00 = fp.e2.y * invDet;
    r.m01 = -fp.e2.x * invDet;
    r.m10 = -fp.e1.y * invDet;
    r.m11 = fp.e1.x * invDet;
    r.invM00 = std::fabs(r.m00) > 1e-30f ? 1.0f / r.m00 : 0.0f;
    r.invM10 = std::fabs(r.m10) > 1e-30f ? 1.0f / r.m10 : 0.0f;
    halfU = std::fabs(fp.e1.x) + std::fabs(fp.e2.x);
    halfV = std::fabs(fp.e1.y) + std::fabs(fp.e2.y);
  } else {
    const float a = (fp.e1.x * fp.e1.x + fp.e2.x * fp.e2.x) / 3.0f + 1.0f / 12.0f;
    const float b = (fp.e1.x * fp.e1.y + fp.e2.x * fp.e2.y) / 3.0f;
    const float c = (fp.e1.y * fp.e1.y + fp.e2.y * fp.e2.y) / 3.0f + 1.0f / 12.0f;
    const float vdet = a * c - b * b;  // ≥ 1/144 since V ⪰ I/12
    r.m00 = c / vdet;
    r.m01 = -b / vdet;
    r.m11 = a / vdet;
    halfU = kGaussianCutoff * std::sqrt(a);
    halfV = kGaussianCutoff * std::sqrt(c);
  }
  // Pixel centres x + 0.5 with |x + 0.5 − centre| ≤ half; the own pixel may lie outside for a footprint smaller
  // than a pixel, so the bounds are widened to include it.
  // |centre| < R ≤ 8192 and the half-extents are a few tens of pixels, well inside int range.
  const int i0 = std::max(0, detail::ceilToInt(fp.centre.x - halfU - 0.5f));
  const int i1 = std::min(resolution - 1, detail::floorToInt(fp.centre.x + halfU - 0.5f));
  const int j0 = std::max(0, detail::ceilToInt(fp.centre.y - halfV - 0.5f));
  const int j1 = std::min(resolution - 1, detail::floorToInt(fp.centre.y + halfV - 0.5f));
  r.i0 = static_cast<std::int16_t>(std::min(i0, ownI));
  r.i1 = static_cast<std::int16_t>(std::max(i1, ownI));
  r.j0 = static_cast<std::int16_t>(std::min(j0, ownJ));
  r.j1 = static_cast<std::int16_t>(std::max(j1, ownJ));
  return r;
}

// True when a box splat of a sample with no edge reach (p, unit normal n, footprint `area` m², `centre` = p in
// pixel coordinates) certainly covers its own pixel only: its half-extent along either image axis is at most
// |e1| + |e2| ≤ kSplatCoverage·(s/2 + l/2)/pixel, and a neighbouring pixel centre lies at least 1 − |frac − ½| from
// the centre. The margin keeps the test conservative against float rounding and the rasteriser's edge slack, so
// this fast path gives exactly what rasterising the splat would.
inline bool boxCoversOwnPixelOnly(const LdcFrame& frame, const glm::vec3& p, const glm::vec3& n,
                                  const glm::vec3& hemicubeCentre, float area, const glm::vec2& centre) {
  if (!(area > 0.0f)) return false;  // the general path handles degenerate footprints
  // s/2 + l/2 = ½√A·(√cos θ + 1/√cos θ) ≥ √A, so the extent is at least kSplatCoverage·√A/pixel, and it must stay
  // below 1: a footprint of 0.64 pixel areas or more (0.7 with room for rounding) spills.
  if (area * frame.invPixelSize() * frame.invPixelSize() >= 0.7f) return false;
  const glm::vec3 w = p - hemicubeCentre;
  const float dist2 = glm::dot(w, w);
  if (!(dist2 > 0.0f)) return false;
  const float cosTheta = std::max(std::fabs(glm::dot(w, n)) / std::sqrt(dist2), kMinFootprintCos);
  const float halfShort = 0.5f * std::sqrt(area * cosTheta);
  const float extent = kSplatCoverage * frame.invPixelSize() * (halfShort + halfShort / cosTheta);
  const float fx = centre.x - static_cast<float>(static_cast<int>(centre.x));  // centre ≥ 0: truncation = floor
  const float fy = centre.y - static_cast<float>(static_cast<int>(centre.y));
  const float room = 0.5f - std::max(std::fabs(fx - 0.5f), std::fabs(fy - 0.5f));  // to the nearest pixel edge
  return extent * 1.01f + 1e-3f < room + 0.5f;
}

#if defined(__SSE2__)
// Four samples of one hemicube, lane by lane, for prepareBoxSplats: each one's point, unit normal, footprint
// area (m²), p in pixel coordinates (LdcFrame::toPixel), LDI and edge reach (zero for none).
struct BoxSplatLanes {
  alignas(16) float px[4], py[4], pz[4];
  alignas(16) float nx[4], ny[4], nz[4];
  alignas(16) float area[4];
  alignas(16) float centreX[4], centreY[4];
  alignas(16) std::int32_t ldi[4];
  alignas(16) float reachX[4] = {0, 0, 0, 0}, reachY[4] = {0, 0, 0, 0}, reachZ[4] = {0, 0, 0, 0};
};

// What prepareBoxSplats gives for four samples: a bit a lane in each mask.
struct BoxSplatsOfFour {
  SplatRaster rasters[4];  // the lanes neither mask names: prepareSplat(splatFootprint(…), Box, R)
  int ownPixelOnly = 0;    // boxCoversOwnPixelOnly holds, without an edge reach: the own pixel alone (rasters[k] unset)
  int oneByOne = 0;        // off the common path (below): set up with splatFootprint and prepareSplat alone
};

namespace detail {
inline __m128 selectLanes(__m128 mask, __m128 a, __m128 b) { return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)); }
inline __m128 absLanes(__m128 x) { return _mm_and_ps(x, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff))); }
// (a·x + b·y) + c·z: glm::dot's order.
inline __m128 dotLanes(__m128 ax, __m128 ay, __m128 az, __m128 bx, __m128 by, __m128 bz) {
  return _mm_add_ps(_mm_add_ps(_mm_mul_ps(ax, bx), _mm_mul_ps(ay, by)), _mm_mul_ps(az, bz));
}
// glm::cross(a, b), component by component in its order.
inline void crossLanes(__m128 ax, __m128 ay, __m128 az, __m128 bx, __m128 by, __m128 bz, __m128& x, __m128& y,
                       __m128& z) {
  x = _mm_sub_ps(_mm_mul_ps(ay, bz), _mm_mul_ps(by, az));
  y = _mm_sub_ps(_mm_mul_ps(az, bx), _mm_mul_ps(bz, ax));
  z = _mm_sub_ps(_mm_mul_ps(ax, by), _mm_mul_ps(bx, ay));
}
// detail::reachRange lane by lane: (midpoint, half-width) of [std::min(−1, r − c), std::max(1, r + c)], r the reach
// clamped to ±kMaxEdgeReach as std::clamp does.
inline void reachRangeLanes(__m128 reach, __m128& midpoint, __m128& halfWidth) {
  const __m128 lowest = _mm_set1_ps(-kMaxEdgeReach), highest = _mm_set1_ps(kMaxEdgeReach);
  __m128 r = selectLanes(_mm_cmplt_ps(reach, lowest), lowest, reach);
  r = selectLanes(_mm_cmplt_ps(highest, reach), highest, r);
  const __m128 minusOne = _mm_set1_ps(-1.0f), one = _mm_set1_ps(1.0f), sweep = _mm_set1_ps(kEdgeSweep);
  const __m128 below = _mm_sub_ps(r, sweep), above = _mm_add_ps(r, sweep);
  const __m128 lo = selectLanes(_mm_cmplt_ps(below, minusOne), below, minusOne);  // std::min(−1, r − c)
  const __m128 hi = selectLanes(_mm_cmplt_ps(one, above), above, one);            // std::max(1, r + c)
  const __m128 half = _mm_set1_ps(0.5f);
  midpoint = _mm_mul_ps(half, _mm_add_ps(lo, hi));
  halfWidth = _mm_mul_ps(half, _mm_sub_ps(hi, lo));
}
// boxCoversOwnPixelOnly lane by lane, in the lanes of `candidates`: w = p − the hemicube's centre, `dist` its
// length, `inv` the LDI's 1/pixel size.
inline __m128 ownPixelOnlyLanes(__m128 candidates, __m128 area, __m128 inv, __m128 wx, __m128 wy, __m128 wz,
                                __m128 dist, __m128 nx, __m128 ny, __m128 nz, __m128 centreX, __m128 centreY) {
  const __m128 half = _mm_set1_ps(0.5f);
  const __m128 small = _mm_cmplt_ps(_mm_mul_ps(_mm_mul_ps(area, inv), inv), _mm_set1_ps(0.7f));
  const __m128 cosOwn =
      _mm_max_ps(_mm_set1_ps(kMinFootprintCos), _mm_div_ps(absLanes(dotLanes(wx, wy, wz, nx, ny, nz)), dist));
  const __m128 halfShortOwn = _mm_mul_ps(half, _mm_sqrt_ps(_mm_mul_ps(area, cosOwn)));
  const __m128 extent = _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(kSplatCoverage), inv),
                                   _mm_add_ps(halfShortOwn, _mm_div_ps(halfShortOwn, cosOwn)));
  const __m128 fx = _mm_sub_ps(centreX, _mm_cvtepi32_ps(_mm_cvttps_epi32(centreX)));
  const __m128 fy = _mm_sub_ps(centreY, _mm_cvtepi32_ps(_mm_cvttps_epi32(centreY)));
  const __m128 room =
      _mm_sub_ps(half, _mm_max_ps(absLanes(_mm_sub_ps(fy, half)), absLanes(_mm_sub_ps(fx, half))));
  return _mm_and_ps(
      _mm_and_ps(candidates, small),
      _mm_cmplt_ps(_mm_add_ps(_mm_mul_ps(extent, _mm_set1_ps(1.01f)), _mm_set1_ps(1e-3f)), _mm_add_ps(room, half)));
}

// The rasters of the lanes set up at once (prepareBoxSplats), as prepareSplat forms them from the stored lanes:
// `matrix` holds m00, m01, m10, m11, invM00, invM10, `bounds` the ends i0, i1, j0, j1 before rounding, `centre` the
// splat's centre (x, y). The lanes that `skip` names are left unset.
inline void storeBoxRasters(const float (&matrix)[6][4], const float (&bounds)[4][4], const float (&centre)[2][4],
                            int skip, int resolution, SplatRaster (&rasters)[4]) {
  for (int k = 0; k < 4; ++k) {
    if (skip >> k & 1) continue;
    SplatRaster& r = rasters[k];
    r.centre = glm::vec2(centre[0][k], centre[1][k]);
    const int ownI = std::min(static_cast<int>(r.centre.x), resolution - 1);
    const int ownJ = std::min(static_cast<int>(r.centre.y), resolution - 1);
    r.ownI = static_cast<std::int16_t>(ownI);
    r.ownJ = static_cast<std::int16_t>(ownJ);
    r.m00 = matrix[0][k];
    r.m01 = matrix[1][k];
    r.m10 = matrix[2][k];
    r.m11 = matrix[3][k];
    r.invM00 = matrix[4][k];
    r.invM10 = matrix[5][k];
    r.i0 = static_cast<std::int16_t>(std::min(std::max(0, ceilToInt(bounds[0][k])), ownI));
    r.i1 = static_cast<std::int16_t>(std::max(std::min(resolution - 1, floorToInt(bounds[1][k])), ownI));
    r.j0 = static_cast<std::int16_t>(std::min(std::max(0, ceilToInt(bounds[2][k])), ownJ));
    r.j1 = static_cast<std::int16_t>(std::max(std::min(resolution - 1, floorToInt(bounds[3][k])), ownJ));
  }
}

// The component of (x, y, z) along LDI axis u (or v), lane by lane: `ldi0`, `ldi1` mark the lanes of LDI 0 and 1.
inline __m128 ldiComponent(__m128 ldi0, __m128 ldi1, __m128 of0, __m128 of1, __m128 of2) {
  return selectLanes(ldi0, of0, selectLanes(ldi1, of1, of2));
}
}  // namespace detail

// boxCoversOwnPixelOnly, splatFootprint and prepareSplat (box kernel) of four samples at once, in the same float
// operations lane by lane (SSE2 rounds each as the scalar code does, and nothing is fused), so every result is
// the scalar one bit for bit (tests/test_splat.cpp checks it; std::max(a, b) is _mm_max_ps(b, a), NaN and
// signed zeros included). Batched because a sample's set-up is one long chain
// of square roots and divisions: four in flight at once instead of one. A lane with an edge reach takes
// splatFootprint's reach branch and is never the own pixel alone. Only the common path is taken here; a
// lane off it (no footprint, the VPL at p, seen head-on, a half-edge past kMaxSplatHalfExtentPixels, a degenerate
// box) is left to the scalar functions, which have its branches.
inline BoxSplatsOfFour prepareBoxSplats(const LdcFrame& frame, const glm::vec3& hemicubeCentre, const BoxSplatLanes& in) {
  using namespace detail;
  const __m128 px = _mm_load_ps(in.px), py = _mm_load_ps(in.py), pz = _mm_load_ps(in.pz);
  const __m128 nx = _mm_load_ps(in.nx), ny = _mm_load_ps(in.ny), nz = _mm_load_ps(in.nz);
  const __m128 area = _mm_load_ps(in.area), centreX = _mm_load_ps(in.centreX), centreY = _mm_load_ps(in.centreY);
  const __m128 inv = _mm_set1_ps(frame.invPixelSize()), zero = _mm_setzero_ps(), half = _mm_set1_ps(0.5f);
  const __m128 minCos = _mm_set1_ps(kMinFootprintCos), coverage = _mm_set1_ps(kSplatCoverage);
  const __m128 wx = _mm_sub_ps(px, _mm_set1_ps(hemicubeCentre.x)), wy = _mm_sub_ps(py, _mm_set1_ps(hemicubeCentre.y)),
               wz = _mm_sub_ps(pz, _mm_set1_ps(hemicubeCentre.z));
  const __m128 dist2 = dotLanes(wx, wy, wz, wx, wy, wz);
  const __m128 dist = _mm_sqrt_ps(dist2);
  __m128 common = _mm_and_ps(_mm_cmpgt_ps(area, zero), _mm_cmpgt_ps(dist2, zero));
  const __m128 rx = _mm_load_ps(in.reachX), ry = _mm_load_ps(in.reachY), rz = _mm_load_ps(in.reachZ);
  const __m128 hasReach =
      _mm_or_ps(_mm_or_ps(_mm_cmpneq_ps(rx, zero), _mm_cmpneq_ps(ry, zero)), _mm_cmpneq_ps(rz, zero));

  const __m128 ownOnly = ownPixelOnlyLanes(_mm_andnot_ps(hasReach, common), area, inv, wx, wy, wz, dist, nx, ny, nz,
                                           centreX, centreY);

  // splatFootprint: the tilt frame t1 = n × ŵ, t2 = n × t1, and the half-edges in pixels.
  const __m128 wnx = _mm_div_ps(wx, dist), wny = _mm_div_ps(wy, dist), wnz = _mm_div_ps(wz, dist);
  const __m128 cosTheta = _mm_max_ps(minCos, absLanes(dotLanes(wnx, wny, wnz, nx, ny, nz)));
  __m128 t1x, t1y, t1z, t2x, t2y, t2z;
  crossLanes(nx, ny, nz, wnx, wny, wnz, t1x, t1y, t1z);
  const __m128 t1len2 = dotLanes(t1x, t1y, t1z, t1x, t1y, t1z);
  common = _mm_and_ps(common, _mm_cmpge_ps(t1len2, _mm_set1_ps(1e-12f)));  // not seen head-on
  const __m128 t1len = _mm_sqrt_ps(t1len2);
  t1x = _mm_div_ps(t1x, t1len);
  t1y = _mm_div_ps(t1y, t1len);
  t1z = _mm_div_ps(t1z, t1len);
  crossLanes(nx, ny, nz, t1x, t1y, t1z, t2x, t2y, t2z);
  const __m128 halfShort = _mm_mul_ps(half, _mm_sqrt_ps(_mm_mul_ps(area, cosTheta)));
  const __m128 halfLong = _mm_div_ps(halfShort, cosTheta);
  const __m128 k1 = _mm_mul_ps(_mm_mul_ps(coverage, halfShort), inv);
  const __m128 k2 = _mm_mul_ps(_mm_mul_ps(coverage, halfLong), inv);
  const __m128i ldi = _mm_load_si128(reinterpret_cast<const __m128i*>(in.ldi));
  const __m128 ldi0 = _mm_castsi128_ps(_mm_cmpeq_epi32(ldi, _mm_setzero_si128()));
  const __m128 ldi1 = _mm_castsi128_ps(_mm_cmpeq_epi32(ldi, _mm_set1_epi32(1)));
  // u = y, z, x and v = z, x, y for LDIs 0, 1, 2 (ldiAxisU, ldiAxisV).
  __m128 e1x = _mm_mul_ps(ldiComponent(ldi0, ldi1, t1y, t1z, t1x), k1);
  __m128 e1y = _mm_mul_ps(ldiComponent(ldi0, ldi1, t1z, t1x, t1y), k1);
  __m128 e2x = _mm_mul_ps(ldiComponent(ldi0, ldi1, t2y, t2z, t2x), k2);
  __m128 e2y = _mm_mul_ps(ldiComponent(ldi0, ldi1, t2z, t2x, t2y), k2);
  // The edge reach: the centre moved along e1, e2 by the reach ranges' midpoints, the half-edges scaled by their
  // half-widths, in the lanes that have one (splatFootprint's edgeReach branch).
  __m128 splatX = centreX, splatY = centreY;
  if (_mm_movemask_ps(hasReach) != 0) {
    __m128 mid1, width1, mid2, width2;
    reachRangeLanes(_mm_div_ps(dotLanes(rx, ry, rz, t1x, t1y, t1z), _mm_mul_ps(coverage, halfShort)), mid1, width1);
    reachRangeLanes(_mm_div_ps(dotLanes(rx, ry, rz, t2x, t2y, t2z), _mm_mul_ps(coverage, halfLong)), mid2, width2);
    splatX = selectLanes(hasReach, _mm_add_ps(centreX, _mm_add_ps(_mm_mul_ps(mid1, e1x), _mm_mul_ps(mid2, e2x))), centreX);
    splatY = selectLanes(hasReach, _mm_add_ps(centreY, _mm_add_ps(_mm_mul_ps(mid1, e1y), _mm_mul_ps(mid2, e2y))), centreY);
    e1x = selectLanes(hasReach, _mm_mul_ps(e1x, width1), e1x);
    e1y = selectLanes(hasReach, _mm_mul_ps(e1y, width1), e1y);
    e2x = selectLanes(hasReach, _mm_mul_ps(e2x, width2), e2x);
    e2y = selectLanes(hasReach, _mm_mul_ps(e2y, width2), e2y);
  }
  const __m128 maxLength2 = _mm_set1_ps(kMaxSplatHalfExtentPixels * kMaxSplatHalfExtentPixels);
  common = _mm_and_ps(common, _mm_cmple_ps(_mm_add_ps(_mm_mul_ps(e1x, e1x), _mm_mul_ps(e1y, e1y)), maxLength2));
  common = _mm_and_ps(common, _mm_cmple_ps(_mm_add_ps(_mm_mul_ps(e2x, e2x), _mm_mul_ps(e2y, e2y)), maxLength2));

  // prepareSplat: the inverse of [e1 e2] and the pixel bounds.
  const __m128 det = _mm_sub_ps(_mm_mul_ps(e1x, e2y), _mm_mul_ps(e2x, e1y));
  common = _mm_and_ps(common, _mm_cmpgt_ps(absLanes(det), _mm_set1_ps(1e-12f)));
  const __m128 invDet = _mm_div_ps(_mm_set1_ps(1.0f), det);
  const __m128 signBit = _mm_castsi128_ps(_mm_set1_epi32(std::int32_t(0x80000000u)));
  const __m128 m00 = _mm_mul_ps(e2y, invDet), m01 = _mm_mul_ps(_mm_xor_ps(e2x, signBit), invDet);
  const __m128 m10 = _mm_mul_ps(_mm_xor_ps(e1y, signBit), invDet), m11 = _mm_mul_ps(e1x, invDet);
  const __m128 tiny = _mm_set1_ps(1e-30f), one = _mm_set1_ps(1.0f);
  const __m128 invM00 = _mm_and_ps(_mm_cmpgt_ps(absLanes(m00), tiny), _mm_div_ps(one, m00));
  const __m128 invM10 = _mm_and_ps(_mm_cmpgt_ps(absLanes(m10), tiny), _mm_div_ps(one, m10));
  const __m128 halfU = _mm_add_ps(absLanes(e1x), absLanes(e2x)), halfV = _mm_add_ps(absLanes(e1y), absLanes(e2y));
  alignas(16) float matrix[6][4], bounds[4][4], splatCentre[2][4];
  _mm_store_ps(matrix[0], m00);
  _mm_store_ps(matrix[1], m01);
  _mm_store_ps(matrix[2], m10);
  _mm_store_ps(matrix[3], m11);
  _mm_store_ps(matrix[4], invM00);
  _mm_store_ps(matrix[5], invM10);
  _mm_store_ps(bounds[0], _mm_sub_ps(_mm_sub_ps(splatX, halfU), half));  // the bounds' ends, as prepareSplat forms them
  _mm_store_ps(bounds[1], _mm_sub_ps(_mm_add_ps(splatX, halfU), half));
  _mm_store_ps(bounds[2], _mm_sub_ps(_mm_sub_ps(splatY, halfV), half));
  _mm_store_ps(bounds[3], _mm_sub_ps(_mm_add_ps(splatY, halfV), half));
  _mm_store_ps(splatCentre[0], splatX);
  _mm_store_ps(splatCentre[1], splatY);
  BoxSplatsOfFour out;
  out.ownPixelOnly = _mm_movemask_ps(ownOnly);
  out.oneByOne = ~_mm_movemask_ps(common) & 15 & ~out.ownPixelOnly;
  storeBoxRasters(matrix, bounds, splatCentre, out.ownPixelOnly | out.oneByOne, frame.resolution(), out.rasters);
  return out;
}
#else
// Without SSE2 every lane is set up one by one.
struct BoxSplatLanes {
  float px[4], py[4], pz[4], nx[4], ny[4], nz[4], area[4], centreX[4], centreY[4];
  std::int32_t ldi[4];
  float reachX[4] = {0, 0, 0, 0}, reachY[4] = {0, 0, 0, 0}, reachZ[4] = {0, 0, 0, 0};
};
struct BoxSplatsOfFour {
  SplatRaster rasters[4];
  int ownPixelOnly = 0;
  int oneByOne = 15;
};
inline BoxSplatsOfFour prepareBoxSplats(const LdcFrame&, const glm::vec3&, const BoxSplatLanes&) { return {}; }
#endif

namespace detail {
inline constexpr float kEdgeSlack = 1.0f + 1e-4f;  // pixel centres exactly on a shared edge go to both splats
// The box kernel's test of the pixel centre at (dx, dy) from the splat's centre: (α, β) = M·(dx, dy) within
// the parallelogram, |α|, |β| ≤ 1 (with the edge slack).
inline bool boxCovers(const SplatRaster& r, float dx, float dy) {
  const float alpha = r.m00 * dx + r.m01 * dy;
  const float beta = r.m10 * dx + r.m11 * dy;
  return std::fabs(alpha) <= kEdgeSlack && std::fabs(beta) <= kEdgeSlack;
}
// The exact test of one pixel: calls f(i, j, weight) when the splat covers pixel (i, j); dy = j + ½ − centre.y.
template <class F>
inline void splatPixel(const SplatRaster& r, SplatKernel kernel, int i, int j, float dy, F& f) {
  const bool own = (i == r.ownI && j == r.ownJ);
  const float dx = static_cast<float>(i) + 0.5f - r.centre.x;
  if (kernel == SplatKernel::Box) {
    if (own || boxCovers(r, dx, dy)) f(i, j, 1.0f);
  } else {
    const float m2 = r.m00 * dx * dx + 2.0f * r.m01 * dx * dy + r.m11 * dy * dy;
    if (own || m2 <= kGaussianCutoff * kGaussianCutoff) f(i, j, std::exp(-0.5f * m2));
  }
}

// The end points [dxLo, dxHi] of the dx = pixel centre − centre.x where row dy crosses the box splat, by
// clipping against the two slabs |α| ≤ 1 and |β| ≤ 1 (with the edge slack); dxLo > dxHi when it misses. An
// estimate to within rounding (it multiplies by the reciprocals prepareSplat keeps): the caller widens it.
inline void boxRowSpan(const SplatRaster& r, float dy, float& dxLo, float& dxHi) {
  dxLo = -1e30f;
  dxHi = 1e30f;
  auto clipSlab = [&](float invM, float c) {  // |m·dx + c| ≤ kEdgeSlack
    if (invM != 0.0f) {
      const float x0 = (-kEdgeSlack - c) * invM, x1 = (kEdgeSlack - c) * invM;
      dxLo = std::max(dxLo, std::min(x0, x1));
      dxHi = std::min(dxHi, std::max(x0, x1));
    } else if (std::fabs(c) > kEdgeSlack) {
      dxLo = 1e30f;
      dxHi = -1e30f;
    }
  };
  clipSlab(r.invM00, r.m01 * dy);
  clipSlab(r.invM10, r.m11 * dy);
}

#if defined(__SSE2__)
// dx = (i + ½) − centre.x of the four pixel centres i … i + 3 (the pixel indices are exact as floats).
__attribute__((always_inline)) inline __m128 dxOfFour(int i, float centreX) {
  const __m128 columns = _mm_add_ps(_mm_set1_ps(static_cast<float>(i)), _mm_setr_ps(0.0f, 1.0f, 2.0f, 3.0f));
  return _mm_sub_ps(_mm_add_ps(columns, _mm_set1_ps(0.5f)), _mm_set1_ps(centreX));
}
// boxCovers for four pixel centres of a row in its float operations: a bit for each one the splat covers, from their
// m00·dx and m10·dx and the row's m01·dy and m11·dy (α = m00·dx + m01·dy, β likewise).
__attribute__((always_inline)) inline int boxCoversFour(__m128 m00dx, __m128 m10dx, __m128 m01dy, __m128 m11dy) {
  const __m128 absMask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)), slack = _mm_set1_ps(kEdgeSlack);
  const __m128 alpha = _mm_and_ps(_mm_add_ps(m00dx, m01dy), absMask);
  const __m128 beta = _mm_and_ps(_mm_add_ps(m10dx, m11dy), absMask);
  return _mm_movemask_ps(_mm_and_ps(_mm_cmple_ps(alpha, slack), _mm_cmple_ps(beta, slack)));
}
#endif

// Narrows [lo, hi] of row dy to its first and last pixel that boxCovers accepts (lo > hi when none does).
// With SSE2 four pixel centres are tested at once, in the same float operations as boxCovers, so the result
// is the same.
// Inlined into the row loop (GCC otherwise calls it, and its test of four, once a row).
__attribute__((always_inline)) inline void coveredEnds(const SplatRaster& r, float dy, int& lo, int& hi) {
#if defined(__SSE2__)
  if (lo > hi) return;
  const __m128 m00 = _mm_set1_ps(r.m00), m10 = _mm_set1_ps(r.m10);
  const __m128 m01dy = _mm_set1_ps(r.m01 * dy), m11dy = _mm_set1_ps(r.m11 * dy);
  // A bit for each of the pixels i … i + 3 that the splat covers.
  auto coveredOfFour = [&](int i) __attribute__((always_inline)) {
    const __m128 dx = dxOfFour(i, r.centre.x);
    return boxCoversFour(_mm_mul_ps(m00, dx), _mm_mul_ps(m10, dx), m01dy, m11dy);
  };
  auto firstBit = [](int mask) { return __builtin_ctz(static_cast<unsigned>(mask)); };
  auto lastBit = [](int mask) { return 31 - __builtin_clz(static_cast<unsigned>(mask)); };
  if (hi - lo < 4) {  // one test: the pixels past hi masked off
    const int mask = coveredOfFour(lo) & ((1 << (hi - lo + 1)) - 1);
    if (mask == 0) {
      hi = lo - 1;
      return;
    }
    hi = lo + lastBit(mask);
    lo += firstBit(mask);
    return;
  }
  // The first covered pixel of the four at the low end and the last of the four at the high end: two tests for the
  // usual row, whose ends the analytic span puts within a pixel or two of lo and hi.
  const int low = coveredOfFour(lo), high = coveredOfFour(hi - 3);
  if (low != 0 && high != 0) {
    hi = hi - 3 + lastBit(high);
    lo += firstBit(low);
    return;
  }
  int first = hi + 1, last = lo - 1;  // otherwise every four of the row
  for (int i = lo; i <= hi; i += 4) {
    int mask = coveredOfFour(i);
    if (hi - i < 3) mask &= (1 << (hi - i + 1)) - 1;  // past the row's end
    if (mask == 0) continue;
    if (first > hi) first = i + firstBit(mask);
    last = i + lastBit(mask);
  }
  lo = first;
  hi = last;
#else
  auto covered = [&](int i) { return boxCovers(r, static_cast<float>(i) + 0.5f - r.centre.x, dy); };
  while (lo <= hi && !covered(lo)) ++lo;
  while (hi >= lo && !covered(hi)) --hi;
#endif
}
}  // namespace detail

namespace detail {
// Row j's runs of a box splat whose covered pixels of the row are [lo, hi] (lo > hi: none): that run, with the
// own pixel, always covered, extending it or forming a run of its own.
template <class Run>
inline void boxRow(const SplatRaster& r, int j, int lo, int hi, Run& run) {
  const int own = static_cast<int>(r.ownI);
  if (j != r.ownJ || (own >= lo && own <= hi)) {
    if (lo <= hi) run(j, lo, hi);
  } else if (lo > hi || own == lo - 1 || own == hi + 1) {
    run(j, lo > hi ? own : std::min(own, lo), lo > hi ? own : std::max(own, hi));
  } else if (own < lo) {
    run(j, own, own);
    run(j, lo, hi);
  } else {
    run(j, lo, hi);
    run(j, own, own);
  }
}

#if defined(__SSE2__)
// rasterBoxRuns for a box of at most 4·kGroups pixels a row: every pixel of the box tested, four at a time, in the
// float operations of boxCovers, and the row's run from the first and last covered pixel. α = m00·dx + m01·dy:
// the products m00·dx and m10·dx of the box's columns are formed once a splat, so a row costs an addition, an
// absolute value and a comparison per four pixels and slab. Cheaper than solving each row for its ends
// (boxRowSpan, coveredEnds) when the box is this narrow, and the same pixels: the test is the same, and the
// covered pixels of a row form one run.
template <int kGroups, class Run>
inline void rasterBoxRunsByScan(const SplatRaster& r, Run& run) {
  const int ia = r.i0, width = r.i1 - r.i0 + 1;  // width ≤ 4·kGroups
  const __m128 m00 = _mm_set1_ps(r.m00), m10 = _mm_set1_ps(r.m10);
  __m128 m00dx[kGroups], m10dx[kGroups];  // of columns ia + 4k … ia + 4k + 3
  for (int k = 0; k < kGroups; ++k) {
    const __m128 dx = dxOfFour(ia + 4 * k, r.centre.x);
    m00dx[k] = _mm_mul_ps(m00, dx);
    m10dx[k] = _mm_mul_ps(m10, dx);
  }
  const unsigned inBox = (1u << width) - 1u;
  for (int j = r.j0; j <= r.j1; ++j) {
    const float dy = static_cast<float>(j) + 0.5f - r.centre.y;
    const __m128 m01dy = _mm_set1_ps(r.m01 * dy), m11dy = _mm_set1_ps(r.m11 * dy);
    unsigned covered = 0;  // bit i − ia for every covered pixel i of the row
    for (int k = 0; k < kGroups; ++k)
      covered |= unsigned(boxCoversFour(m00dx[k], m10dx[k], m01dy, m11dy)) << (4 * k);
    covered &= inBox;
    if (covered == 0)
      boxRow(r, j, ia + 1, ia, run);
    else
      boxRow(r, j, ia + __builtin_ctz(covered), ia + 31 - __builtin_clz(covered), run);
  }
}
#endif
}  // namespace detail

// Box kernel: calls run(j, iFirst, iLast) for the covered pixels of each row (every one of weight 1), rows in order and
// runs left to right, so the pixels come in the row-major order of rasterSplat. The result is exactly the pixels
// detail::splatPixel accepts, found with a few tests per row: along a row α = m00·dx + m01·dy is a monotonic function
// of the pixel index even in float arithmetic (dx = i + ½ − centre.x, and rounded multiplication and addition by
// constants preserve order), and so is β, so the pixels with |α| ≤ s and |β| ≤ s form one run. Its ends are the first
// and last pixel that passes the exact test within the analytic ends (widened by a pixel against rounding), four pixels
// a test with SSE2 (detail::coveredEnds); a narrow box is tested whole. The own pixel, always covered, extends the run
// or forms a run of its own.
template <class Run>
void rasterBoxRuns(const SplatRaster& r, Run&& run) {
  const int ia = r.i0, ib = r.i1;  // the box holds the own pixel (prepareSplat)
  if (r.ownOnly) {
    run(static_cast<int>(r.ownJ), static_cast<int>(r.ownI), static_cast<int>(r.ownI));
    return;
  }
#if defined(__SSE2__)
  if (ib - ia < 4) return detail::rasterBoxRunsByScan<1>(r, run);
  if (ib - ia < 8) return detail::rasterBoxRunsByScan<2>(r, run);
  if (ib - ia < 16) return detail::rasterBoxRunsByScan<4>(r, run);
#endif
  const bool wide = ib - ia >= 4;  // a narrow box is searched pixel by pixel; a wide one from its analytic run
  for (int j = r.j0; j <= r.j1; ++j) {
    const float dy = static_cast<float>(j) + 0.5f - r.centre.y;
    int lo = ia, hi = ib;
    if (wide) {
      float dxLo, dxHi;
      detail::boxRowSpan(r, dy, dxLo, dxHi);
      lo = ib + 1;
      hi = ia - 1;  // empty unless the row crosses the splat
      if (dxLo <= dxHi) {
        // i + 0.5 − centre.x ∈ [dxLo, dxHi], widened by a pixel against rounding.
        const float a = std::max(r.centre.x + dxLo - 0.5f, static_cast<float>(ia)) - 1.0f;
        const float b = std::min(r.centre.x + dxHi - 0.5f, static_cast<float>(ib)) + 1.0f;
        if (a <= b) {  // both within [ia − 1, ib + 1] here
          lo = std::max(ia, detail::floorToInt(a));
          hi = std::min(ib, detail::ceilToInt(b));
        }
      }
    }
    detail::coveredEnds(r, dy, lo, hi);
    detail::boxRow(r, j, lo, hi, run);
  }
}

// Calls f(i, j, weight) for every covered pixel, weight > 0, row-major (j, then i).
template <class F>
void rasterSplat(const SplatRaster& r, SplatKernel kernel, F&& f) {
  if (kernel == SplatKernel::Box) {
    rasterBoxRuns(r, [&](int j, int iFirst, int iLast) {
      for (int i = iFirst; i <= iLast; ++i) f(i, j, 1.0f);
    });
    return;
  }
  const int ia = r.i0, ib = r.i1;  // the box holds the own pixel (prepareSplat)
  if (r.ownOnly) {
    f(static_cast<int>(r.ownI), static_cast<int>(r.ownJ), 1.0f);
    return;
  }
  constexpr float kCutoff2 = kGaussianCutoff * kGaussianCutoff;
  const bool wide = ib - ia >= 4;  // narrow boxes are cheaper to test pixel by pixel than to solve for runs
  for (int j = r.j0; j <= r.j1; ++j) {
    const float dy = static_cast<float>(j) + 0.5f - r.centre.y;
    if (!wide) {
      for (int i = ia; i <= ib; ++i) detail::splatPixel(r, kernel, i, j, dy, f);
      continue;
    }
    // The row's covered pixels form one run around the ellipse's chord: m00·dx² + 2·m01·dy·dx + m11·dy² ≤
    // kCutoff2, m00 > 0 (V⁻¹ is positive definite); only the chord widened by a pixel either side is tested,
    // so the result is the same as testing every pixel of the box. A negative discriminant (the row misses the
    // ellipse, or grazes it within rounding) still tests the pixels around the vertex.
    const float disc = std::max(0.0f, r.m01 * r.m01 * dy * dy - r.m00 * (r.m11 * dy * dy - kCutoff2));
    const float root = std::sqrt(disc);
    const float dxLo = (-r.m01 * dy - root) / r.m00;
    const float dxHi = (-r.m01 * dy + root) / r.m00;
    int runA = ib + 1, runB = ia - 1;  // empty unless the row crosses the splat
    // i + 0.5 − centre.x ∈ [dxLo, dxHi], widened by a pixel against rounding.
    const float lo = std::max(r.centre.x + dxLo - 0.5f, static_cast<float>(ia)) - 1.0f;
    const float hi = std::min(r.centre.x + dxHi - 0.5f, static_cast<float>(ib)) + 1.0f;
    if (lo <= hi) {  // both within [ia − 1, ib + 1] here
      runA = std::max(ia, detail::floorToInt(lo));
      runB = std::min(ib, detail::ceilToInt(hi));
    }
    if (j == r.ownJ) {  // the own pixel is always in
      runA = std::min(runA, static_cast<int>(r.ownI));
      runB = std::max(runB, static_cast<int>(r.ownI));
    }
    for (int i = runA; i <= runB; ++i) detail::splatPixel(r, kernel, i, j, dy, f);
  }
}

}  // namespace ibrr
