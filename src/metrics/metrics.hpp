#pragma once
// Error of an image x against a reference y, over the same pixels (optionally masked, e.g. with
// the emitters left out), as every method's tests and `ibrr diff` / `ibrr compare` report it:
//   relative RMSE  sqrt(Σ(x−y)²) / sqrt(Σy²)          over all channels of the kept pixels;
//   relMSE         mean((x−y)² / (y² + 0.01))          per channel value, then averaged;
//   energy ratio   Σx / Σy                             per channel (1 = same total light).
#include "util/image.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ibrr::metrics {

struct ErrorMetrics {
  double relativeRmse = 0.0;
  double relMse = 0.0;
  glm::dvec3 energyRatio{1.0};
  std::size_t pixelCount = 0;  // pixels compared (kept by the mask)
};

// `mask`: empty = every pixel, else one byte per pixel (row 0 at the top), nonzero = compare.
// Throws ibrr::Error when the sizes differ or the mask keeps no pixel.
ErrorMetrics compareImages(const Image& test, const Image& reference,
                           std::span<const std::uint8_t> mask = {});

// Dark pixels (the "dark seams" of texel lightmaps: texels that sample inside walls, unfilled
// atlas gutters): the pixels kept by `mask` whose luminance (Rec. 709) is below `fraction` of the
// reference's, over the kept pixels whose reference luminance is above 0.
struct DarkPixels {
  std::size_t dark = 0;
  std::size_t compared = 0;
  [[nodiscard]] double fraction() const { return compared ? double(dark) / double(compared) : 0.0; }
};
DarkPixels countDarkPixels(const Image& test, const Image& reference,
                           std::span<const std::uint8_t> mask = {}, float fraction = 0.5f);
// A picture of countDarkPixels(): the test image in grey (its luminance over twice its 99th
// percentile), dark pixels outside shadows in red, dark pixels in `shadow` (one byte per pixel,
// nonzero = in shadow; may be empty) in blue, pixels the mask leaves out black. Linear values.
Image darkPixelImage(const Image& test, const Image& reference,
                              std::span<const std::uint8_t> mask, std::span<const std::uint8_t> shadow,
                              float fraction = 0.5f);
// Pixels marked in both masks (empty = all).
std::vector<std::uint8_t> intersectMasks(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

// "relRMSE 0.0123  relMSE 0.000456  energy 0.998 1.001 0.999  (65536 px)"
std::string formatMetrics(const ErrorMetrics& metrics);

// A false-colour picture of the per-pixel error e = sqrt(mean_c (x−y)²/(y²+0.01)) (the square
// root of the pixel's relMSE), through the "turbo" colour map from 0 (dark blue) to `scale` (dark
// red); `scale` ≤ 0 picks the 99th percentile of e. Masked pixels are grey. The values are linear,
// so writeImage(..png) shows the map's own colours.
Image errorHeatmap(const Image& test, const Image& reference,
                            std::span<const std::uint8_t> mask = {}, float scale = 0.0f,
                            float* usedScale = nullptr);

// The per-pixel relative error e used by errorHeatmap.
float pixelRelativeError(const glm::vec3& test, const glm::vec3& reference);

// Turbo colour map (Mikhailov 2019, polynomial fit), t ∈ [0,1] → sRGB-encoded colour in [0,1].
glm::vec3 turboColor(float t);

}  // namespace ibrr::metrics
