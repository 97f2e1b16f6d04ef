#pragma once
// One hemicube's worth of surface samples, the unit of insertion into the LDC, and the footprint helpers the
// bake uses to fill it.
//
// The bake renders the five faces of a hemicube around a virtual point light (VPL) at `centre`; every covered
// hemicube pixel becomes one sample: the surface point it sees, that surface's normal, the radiosity the VPL
// gives there, and the surface area the pixel covers.

#include <glm/glm.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace ibrr {

// Smallest |cos θ| used in footprint formulas: at more grazing angles a single hemicube pixel would cover an
// unbounded strip of surface (area ∝ 1/cos θ); 0.01 corresponds to 89.4°.
inline constexpr float kMinFootprintCos = 0.01f;

// Non-owning view of one hemicube's samples, structure-of-arrays; all spans have the same length.
// The bake can point it straight at its read-back buffers.
struct HemicubeSampleView {
  glm::vec3 centre{0.0f};                // hemicube (VPL) position, world units
  std::span<const glm::vec3> positions;  // surface point seen by each pixel, world units
  std::span<const glm::vec3> normals;    // surface normal there, unit length (renormalised anyway),
                                         // on the side facing the centre
  std::span<const glm::vec3> values;     // radiosity contribution I·g(x) per channel, W/m² (≥ 0, finite)
  std::span<const float> footprints;     // surface area the pixel covers, m² (see footprintArea), ≥ 0

  std::size_t size() const { return positions.size(); }
};

// Owning container with the same layout, for CPU producers and tests.
struct HemicubeSamples {
  glm::vec3 centre{0.0f};
  std::vector<glm::vec3> positions;
  std::vector<glm::vec3> normals;
  std::vector<glm::vec3> values;
  std::vector<float> footprints;

  std::size_t size() const { return positions.size(); }
  void reserve(std::size_t n);
  void clear();
  void add(const glm::vec3& position, const glm::vec3& normal, const glm::vec3& value, float footprint);
  HemicubeSampleView view() const { return {centre, positions, normals, values, footprints}; }
};

// Surface area covered by one hemicube pixel, m².
//   solidAngle: the pixel's solid angle seen from the hemicube centre, sr (hemicubePixelSolidAngle), > 0
//   distance:   r, from the centre to the surface point, world units (m), ≥ 0
//   cosTheta:   cosine between the surface normal and the direction back to the centre, [0, 1]
// The pixel's cone cuts a patch of area dω·r² perpendicular to the ray; on a surface tilted by θ that patch is
// stretched by 1/cos θ along the tilt:  A = dω·r² / cos θ.  cos θ is clamped to kMinFootprintCos.
float footprintArea(float solidAngle, float distance, float cosTheta);

// Solid angle (sr) of a hemicube pixel centred at (a, b) on a face at unit distance from the centre, with pixel
// side `pixelSide` in the same face units (2/H for a full face of H pixels spanning [-1, 1]):
//   dω = pixelSide² · cos α / ρ² = pixelSide² / (1 + a² + b²)^{3/2},   ρ² = 1 + a² + b², cos α = 1/ρ.
// Over all five faces of a hemicube these sum to 2π.
float hemicubePixelSolidAngle(float a, float b, float pixelSide);

}  // namespace ibrr
