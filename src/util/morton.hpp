#pragma once
// Morton order (Z-order) of points in a box: nearby points get nearby codes, so sorting triangles by the code
// of their centroids gives spatially compact runs (the scene renderer's draw chunks, the gathering solver's
// culling chunks).
#include <glm/glm.hpp>

#include <cstdint>

namespace ibrr {

// The 30-bit Morton code of p's cell in the box [lower, lower + extent]: each axis cut into 1024 cells (p
// outside the box is clamped to it), the bits of the three cell indices interleaved, x lowest.
inline std::uint32_t mortonCode(const glm::vec3& p, const glm::vec3& lower, const glm::vec3& extent) {
  const glm::uvec3 cell =
      glm::uvec3(glm::clamp((p - lower) / glm::max(extent, glm::vec3(1e-30f)), 0.0f, 1.0f) * 1023.0f);
  auto spread = [](std::uint32_t v) {  // the low 10 bits of v to every third bit
    v &= 0x3ffu;
    v = (v | (v << 16)) & 0x030000ffu;
    v = (v | (v << 8)) & 0x0300f00fu;
    v = (v | (v << 4)) & 0x030c30c3u;
    v = (v | (v << 2)) & 0x09249249u;
    return v;
  };
  return spread(cell.x) | (spread(cell.y) << 1) | (spread(cell.z) << 2);
}

}  // namespace ibrr
