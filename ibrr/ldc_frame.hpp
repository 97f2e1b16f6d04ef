#pragma once
// The geometry of a layered depth cube (LDC): three orthographic layered depth images (LDIs) of R×R pixels,
// looking along x, y and z, over one cube that encloses the scene bounds plus a margin.
//
// LDI a (0 = x, 1 = y, 2 = z) has image axes u = (a+1) mod 3 and v = (a+2) mod 3, so the three images are
// (y,z), (z,x) and (x,y). Pixel (i, j) of every LDI covers world coordinates
//     origin[u] + [i, i+1) · pixelSize   and   origin[v] + [j, j+1) · pixelSize,
// and its global index, used by the compact offset array, is  a·R² + j·R + i.
// A surface sample goes to the LDI whose axis is most parallel to its normal (dominantAxis), as in the paper
// (Mertens & Van Reeth 2002, §3): there the LDI resolves the surface at least as finely as 1/√3 of its pixels.
//
// A cube rather than the bounds' box keeps pixels square and the three LDIs at one sampling rate; a very long,
// thin scene wastes pixels across its short axes, which the caller can counter with a larger R.

#include <glm/glm.hpp>

#include <cmath>
#include <cstdint>

namespace ibrr {

// Axis-aligned box in world units.
struct Aabb {
  glm::vec3 lo{0.0f};
  glm::vec3 hi{0.0f};
};

// Constants bounding and defaulting the parameters.
inline constexpr int kMinResolution = 4;
inline constexpr int kMaxResolution = 8192;               // keeps 3·R²+1 offsets well inside uint32
inline constexpr float kDefaultMargin = 0.01f;            // fraction of the largest extent, each side
inline constexpr float kDefaultEpsDistancePixels = 1.0f;  // ε_d default, in LDI pixel widths
inline constexpr float kDefaultEpsNormal = 0.1f;          // ε_n default: n'·n > 0.9, about 26°

// What the store is built over and how samples are matched. Saved in the store file.
struct LdcParams {
  Aabb bounds;                    // scene bounds, world units; lo ≤ hi on every axis, finite
  int resolution = 256;           // R, pixels per LDI side, [kMinResolution, kMaxResolution]; the paper used 128–512
  float margin = kDefaultMargin;  // added on every side, as a fraction of the largest extent, [0, 1]
  // ε_d: a sample at p' matches a layer plane (n, d) when |p'·n − d| < ε_d. World units, > 0;
  // 0 selects kDefaultEpsDistancePixels LDI pixel widths. Must stay below the smallest separation between
  // parallel surfaces that should stay apart (a thin object's height over the floor it rests on).
  float epsDistance = 0.0f;
  // ε_n: the sample also needs n'·n > 1 − ε_n. Dimensionless, (0, 2]; 0 selects kDefaultEpsNormal.
  // Opposite sides of a thin wall have n'·n = −1 and never match for any ε_n < 2.
  float epsNormal = 0.0f;
  // Identifies the scene the store was baked for (a hash the caller computes, 0 = unknown). Checked on load.
  std::uint64_t sceneFingerprint = 0;
};

// Returns params with ε defaults filled in; throws ibrr::Error naming the bad parameter.
LdcParams resolveParams(const LdcParams& params);

// True when both describe the same LDC: bounds, R, margin, ε and scene fingerprint all bitwise equal.
bool sameLayout(const LdcParams& a, const LdcParams& b);

// The index of the largest |n| component; ties go to the lower axis so insertion and retrieval always agree.
inline int dominantAxis(const glm::vec3& n) {
  const float ax = std::fabs(n.x);
  const float ay = std::fabs(n.y);
  const float az = std::fabs(n.z);
  if (ax >= ay && ax >= az) return 0;
  return ay >= az ? 1 : 2;
}

inline int ldiAxisU(int ldi) { return ldi == 2 ? 0 : ldi + 1; }
inline int ldiAxisV(int ldi) { return ldi == 0 ? 2 : ldi - 1; }

// Derived, immutable geometry of the cube; built from resolved params.
class LdcFrame {
public:
  LdcFrame() = default;
  explicit LdcFrame(const LdcParams& resolved);

  int resolution() const { return m_resolution; }
  const glm::vec3& origin() const { return m_origin; }  // min corner of the cube, world units
  float side() const { return m_side; }                 // cube edge length, world units
  float pixelSize() const { return m_pixelSize; }       // LDI pixel width, world units
  float invPixelSize() const { return m_invPixelSize; }
  std::uint32_t pixelsPerLdi() const { return m_pixelsPerLdi; }
  std::uint32_t pixelCount() const { return 3u * m_pixelsPerLdi; }

  // Continuous pixel coordinates of p in LDI `ldi` (pixel (i, j) spans [i, i+1) × [j, j+1)).
  glm::vec2 toPixel(int ldi, const glm::vec3& p) const {
    const int u = ldiAxisU(ldi);
    const int v = ldiAxisV(ldi);
    return {(p[u] - m_origin[u]) * m_invPixelSize, (p[v] - m_origin[v]) * m_invPixelSize};
  }
  // World coordinates (along u and v) of the centre of pixel (i, j).
  glm::vec2 pixelCentre(int ldi, int i, int j) const {
    const int u = ldiAxisU(ldi);
    const int v = ldiAxisV(ldi);
    return {m_origin[u] + (static_cast<float>(i) + 0.5f) * m_pixelSize,
            m_origin[v] + (static_cast<float>(j) + 0.5f) * m_pixelSize};
  }
  std::uint32_t globalPixel(int ldi, int i, int j) const {
    return static_cast<std::uint32_t>(ldi) * m_pixelsPerLdi +
           static_cast<std::uint32_t>(j) * static_cast<std::uint32_t>(m_resolution) + static_cast<std::uint32_t>(i);
  }

private:
  int m_resolution = 0;
  glm::vec3 m_origin{0.0f};
  float m_side = 0.0f;
  float m_pixelSize = 0.0f;
  float m_invPixelSize = 0.0f;
  std::uint32_t m_pixelsPerLdi = 0;
};

}  // namespace ibrr
