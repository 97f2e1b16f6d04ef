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

constexpr std::uint32_t reverseBits(std::uint32_t x) {
  x = ((x >> 1) & 0x55555555U) | ((x & 0x55555555U) << 1);
  x = ((x >> 2) & 0x33333333U) | ((x & 0x33333333U) << 2);
  x = ((x >> 4) & 0x0f0f0f0fU) | ((x & 0x0f0f0f0fU) << 4);
  x = ((x >> 8) & 0x00ff00ffU) | ((x & 0x00ff00ffU) << 8);
  return (x >> 16) | (x << 16);
}

namespace detail {
// The Laine-Karras permutation: on a bit-reversed value it lets each bit depend only on the bits below it.
inline std::uint32_t laineKarras(std::uint32_t x, std::uint32_t seed) {
  x += seed;
  x ^= x * 0x6c50b47cU;
  x ^= x * 0xb82f1e52U;
  x ^= x * 0xc7afe638U;
  x ^= x * 0x8d22f6e6U;
  return x;
}
}  // namespace detail

// Nested uniform (Owen) scramble of a 32-bit fixed-point value: the Laine-Karras permutation on
// the bit-reversed value only lets each bit depend on the bits above it.
inline std::uint32_t owenScramble(std::uint32_t x, std::uint32_t seed) {
  return reverseBits(detail::laineKarras(reverseBits(x), seed));
}

// The first two Sobol dimensions as 32-bit fixed point: van der Corput, and the dimension built
// from the primitive polynomial x + 1 (direction numbers v_0 = 2^31, v_i = v_{i-1} ^ v_{i-1} >> 1).
inline std::uint32_t sobolDimension0(std::uint32_t index) { return reverseBits(index); }

namespace detail {
// Dimension 1 is linear over GF(2) in the index bits: the XOR of v_i over the set bits i, and so is its bit
// reversal. Tabulated a byte at a time, bytes[k][b] = XOR of v_{8k+t} over the set bits t of b (reversed[k][b]
// the same of the reversed v), each takes four lookups instead of a loop of up to 32 unpredictable branches.
struct SobolDimension1Table {
  std::uint32_t bytes[4][256] = {};
  std::uint32_t reversed[4][256] = {};
  constexpr SobolDimension1Table() {
    std::uint32_t direction[32] = {};
    direction[0] = 1U << 31;
    for (int i = 1; i < 32; ++i) direction[i] = direction[i - 1] ^ (direction[i - 1] >> 1);
    for (int k = 0; k < 4; ++k)
      for (std::uint32_t b = 0; b < 256; ++b)
        for (int t = 0; t < 8; ++t)
          if (b & (1U << t)) {
            bytes[k][b] ^= direction[8 * k + t];
            reversed[k][b] ^= reverseBits(direction[8 * k + t]);
          }
  }
};
inline constexpr SobolDimension1Table kSobolDimension1{};

inline std::uint32_t byteTableXor(const std::uint32_t (&table)[4][256], std::uint32_t index) {
  return table[0][index & 0xffU] ^ table[1][(index >> 8) & 0xffU] ^ table[2][(index >> 16) & 0xffU] ^
         table[3][index >> 24];
}
}  // namespace detail

inline std::uint32_t sobolDimension1(std::uint32_t index) {
  return detail::byteTableXor(detail::kSobolDimension1.bytes, index);
}

inline float toUnitFloat(std::uint32_t x) {
  // 24 significant bits, so the result is < 1 exactly.
  return float(x >> 8) * (1.0f / 16777216.0f);
}

// Sample `index` of the dimension pair `pair` for one stream (a pixel, or the VPL path set):
//   shuffled = owenScramble(index, s0), x = owenScramble(sobolDimension0(shuffled), s1),
//   y = owenScramble(sobolDimension1(shuffled), s2),
// with the bit reversals that cancel left out (sobolDimension0 is a reversal, and owenScramble starts with one):
// the same numbers in fewer operations.
inline glm::vec2 sobolPair(std::uint32_t index, std::uint32_t streamSeed, std::uint32_t pair) {
  const std::uint32_t pairSeed = hashCombine(streamSeed, pair);
  const std::uint32_t shuffledReversed = detail::laineKarras(reverseBits(index), hashCombine(pairSeed, 0x5bd1e995U));
  const std::uint32_t shuffled = reverseBits(shuffledReversed);
  const std::uint32_t x = reverseBits(detail::laineKarras(shuffled, hashCombine(pairSeed, 1U)));
  const std::uint32_t y = reverseBits(detail::laineKarras(
      detail::byteTableXor(detail::kSobolDimension1.reversed, shuffled), hashCombine(pairSeed, 2U)));
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
