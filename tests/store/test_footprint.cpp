// Footprint helpers and the octahedral normal code.

#include "ibrr/hemicube_samples.hpp"
#include "ibrr/octahedral.hpp"
#include "ibrr/splat.hpp"

#include <catch2/catch.hpp>
#include <glm/gtc/constants.hpp>

#include <cmath>
#include <cstring>
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

#if defined(__SSE2__)
// prepareBoxSplats must be the scalar set-up four lanes at a time, bit for bit: the store stays byte-identical only
// if every lane it sets up gives the raster prepareSplat(splatFootprint(…)) gives, and the own-pixel test agrees.
TEST_CASE("four box splats set up at once equal the scalar set-up bit for bit", "[store][footprint]") {
  LdcParams params;
  params.bounds = {glm::vec3(0.0f), glm::vec3(1.0f)};
  params.margin = 0.0f;
  params.resolution = 32;  // the bounces' level of a bake at R = 256: samples of a few pixels
  const LdcFrame frame(resolveParams(params));
  const glm::vec3 vpl(0.5f, 0.95f, 0.4f);
  std::uint32_t state = 12345u;
  auto uniform = [&state] {  // a fixed LCG: the same lanes on every machine
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 24);
  };
  int prepared = 0, ownOnly = 0, oneByOne = 0, withReach = 0;
  for (int group = 0; group < 4000; ++group) {
    BoxSplatLanes lanes;
    for (int k = 0; k < 4; ++k) {
      const glm::vec3 p(0.02f + 0.96f * uniform(), 0.02f + 0.96f * uniform(), 0.02f + 0.96f * uniform());
      glm::vec3 n = glm::normalize(glm::vec3(uniform() - 0.5f, uniform() - 0.5f, uniform() - 0.5f) + 1e-3f);
      if (group % 97 == 0 && k == 0) n = glm::normalize(p - vpl);  // seen head-on
      // Footprints from a hundredth of a pixel to past the half-edge clamp; a zero and a VPL-at-p lane now and then.
      float area = std::pow(10.0f, -2.0f + 4.5f * uniform()) / (frame.invPixelSize() * frame.invPixelSize());
      if (group % 89 == 0 && k == 1) area = 0.0f;
      const glm::vec3 at = (group % 83 == 0 && k == 2) ? vpl : p;
      const int ldi = dominantAxis(n);
      const glm::vec2 centre = frame.toPixel(ldi, at);
      lanes.px[k] = at.x, lanes.py[k] = at.y, lanes.pz[k] = at.z;
      lanes.nx[k] = n.x, lanes.ny[k] = n.y, lanes.nz[k] = n.z;
      lanes.area[k] = area;
      lanes.centreX[k] = centre.x, lanes.centreY[k] = centre.y;
      lanes.ldi[k] = ldi;
      // An edge reach in every third lane: in the sample's plane, from a tenth of the footprint's side to past the
      // ±kMaxEdgeReach cap (edgeReachTowards makes them up to 3 sides long).
      if ((4 * group + k) % 3 == 0) {
        const glm::vec3 d(uniform() - 0.5f, uniform() - 0.5f, uniform() - 0.5f);
        const glm::vec3 inPlane = d - n * glm::dot(d, n);
        const glm::vec3 reach = inPlane * (std::sqrt(area) * std::pow(10.0f, -1.0f + 2.0f * uniform()));
        lanes.reachX[k] = reach.x, lanes.reachY[k] = reach.y, lanes.reachZ[k] = reach.z;
      }
    }
    const BoxSplatsOfFour four = prepareBoxSplats(frame, vpl, lanes);
    for (int k = 0; k < 4; ++k) {
      const glm::vec3 p(lanes.px[k], lanes.py[k], lanes.pz[k]), n(lanes.nx[k], lanes.ny[k], lanes.nz[k]);
      const glm::vec3 reach(lanes.reachX[k], lanes.reachY[k], lanes.reachZ[k]);
      const glm::vec2 centre(lanes.centreX[k], lanes.centreY[k]);
      const bool own = reach == glm::vec3(0.0f) && boxCoversOwnPixelOnly(frame, p, n, vpl, lanes.area[k], centre);
      if (four.oneByOne >> k & 1) {
        ++oneByOne;
        continue;
      }
      CHECK(bool(four.ownPixelOnly >> k & 1) == own);
      if (own) {
        ++ownOnly;
        continue;
      }
      ++prepared;
      if (reach != glm::vec3(0.0f)) ++withReach;
      const SplatRaster expected =
          prepareSplat(splatFootprint(frame, lanes.ldi[k], p, n, vpl, lanes.area[k], reach), SplatKernel::Box, 32);
      const SplatRaster& got = four.rasters[k];
      INFO("group " << group << " lane " << k);
      REQUIRE_FALSE(expected.ownOnly);
      CHECK(std::memcmp(&got.centre, &expected.centre, sizeof got.centre) == 0);
      for (auto field : {&SplatRaster::m00, &SplatRaster::m01, &SplatRaster::m10, &SplatRaster::m11,
                         &SplatRaster::invM00, &SplatRaster::invM10})
        CHECK(std::memcmp(&(got.*field), &(expected.*field), sizeof(float)) == 0);
      for (auto bound : {&SplatRaster::i0, &SplatRaster::i1, &SplatRaster::j0, &SplatRaster::j1, &SplatRaster::ownI,
                         &SplatRaster::ownJ})
        CHECK(got.*bound == expected.*bound);
    }
  }
  // Every kind of lane was met: the common path most of all (with an edge reach too), the own-pixel one and the
  // scalar one's rare cases.
  CHECK(prepared > 8000);
  CHECK(withReach > 3000);
  CHECK(ownOnly > 100);
  CHECK(oneByOne > 50);
}
#endif
