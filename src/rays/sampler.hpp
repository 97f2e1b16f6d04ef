#pragma once
// Deterministic low-discrepancy samples for light paths and pixels.
//
// Every random decision takes its numbers from a *dimension pair* of an Owen-scrambled Sobol
// (0,2)-sequence, padded to any dimension count by giving each pair its own nested uniform
// scramble and its own shuffle of the sample index (Burley, "Practical Hash-based Owen
// Scrambling", JCGT 2020). Within one pair the N samples of a pixel (or the N light paths of a VPL
// set) are stratified like a (0,2)-net; across pairs they are decorrelated. Keller's quasi-random
// walk uses the same idea with Halton: path i takes its k-th decision from dimension k of point i.
//
// A sample depends only on (seed, stream, sample index, dimension), never on the thread that draws
// it, so any thread count gives bit-identical results.
#include <glm/glm.hpp>

#include <cstdint>

namespace ibrr::rays {

// 32-bit integer hash (lowbias32, Chris Wellons): good avalanche, cheap.
inline std::uint32_t hashU32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

inline std::uint32_t hashCombine(std::uint32_t seed, std::uint32_t value) {
  return hashU32(seed ^ (value + 0x9e3779b9U + (seed << 6) + (seed >> 2)));
}

inline std::uint32_t reverseBits(std::uint32_t x) {
  x = ((x >> 1) & 0x55555555U) | ((x & 0x55555555U) << 1);
  x = ((x >> 2) & 0x33333333U) | ((x & 0x33333333U) << 2);
  x = ((x >> 4) & 0x0f0f0f0fU) | ((x & 0x0f0f0f0fU) << 4);
  x = ((x >> 8) & 0x00ff00ffU) | ((x & 0x00ff00ffU) << 8);
  return (x >> 16) | (x << 16);
}

// Nested uniform (Owen) scramble of a 32-bit fixed-point value: the Laine-Karras permutation on
// the bit-reversed value only lets each bit depend on the bits above it.
inline std::uint32_t owenScramble(std::uint32_t x, std::uint32_t seed) {
  x = reverseBits(x);
  x += seed;
  x ^= x * 0x6c50b47cU;
  x ^= x * 0xb82f1e52U;
  x ^= x * 0xc7afe638U;
  x ^= x * 0x8d22f6e6U;
  return reverseBits(x);
}

// The first two Sobol dimensions as 32-bit fixed point: van der Corput, and the dimension built
// from the primitive polynomial x + 1 (direction numbers v_0 = 2^31, v_i = v_{i-1} ^ v_{i-1} >> 1).
inline std::uint32_t sobolDimension0(std::uint32_t index) { return reverseBits(index); }
inline std::uint32_t sobolDimension1(std::uint32_t index) {
  std::uint32_t result = 0;
  for (std::uint32_t v = 1U << 31; index != 0; index >>= 1, v ^= v >> 1) {
    if (index & 1U) result ^= v;
  }
  return result;
}

inline float toUnitFloat(std::uint32_t x) {
  // 24 significant bits, so the result is < 1 exactly.
  return float(x >> 8) * (1.0f / 16777216.0f);
}

// Sample `index` of the dimension pair `pair` for one stream (a pixel, or the VPL path set).
inline glm::vec2 sobolPair(std::uint32_t index, std::uint32_t streamSeed, std::uint32_t pair) {
  const std::uint32_t pairSeed = hashCombine(streamSeed, pair);
  const std::uint32_t shuffled = owenScramble(index, hashCombine(pairSeed, 0x5bd1e995U));
  const std::uint32_t x = owenScramble(sobolDimension0(shuffled), hashCombine(pairSeed, 1U));
  const std::uint32_t y = owenScramble(sobolDimension1(shuffled), hashCombine(pairSeed, 2U));
  return {toUnitFloat(x), toUnitFloat(y)};
}

// The numbers one path (or one pixel sample) draws, in order: each call takes the next dimension
// pair. Cheap to copy; holds no table.
class SampleStream {
public:
  SampleStream(std::uint32_t streamSeed, std::uint32_t index) : m_seed(streamSeed), m_index(index) {}
  glm::vec2 next2D() { return sobolPair(m_index, m_seed, m_pair++); }
  float next1D() { return next2D().x; }
  [[nodiscard]] std::uint32_t pairsUsed() const { return m_pair; }

private:
  std::uint32_t m_seed;
  std::uint32_t m_index;
  std::uint32_t m_pair = 0;
};

}  // namespace ibrr::rays
