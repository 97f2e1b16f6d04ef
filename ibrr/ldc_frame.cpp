#include "ibrr/ldc_frame.hpp"

#include "ibrr/error.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace ibrr {

namespace {
bool finite3(const glm::vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }
}  // namespace

LdcParams resolveParams(const LdcParams& params) {
  LdcParams out = params;
  if (!finite3(params.bounds.lo) || !finite3(params.bounds.hi) || params.bounds.lo.x > params.bounds.hi.x ||
      params.bounds.lo.y > params.bounds.hi.y || params.bounds.lo.z > params.bounds.hi.z)
    throw Error("LDC bounds must be finite with lo <= hi on every axis; pass the scene's bounding box");
  if (params.resolution < kMinResolution || params.resolution > kMaxResolution)
    throw Error("LDC resolution " + std::to_string(params.resolution) + " is outside [" +
                std::to_string(kMinResolution) + ", " + std::to_string(kMaxResolution) + "]; the paper used 128-512");
  if (!(params.margin >= 0.0f && params.margin <= 1.0f))
    throw Error("LDC margin must be a fraction in [0, 1] of the largest scene extent");
  const LdcFrame frame(out);
  if (!(frame.pixelSize() > 0.0f) || !std::isfinite(frame.side()) || !std::isfinite(frame.invPixelSize()))
    throw Error(
        "LDC bounds are too large or too small for float coordinates; give bounds in metres of a "
        "real scene");
  if (params.epsDistance == 0.0f) out.epsDistance = kDefaultEpsDistancePixels * frame.pixelSize();
  if (params.epsNormal == 0.0f) out.epsNormal = kDefaultEpsNormal;
  if (!(out.epsDistance > 0.0f) || !std::isfinite(out.epsDistance))
    throw Error("LDC epsDistance must be a positive distance in world units (0 selects the default)");
  if (!(out.epsNormal > 0.0f && out.epsNormal <= 2.0f))
    throw Error("LDC epsNormal must be in (0, 2] (0 selects the default " + std::to_string(kDefaultEpsNormal) + ")");
  return out;
}

bool sameLayout(const LdcParams& a, const LdcParams& b) {
  auto bitsEqual = [](float x, float y) { return std::memcmp(&x, &y, sizeof(float)) == 0; };
  for (int k = 0; k < 3; ++k)
    if (!bitsEqual(a.bounds.lo[k], b.bounds.lo[k]) || !bitsEqual(a.bounds.hi[k], b.bounds.hi[k])) return false;
  return a.resolution == b.resolution && bitsEqual(a.margin, b.margin) && bitsEqual(a.epsDistance, b.epsDistance) &&
         bitsEqual(a.epsNormal, b.epsNormal) && a.sceneFingerprint == b.sceneFingerprint;
}

LdcFrame::LdcFrame(const LdcParams& resolved) : m_resolution(resolved.resolution) {
  const glm::vec3 extent = resolved.bounds.hi - resolved.bounds.lo;
  float largest = std::max({extent.x, extent.y, extent.z});
  if (largest <= 0.0f) largest = 1.0f;  // a degenerate (point) scene still gets a usable unit cube
  // side = largest extent plus the margin on both sides; the cube is centred on the bounds.
  m_side = largest * (1.0f + 2.0f * resolved.margin);
  const glm::vec3 centre = 0.5f * (resolved.bounds.lo + resolved.bounds.hi);
  m_origin = centre - glm::vec3(0.5f * m_side);
  m_pixelSize = m_side / static_cast<float>(m_resolution);
  m_invPixelSize = 1.0f / m_pixelSize;
  m_pixelsPerLdi = static_cast<std::uint32_t>(m_resolution) * static_cast<std::uint32_t>(m_resolution);
}

}  // namespace ibrr
