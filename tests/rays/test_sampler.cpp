// Scrambled Sobol pairs: stratified in every pair, decorrelated across pairs, deterministic.
#include "rays/sampler.hpp"
#include "rays/warp.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace ibrr::rays;

TEST_CASE("each dimension pair of 2^m samples is a (0,m,2)-net", "[rays][sampler]") {
  constexpr std::uint32_t m = 8, n = 1u << m;
  for (std::uint32_t pair : {0u, 1u, 7u, 100u}) {
    // Every elementary interval of area 1/n (2^k × 2^(m−k) cells) holds exactly one point.
    for (std::uint32_t k = 0; k <= m; ++k) {
      std::vector<int> cells(n, 0);
      const std::uint32_t nx = 1u << k, ny = n / nx;
      for (std::uint32_t i = 0; i < n; ++i) {
        const glm::vec2 u = sobolPair(i, 1234, pair);
        REQUIRE(u.x >= 0.0f);
        REQUIRE(u.x < 1.0f);
        REQUIRE(u.y < 1.0f);
        ++cells[std::uint32_t(u.x * nx) * ny + std::uint32_t(u.y * ny)];
      }
      for (int count : cells) REQUIRE(count == 1);
    }
  }
}

TEST_CASE("sobolPair gives its definition: Owen-scrambled Sobol dimensions 0 and 1 of the scrambled index",
          "[rays][sampler]") {
  // The definition, spelled out with the loop over direction numbers (v_0 = 2^31, v_i = v_{i-1} ^ v_{i-1} >> 1)
  // that sobolDimension1's tables replace.
  auto dimension1 = [](std::uint32_t index) {
    std::uint32_t result = 0;
    for (std::uint32_t v = 1U << 31; index != 0; index >>= 1, v ^= v >> 1)
      if (index & 1U) result ^= v;
    return result;
  };
  auto definition = [&](std::uint32_t index, std::uint32_t stream, std::uint32_t pair) {
    const std::uint32_t pairSeed = hashCombine(stream, pair);
    const std::uint32_t shuffled = owenScramble(index, hashCombine(pairSeed, 0x5bd1e995U));
    const std::uint32_t x = owenScramble(reverseBits(shuffled), hashCombine(pairSeed, 1U));
    const std::uint32_t y = owenScramble(dimension1(shuffled), hashCombine(pairSeed, 2U));
    return glm::vec2(toUnitFloat(x), toUnitFloat(y));
  };
  int mismatches = 0;
  for (std::uint32_t i = 0; i < 200000; ++i) {
    const std::uint32_t index = i < 100000 ? i : hashU32(i);  // small indices, and every bit
    if (sobolPair(index, hashU32(i ^ 77), i % 13) != definition(index, hashU32(i ^ 77), i % 13)) ++mismatches;
    if (sobolDimension1(index) != dimension1(index)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("samples depend on seed, stream and pair only", "[rays][sampler]") {
  CHECK(sobolPair(5, 1, 2) == sobolPair(5, 1, 2));
  CHECK(sobolPair(5, 1, 2) != sobolPair(5, 2, 2));
  CHECK(sobolPair(5, 1, 2) != sobolPair(5, 1, 3));
  // Different pairs are uncorrelated: the mean product of x across pairs is ≈ 1/4.
  double product = 0.0;
  const int n = 4096;
  for (int i = 0; i < n; ++i) product += double(sobolPair(i, 9, 0).x) * sobolPair(i, 9, 1).x;
  CHECK(product / n == Approx(0.25).margin(0.01));
}

TEST_CASE("cosine hemisphere samples have the density cosθ/π", "[rays][sampler]") {
  // E[cosθ] under pdf cosθ/π is 2/3; the fraction with cosθ > 0.5 is 1 − 0.25 = 0.75.
  double meanCos = 0.0, above = 0.0;
  const int n = 1 << 14;
  for (int i = 0; i < n; ++i) {
    const glm::vec3 d = squareToCosineHemisphere(sobolPair(i, 4, 0));
    REQUIRE(glm::length(d) == Approx(1.0f).epsilon(1e-5));
    meanCos += d.z;
    above += d.z > 0.5f ? 1.0 : 0.0;
  }
  CHECK(meanCos / n == Approx(2.0 / 3.0).epsilon(1e-3));
  CHECK(above / n == Approx(0.75).epsilon(2e-3));
}
