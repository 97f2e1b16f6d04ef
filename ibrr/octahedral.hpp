#pragma once
// Unit normals packed as two 16-bit signed-normalised octahedral coordinates in one uint32 (Cigolle et al. 2014,
// "A Survey of Efficient Representations for Independent Unit Vectors"). Low 16 bits: x, high 16 bits: y.
// Worst-case angular error about 2e-5 rad, far below the plane-matching tolerance ε_n.
// The same decode is meant to run in GLSL (unpackSnorm2x16 then the same folding), so keep the two in step.

#include <glm/glm.hpp>

#include <cmath>
#include <cstdint>

namespace ibrr {

namespace detail {
inline float signNotZero(float v) { return v >= 0.0f ? 1.0f : -1.0f; }
// Round to nearest (halves away from zero) without a libm call: this runs once per inserted sample.
inline std::int16_t toSnorm16(float v) {
  const float c = v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v);
  const float scaled = c * 32767.0f;
  return static_cast<std::int16_t>(scaled >= 0.0f ? scaled + 0.5f : scaled - 0.5f);
}
}  // namespace detail

// n: any non-zero vector (normalised here by its L1 norm). Returns the packed code.
inline std::uint32_t octEncode(const glm::vec3& n) {
  const float l1 = std::fabs(n.x) + std::fabs(n.y) + std::fabs(n.z);
  float x = n.x / l1;
  float y = n.y / l1;
  if (n.z < 0.0f) {
    const float fx = (1.0f - std::fabs(y)) * detail::signNotZero(x);
    const float fy = (1.0f - std::fabs(x)) * detail::signNotZero(y);
    x = fx;
    y = fy;
  }
  const auto ux = static_cast<std::uint16_t>(detail::toSnorm16(x));
  const auto uy = static_cast<std::uint16_t>(detail::toSnorm16(y));
  return static_cast<std::uint32_t>(ux) | (static_cast<std::uint32_t>(uy) << 16);
}

// Any 32-bit code decodes to a unit vector (no NaN), so codes read from files need no validation.
inline glm::vec3 octDecode(std::uint32_t code) {
  const auto sx = static_cast<std::int16_t>(static_cast<std::uint16_t>(code & 0xffffu));
  const auto sy = static_cast<std::int16_t>(static_cast<std::uint16_t>(code >> 16));
  // -32768 clamps to -1 exactly as GLSL unpackSnorm2x16 does.
  float x = static_cast<float>(sx) / 32767.0f;
  float y = static_cast<float>(sy) / 32767.0f;
  x = x < -1.0f ? -1.0f : x;
  y = y < -1.0f ? -1.0f : y;
  const float z = 1.0f - std::fabs(x) - std::fabs(y);
  if (z < 0.0f) {
    const float fx = (1.0f - std::fabs(y)) * detail::signNotZero(x);
    const float fy = (1.0f - std::fabs(x)) * detail::signNotZero(y);
    x = fx;
    y = fy;
  }
  return glm::normalize(glm::vec3(x, y, z));
}

}  // namespace ibrr
