#pragma once
// Points on a store layer's surface, for the passes that trace rays from every layer (the direct light and the
// bias compensation). A layer stands for the part of its LDI pixel its surface covers (ibrr/ldc.hpp: the
// area-weighted mean of the samples there), so a pass estimates at points jittered over the pixel on the layer's
// plane and projected onto the surface by a probe ray along the plane's normal; a jitter that misses the surface
// (the pixel straddles a wall's end) is not counted.
#include "ibrr/ldc.hpp"
#include "rays/embree_scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace ibrr::bake {

// The surface under `point`: the first surface a probe ray along −`normal` finds within `reach` on either side
// of it, with its normals turned to the side `normal` points to, if its shading normal is within
// n'·n > `minCos` of `normal`.
std::optional<rays::SurfacePoint> surfaceUnder(const rays::EmbreeScene& embree, const glm::vec3& point,
                                               const glm::vec3& normal, float reach, float minCos, std::uint64_t& rays);

// The surface point of layer `layerIndex` (in global pixel `pixel`) of `store` at `jitter` ∈ [0, 1)² across the
// pixel: on the layer's plane within ε_d and facing its way within ε_n, or none. Counts its probe ray.
std::optional<rays::SurfacePoint> layerSurfacePoint(const rays::EmbreeScene& embree, const LayeredDepthCube& store,
                                                    std::uint32_t pixel, std::uint32_t layerIndex,
                                                    const glm::vec2& jitter, std::uint64_t& rays);

// A value for every layer of the pixels [firstPixel, endPixel) of a store, estimated in parallel (TBB): what the
// estimate of each layer gave (zero for the layers outside the pixels), its rays, and the layers none of whose
// points found their surface. `estimate(pixel, layer, rays, foundSurface)` counts its rays and says whether its
// surface was found; `advance(count)` hears how many layers are done. Throws ibrr::Interrupted on Ctrl-C.
struct PerLayerValues {
  std::vector<glm::vec3> values;  // in store layer order
  std::uint64_t rays = 0;
  std::uint64_t layersWithoutSurface = 0;
};
using LayerEstimate =
    std::function<glm::vec3(std::uint32_t pixel, std::uint32_t layer, std::uint64_t& rays, bool& foundSurface)>;
PerLayerValues estimatePerLayer(const LayeredDepthCube& store, std::uint32_t firstPixel, std::uint32_t endPixel,
                                const LayerEstimate& estimate, const std::function<void(std::uint64_t)>& advance);

// `store` with `added[k]` (irradiance, W/m²) added to its layer k.
LayeredDepthCube withAddedRadiosity(const LayeredDepthCube& store, const std::vector<glm::vec3>& added);
// `store`'s layers holding `values[k]` (irradiance, W/m²) in place of their own radiosity.
LayeredDepthCube withRadiosity(const LayeredDepthCube& store, const std::vector<glm::vec3>& values);

}  // namespace ibrr::bake
