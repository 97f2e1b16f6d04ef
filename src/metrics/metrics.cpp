#include "metrics/metrics.hpp"

#include "util/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace ibrr::metrics {

namespace {

constexpr double kRelMseEpsilon = 0.01;  // keeps relMSE finite where the reference is black

void checkInputs(const Image& test, const Image& reference, std::span<const std::uint8_t> mask) {
  if (test.width != reference.width || test.height != reference.height)
    throw Error("the images differ in size (" + std::to_string(test.width) + "x" + std::to_string(test.height) +
                " vs " + std::to_string(reference.width) + "x" + std::to_string(reference.height) +
                "); render both at the same --size");
  if (!mask.empty() && mask.size() != reference.pixels.size())
    throw Error("the mask has " + std::to_string(mask.size()) + " pixels but the images have " +
                std::to_string(reference.pixels.size()));
}

float srgbToLinear(float c) {
  return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
}

}  // namespace

DarkPixels countDarkPixels(const Image& test, const Image& reference,
                           std::span<const std::uint8_t> mask, float fraction) {
  checkInputs(test, reference, mask);
  const glm::vec3 luminance(0.2126f, 0.7152f, 0.0722f);
  DarkPixels count;
  for (std::size_t i = 0; i < reference.pixels.size(); ++i) {
    if (!mask.empty() && mask[i] == 0) continue;
    const float y = glm::dot(luminance, reference.pixels[i]);
    if (!(y > 0.0f)) continue;
    ++count.compared;
    if (glm::dot(luminance, test.pixels[i]) < fraction * y) ++count.dark;
  }
  return count;
}

Image darkPixelImage(const Image& test, const Image& reference,
                              std::span<const std::uint8_t> mask, std::span<const std::uint8_t> shadow, float fraction) {
  checkInputs(test, reference, mask);
  if (!shadow.empty() && shadow.size() != reference.pixels.size())
    throw Error("the shadow mask has " + std::to_string(shadow.size()) + " pixels but the images have " +
                std::to_string(reference.pixels.size()));
  const glm::vec3 luminance(0.2126f, 0.7152f, 0.0722f);
  std::vector<float> values;
  values.reserve(test.pixels.size());
  for (const glm::vec3& p : test.pixels) values.push_back(glm::dot(luminance, p));
  std::vector<float> sorted = values;
  const std::size_t at = std::min(sorted.size() - 1, std::size_t(0.99 * double(sorted.size())));
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(at), sorted.end());
  const float white = std::max(2.0f * sorted[at], 1e-30f);
  Image image;
  image.width = test.width;
  image.height = test.height;
  image.pixels.resize(test.pixels.size());
  for (std::size_t i = 0; i < test.pixels.size(); ++i) {
    if (!mask.empty() && mask[i] == 0) {
      image.pixels[i] = glm::vec3(0.0f);
      continue;
    }
    const float y = glm::dot(luminance, reference.pixels[i]);
    const bool dark = y > 0.0f && values[i] < fraction * y;
    const bool inShadow = !shadow.empty() && shadow[i] != 0;
    if (dark)
      image.pixels[i] = inShadow ? glm::vec3(0.0f, 0.1f, 1.0f) : glm::vec3(1.0f, 0.0f, 0.0f);
    else
      image.pixels[i] = glm::vec3(std::clamp(values[i] / white, 0.0f, 1.0f));
  }
  return image;
}

std::vector<std::uint8_t> intersectMasks(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  if (a.empty()) return {b.begin(), b.end()};
  if (b.empty()) return {a.begin(), a.end()};
  if (a.size() != b.size())
    throw Error("the masks differ in size (" + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                " pixels)");
  std::vector<std::uint8_t> both(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) both[i] = (a[i] != 0 && b[i] != 0) ? 1 : 0;
  return both;
}

ErrorMetrics compareImages(const Image& test, const Image& reference,
                           std::span<const std::uint8_t> mask) {
  checkInputs(test, reference, mask);
  double squaredError = 0.0, squaredReference = 0.0, relative = 0.0;
  glm::dvec3 sumTest(0.0), sumReference(0.0);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < reference.pixels.size(); ++i) {
    if (!mask.empty() && mask[i] == 0) continue;
    const glm::dvec3 x(test.pixels[i]), y(reference.pixels[i]);
    const glm::dvec3 d = x - y;
    squaredError += glm::dot(d, d);
    squaredReference += glm::dot(y, y);
    relative += d.r * d.r / (y.r * y.r + kRelMseEpsilon) + d.g * d.g / (y.g * y.g + kRelMseEpsilon) +
                d.b * d.b / (y.b * y.b + kRelMseEpsilon);
    sumTest += x;
    sumReference += y;
    ++kept;
  }
  if (kept == 0) throw Error("the mask leaves no pixel to compare");
  ErrorMetrics metrics;
  metrics.pixelCount = kept;
  metrics.relativeRmse = squaredReference > 0.0 ? std::sqrt(squaredError / squaredReference)
                                                 : (squaredError > 0.0 ? INFINITY : 0.0);
  metrics.relMse = relative / (3.0 * double(kept));
  for (int c = 0; c < 3; ++c)
    metrics.energyRatio[c] = sumReference[c] != 0.0 ? sumTest[c] / sumReference[c] : (sumTest[c] == 0.0 ? 1.0 : INFINITY);
  return metrics;
}

std::string formatMetrics(const ErrorMetrics& metrics) {
  char line[256];
  std::snprintf(line, sizeof line, "relRMSE %.6g  relMSE %.6g  energy %.5f %.5f %.5f  (%zu px)", metrics.relativeRmse,
                metrics.relMse, metrics.energyRatio.r, metrics.energyRatio.g, metrics.energyRatio.b,
                metrics.pixelCount);
  return line;
}

float pixelRelativeError(const glm::vec3& test, const glm::vec3& reference) {
  const glm::dvec3 d = glm::dvec3(test) - glm::dvec3(reference);
  const glm::dvec3 y(reference);
  const double e = (d.r * d.r / (y.r * y.r + kRelMseEpsilon) + d.g * d.g / (y.g * y.g + kRelMseEpsilon) +
                    d.b * d.b / (y.b * y.b + kRelMseEpsilon)) /
                   3.0;
  return float(std::sqrt(e));
}

glm::vec3 turboColor(float t) {
  // Polynomial approximation of Google's Turbo map (Ruofei Du's fit, Apache-2.0 in spirit).
  t = std::clamp(t, 0.0f, 1.0f);
  const glm::vec4 kRed4(0.13572138f, 4.61539260f, -42.66032258f, 132.13108234f);
  const glm::vec4 kGreen4(0.09140261f, 2.19418839f, 4.84296658f, -14.18503333f);
  const glm::vec4 kBlue4(0.10667330f, 12.64194608f, -60.58204836f, 110.36276771f);
  const glm::vec2 kRed2(-152.94239396f, 59.28637943f);
  const glm::vec2 kGreen2(4.27729857f, 2.82956604f);
  const glm::vec2 kBlue2(-89.90310912f, 27.34824973f);
  const glm::vec4 v4(1.0f, t, t * t, t * t * t);
  const glm::vec2 v2 = glm::vec2(v4.z, v4.w) * v4.z;
  return glm::clamp(glm::vec3(glm::dot(v4, kRed4) + glm::dot(v2, kRed2), glm::dot(v4, kGreen4) + glm::dot(v2, kGreen2),
                              glm::dot(v4, kBlue4) + glm::dot(v2, kBlue2)),
                    glm::vec3(0.0f), glm::vec3(1.0f));
}

Image errorHeatmap(const Image& test, const Image& reference,
                            std::span<const std::uint8_t> mask, float scale, float* usedScale) {
  checkInputs(test, reference, mask);
  std::vector<float> errors(reference.pixels.size(), 0.0f);
  std::vector<float> kept;
  for (std::size_t i = 0; i < errors.size(); ++i) {
    errors[i] = pixelRelativeError(test.pixels[i], reference.pixels[i]);
    if (mask.empty() || mask[i] != 0) kept.push_back(errors[i]);
  }
  if (!(scale > 0.0f)) {
    if (!kept.empty()) {
      const std::size_t rank = std::min(kept.size() - 1, std::size_t(0.99 * double(kept.size())));
      std::nth_element(kept.begin(), kept.begin() + std::ptrdiff_t(rank), kept.end());
      scale = kept[rank];
    }
    if (!(scale > 0.0f)) scale = 1.0f;
  }
  if (usedScale) *usedScale = scale;
  Image heat(reference.width, reference.height);
  const glm::vec3 grey(srgbToLinear(0.25f));
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!mask.empty() && mask[i] == 0) {
      heat.pixels[i] = grey;
      continue;
    }
    const glm::vec3 c = turboColor(errors[i] / scale);
    heat.pixels[i] = glm::vec3(srgbToLinear(c.r), srgbToLinear(c.g), srgbToLinear(c.b));
  }
  return heat;
}

}  // namespace ibrr::metrics
