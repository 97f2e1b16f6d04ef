#pragma once
// The direct light of every store layer by shadow rays (`ibrr bake --direct rays`): the irradiance (W/m², the
// store's unit) that the lights send straight to the layer's surface,
//
//     E(x) = Σ_emitters ∫_A L_e · cosθx cosθy / r² · V(x, y) dA(y)  +  Σ_point,spot I(ω)·cosθx / r² · V(x, light),
//
// estimated at `points` points jittered over the layer's pixel on its surface (layer_points.hpp) and averaged
// over those that found it. A layer whose first 4 points all found the surface, cast no cosine rays, saw every
// shadow ray agree (all reached or all blocked) and whose points' irradiances lie within 2% of their mean from a
// plane across the pixel stops at those 4, with the plane's mean: no penumbra or surface edge crosses its pixel
// and its light changes evenly across it. Each emissive triangle takes `samplesPerLight` uniform points per layer
// point, the points·samplesPerLight of a layer one scrambled-Sobol set over the triangle (stratified across the
// pixel's points too); where none of a point's shadow rays to it was blocked, its unshadowed light in closed form
// replaces their estimate. A point or spot light is evaluated exactly, with one shadow ray per layer point. A
// point near an emissive triangle (within one longest edge of its centre, in front of it) also casts 16 cosine
// rays, and the two strategies are combined by multiple importance sampling (power heuristic). Emissive surfaces
// are lights here exactly as in the reference path tracer (rays/light_set.hpp), and no geometry term is clamped,
// so this replaces the hemicubes of the VPLs on the lights. Each layer draws its numbers from its own stream:
// the result is the same byte for byte whatever the thread count.
#include "ibrr/ldc.hpp"
#include "rays/embree_scene.hpp"
#include "rays/light_set.hpp"
#include "util/progress.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <vector>

namespace ibrr::bake {

struct DirectLightOptions {
  std::uint32_t points = 16;          // jittered points per layer (4 where they agree; direct_light.hpp)
  std::uint32_t samplesPerLight = 2;  // shadow rays per point and emissive triangle (BakeOptions::directSamples)
  std::uint32_t seed = 0;
};

struct DirectLightStats {
  std::uint64_t rays = 0;                  // probe and shadow rays
  std::uint64_t layersWithoutSurface = 0;  // layers none of whose points found their surface (they get 0)
  double seconds = 0.0;
};

// The pass reports its layers (done of total) as this phase of a ProgressObserver.
inline constexpr const char* kDirectLightPhase = "direct light";

// E(x) of every layer of `store`, in layer order. Throws ibrr::Interrupted on Ctrl-C.
std::vector<glm::vec3> directLightPerLayer(const LayeredDepthCube& store, const rays::EmbreeScene& embree,
                                           const rays::LightSet& lights, const DirectLightOptions& options,
                                           DirectLightStats& stats, const ProgressObserver& progress = {});

}  // namespace ibrr::bake
