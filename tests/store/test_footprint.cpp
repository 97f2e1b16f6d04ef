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
  // Long thin splats at all angles (up to the 16-pixel half-extent clamp), tiny ones (box splats up to 16 pixels
  // wide are scanned four pixels at a time, wider ones solved row by row), and both kernels; the
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

TEST_CASE("a 2x2 block that sees one plane merges into one sample carrying its power, and other blocks do not",
          "[store][footprint]") {
  // Four samples of the plane z = 2 on a 1 cm grid, footprints about 1 cm², g varying as it does near a VPL.
  PixelSample block[4];
  for (int k = 0; k < 4; ++k) {
    block[k].position = glm::vec3(0.01f * float(k & 1), 0.01f * float(k >> 1), 2.0f);
    block[k].normal = glm::vec3(0.0f, 0.0f, -1.0f);
    block[k].area = 1e-4f * (1.0f + 0.1f * float(k));
    block[k].g = 3.0f - 0.5f * float(k);
    block[k].valid = true;
  }
  REQUIRE(mergeableBlock(block));
  const PixelSample merged = mergedSample(block);
  double area = 0.0, power = 0.0;
  glm::dvec3 moment(0.0);
  for (const PixelSample& s : block) {
    area += s.area;
    power += double(s.area) * s.g;
    moment += double(s.area) * glm::dvec3(s.position);
  }
  CHECK(merged.area == Approx(area).epsilon(1e-6));
  CHECK(double(merged.area) * merged.g == Approx(power).epsilon(1e-6));  // Σ A·g: the block's power
  for (int c = 0; c < 3; ++c) CHECK(merged.position[c] == Approx(moment[c] / area).epsilon(1e-6));
  CHECK(merged.normal == block[0].normal);
  CHECK(merged.edgeReach == glm::vec3(0.0f));

  auto changed = [&](auto&& change) {
    PixelSample copy[4] = {block[0], block[1], block[2], block[3]};
    change(copy[3]);
    return mergeableBlock(copy);
  };
  // 0.1% of a footprint's side is 10 µm here: 5 µm off the plane merges, 20 µm does not.
  CHECK(changed([](PixelSample& s) { s.position.z += 5e-6f; }));
  CHECK_FALSE(changed([](PixelSample& s) { s.position.z += 2e-5f; }));
  CHECK_FALSE(changed([](PixelSample& s) { s.normal = glm::normalize(glm::vec3(0.02f, 0.0f, -1.0f)); }));  // 1.1°
  CHECK_FALSE(changed([](PixelSample& s) { s.position.x += 0.05f; }));       // the same plane, 6 footprints away
  CHECK_FALSE(changed([](PixelSample& s) { s.edgeReach = glm::vec3(0.003f, 0.0f, 0.0f); }));  // beside an edge
  CHECK_FALSE(changed([](PixelSample& s) { s.valid = false; }));             // sees nothing the VPL lights
}
