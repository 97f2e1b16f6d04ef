#pragma once
// What the form-factor matrix solver's files share and nothing else includes: the static scene that shadow
// rays test, and the direct light per patch (matrix_direct.cpp).
#include "lightmap/matrix.hpp"
#include "rays/embree_scene.hpp"
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace ibrr::lightmap {

// The scene without its emissive triangles: what shadow rays to the (movable) lights test.
std::unique_ptr<scene::Scene> staticScene(const scene::Scene& scene);

// D_i = ρ_i/π · E_i per patch (see matrix.hpp), with shadow rays against the static scene: `samples` per
// surface light (spread over its triangles by area), the lights moved by `offsets` (none: where they are).
std::vector<glm::vec3> directLight(const scene::Scene& scene, const rays::EmbreeScene& shadows,
                                   const MatrixSolution& solution, const std::vector<MatrixLight>& lights,
                                   std::span<const glm::vec3> offsets, int samples, std::uint32_t seed);

}  // namespace ibrr::lightmap
