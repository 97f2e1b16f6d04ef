// Footprint helpers and the octahedral normal code.

#include "ibrr/hemicube_samples.hpp"
#include "ibrr/octahedral.hpp"
#include "ibrr/splat.hpp"

#include <catch2/catch.hpp>
#include <glm/gtc/constants.hpp>

#include <cmath>
#include <vector>

using namespace ibrr;

TEST_CASE("hemicube pixel solid angles sum to 2 pi", "[store][footprint]") {
  // One full face H×H over [-1,1]² and four half faces H×H/2 over [-1,1]×[0,1].
  const int h = 256;
  const float side = 2.0f / h;
  double sum = 0.0;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < h; ++i)
      sum += hemicubePixelSolidAngle(-1.0f + (i + 0.5f) * side, -1.0f + (j + 0.5f) * side, side);
  for (int j = 0; j < h / 2; ++j)
    for (int i = 0; i < h; ++i)
      sum += 4.0 * hemicubePixelSolidAngle(-1.0f + (i + 0.5f) * side, (j + 0.5f) * side, side);
  // Midpoint rule: relative error O(1/H²) ≈ 1e-5 at H = 256.
  CHECK(sum == Approx(2.0 * glm::pi<double>()).epsilon(1e-4));
}

TEST_CASE("footprint area is d_omega r^2 / cos theta, clamped at grazing angles", "[store][footprint]") {
  CHECK(footprintArea(1e-4f, 2.0f, 1.0f) == Approx(4e-4f).epsilon(1e-6));
  CHECK(footprintArea(1e-4f, 2.0f, 0.5f) == Approx(8e-4f).epsilon(1e-6));
  CHECK(footprintArea(1e-4f, 2.0f, 0.0f) == Approx(4e-4f / kMinFootprintCos).epsilon(1e-6));
}

TEST_CASE("splat footprint is stretched by 1/cos theta along the tilt", "[store][footprint]") {
  LdcParams params;
  params.bounds = {glm::vec3(0.0f), glm::vec3(1.0f)};
  params.margin = 0.0f;
  params.resolution = 100;  // pixel = 1 cm
  const LdcFrame frame(resolveParams(params));
  // Floor point seen from a light 0.5 m up and 0.5 m sideways along x: cos θ = 1/√2.
  const glm::vec3 p(0.5f, 0.0f, 0.5f), n(0, 1, 0), c(0.0f, 0.5f, 0.5f);
  const float area = 4e-4f;  // 2 cm × 2 cm equivalent
  const SplatFootprint fp = splatFootprint(frame, 1, p, n, c, area);
  const float cosT = std::sqrt(0.5f);
  const float shortHalf = kSplatCoverage * 0.5f * std::sqrt(area * cosT) * 100.0f;  // pixels
  const float longHalf = kSplatCoverage * 0.5f * std::sqrt(area / cosT) * 100.0f;
  // LDI 1 (y) has u = z, v = x: the tilt (along x) is the v axis.
  CHECK(std::fabs(fp.e1.x) == Approx(shortHalf).epsilon(1e-4));
  CHECK(std::fabs(fp.e1.y) == Approx(0.0f).margin(1e-5));
  CHECK(std::fabs(fp.e2.y) == Approx(longHalf).epsilon(1e-4));
  CHECK(std::fabs(fp.e2.x) == Approx(0.0f).margin(1e-5));
  // Full edges 2·e1, 2·e2 span the footprint area (1 m² = 1e4 pixels²), times the coverage margin squared.
  CHECK(std::fabs(fp.e1.x * fp.e2.y - fp.e1.y * fp.e2.x) * 4.0f ==
        Approx(area * 1e4f * kSplatCoverage * kSplatCoverage).epsilon(1e-4));
}

TEST_CASE("octahedral normals round-trip within 1e-4 rad", "[store][footprint]") {
  float worst = 0.0f;
  for (int k = 0; k < 2000; ++k) {
    // Fibonacci sphere directions.
    const float z = 1.0f - 2.0f * (k + 0.5f) / 2000.0f;
    const float r = std::sqrt(1.0f - z * z);
    const float phi = 2.399963f * static_cast<float>(k);
    const glm::vec3 n(r * std::cos(phi), r * std::sin(phi), z);
    const glm::vec3 back = octDecode(octEncode(n));
    worst = std::max(worst, glm::length(n - back));  // chord ≈ angle; acos near 1 is too coarse in float
  }
  CHECK(worst < 1e-4f);
  // Every code decodes to a unit vector, even the -32768 corner values.
  for (std::uint32_t code : {0u, 0x80008000u, 0xffffffffu, 0x7fff8000u, 0x12345678u})
    CHECK(glm::length(octDecode(code)) == Approx(1.0f).epsilon(1e-5));
}

TEST_CASE("the run-solving rasteriser covers exactly the pixels a test of the whole box covers", "[store][footprint]") {
  // Long thin splats at all angles (up to the 16-pixel half-extent clamp), tiny ones, and both kernels; the
  // brute-force reference tests every pixel of the splat's bounding box with the same per-pixel test.
  std::uint32_t state = 12345u;
  auto uniform = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
  };
  const int res = 64;
  int mismatches = 0, splats = 0;
  for (SplatKernel kernel : {SplatKernel::Box, SplatKernel::Gaussian})
    for (int k = 0; k < 4000; ++k) {
      SplatFootprint fp;
      fp.centre = {uniform() * res, uniform() * res};
      const float a1 = uniform() * 6.2831853f, len1 = 0.05f + 16.0f * uniform() * uniform();
      const float a2 = a1 + 1.5707963f + (uniform() - 0.5f) * 2.0f, len2 = 0.05f + 16.0f * uniform() * uniform();
      fp.e1 = {len1 * std::cos(a1), len1 * std::sin(a1)};
      fp.e2 = {len2 * std::cos(a2), len2 * std::sin(a2)};
      const SplatRaster r = prepareSplat(fp, kernel, res);
      std::vector<glm::vec3> fast, brute;
      rasterSplat(r, kernel, [&](int i, int j, float w) { fast.emplace_back(i, j, w); });
      auto collect = [&](int i, int j, float w) { brute.emplace_back(i, j, w); };
      for (int j = r.j0; j <= r.j1; ++j)
        for (int i = r.i0; i <= r.i1; ++i)
          if (!r.ownOnly)
            detail::splatPixel(r, kernel, i, j, static_cast<float>(j) + 0.5f - r.centre.y, collect);
          else if (i == r.ownI && j == r.ownJ)
            brute.emplace_back(i, j, 1.0f);
      if (fast != brute) ++mismatches;
      ++splats;
    }
  CHECK(splats == 8000);
  CHECK(mismatches == 0);
}
