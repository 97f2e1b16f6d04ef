#pragma once
// The texel-to-texel system behind the gathering solver, made explicit for checking it (the seed
// paper's Fig. 4 compares its GPU solution with a Gauss–Seidel solve of the full form-factor
// system). The same hemicubes as the solver's (same eyes, rotations, resolution and rasteriser)
// are rendered once with texel ids instead of radiance; the form factor from texel i to texel j is
// the multiplier-map weight of the pixels of i's hemicube that see j:
//   F_ij = Σ_{pixels k of i seeing j} w_k,      Σ_j F_ij ≤ 1 (= 1 in a closed scene),
// and the radiance system is  L_i = L_e,i + ρ_i Σ_j F_ij L_j.
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <vector>

namespace ibrr::lightmap {

// A sparse row per hemicube (valid texel, in validTexels() order); columns are hemicube indices.
struct TexelFormFactors {
  std::vector<std::uint32_t> texels;  // atlas index of hemicube i's texel
  std::vector<std::size_t> rowStart;  // row i is [rowStart[i], rowStart[i + 1])
  std::vector<std::uint32_t> column;  // j, ascending within a row
  std::vector<float> factor;          // F_ij
  [[nodiscard]] std::size_t size() const { return texels.size(); }
};

// Renders every valid texel's hemicube at resolution H (with the solver's eye placement and the
// rotations of `seed`) into texel-id targets, `layers` at a time, and sums the multiplier map per
// seen texel. A GL 4.5 context must be current.
TexelFormFactors computeTexelFormFactors(const scene::Scene& scene, const LightmapAtlas& atlas,
                                         const PatchList& patches, int resolution, std::uint32_t seed,
                                         bool randomRotation, int layers);

// Per-hemicube L_e and ρ, in the order of `factors`.
struct TexelSystem {
  const TexelFormFactors& factors;
  std::vector<glm::dvec3> emission;
  std::vector<glm::dvec3> albedo;
  TexelSystem(const TexelFormFactors& f, const PatchList& patches);
};

// One Jacobi step: next_i = L_e,i + ρ_i Σ_j F_ij current_j (every row from the previous iterate).
void jacobiStep(const TexelSystem& system, const std::vector<glm::dvec3>& current, std::vector<glm::dvec3>& next);
// One Gauss–Seidel sweep in place, rows in order: row i already uses the new values of rows < i.
void gaussSeidelSweep(const TexelSystem& system, std::vector<glm::dvec3>& radiance);

}  // namespace ibrr::lightmap
