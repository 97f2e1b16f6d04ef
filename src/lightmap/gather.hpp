#pragma once
// The hemicube gathering solver (Tjahyono, Lutteroth & Wünsche, "GPGPU accelerated texture-based
// radiosity calculation"): every valid lightmap texel renders a hemicube of the scene textured
// with the current lightmap, the multiplier map weights it and a compute-shader reduction gives
// its irradiance; Jacobi iterations
//   L_{k+1} = L_e + ρ · Σ_j w_j L_k(seen by pixel j)        (radiance, W·sr⁻¹·m⁻²)
// from L_0 = L_e run until the largest relative change falls below a tolerance, an iteration count
// is reached or a time budget ends. Iterate k holds all light paths of up to k bounces.
//
// As in the IBRR bake (H on the lights, h after a bounce), the first gather, which sees the
// emitters and so carries the direct light, may use a finer hemicube than the later ones, which
// only gather reflected light:  L_1 = L_e + ρ·G_H(L_e) = L_e + D,  L_{k+1} = L_e + D + ρ·G_h(L_k − L_e).
// With h = H this is exactly the Jacobi iteration above.
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"
#include "util/progress.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ibrr::lightmap {

// The documented defaults (`ibrr bake --method gather`, `ibrr compare --quality final`), chosen on
// the Cornell box as the cheapest that meet 5% relRMSE against the reference (README, "Gathering
// solver"): a 96-texel target atlas with the GatherOptions defaults below.
inline constexpr int kDefaultGatherAtlasSize = 96;

struct GatherOptions {
  int hemicubeResolution = 64;          // H, the first gather (direct light): even, in [2, 1024]
  int indirectHemicubeResolution = 32;  // h, later gathers: even, ≤ H; 0 = H
  int layersPerBatch = 0;               // hemicubes per instanced draw (texture-array layers); 0 = automatic
  int maxIterations = 8;                // Jacobi iterations at most (≥ 1)
  double tolerance = 0.0;               // stop when the max relative change of an iteration is below it; 0 = off
  double timeBudgetSeconds = 0.0;       // stop after the iteration that ends past this; 0 = none
  std::uint32_t seed = 1;               // the hemicubes' fixed rotations about the normal
  bool randomRotation = true;           // false: one tangent frame for all (banding instead of noise)
};

// Throws ibrr::Error naming the flag (--hemicube, --indirect-hemicube, --layers, --iterations,
// --tolerance, --time-budget) for an out-of-range value. solveGather() checks too.
void validateGatherOptions(const GatherOptions& options);

// The hemicubes per batch that layersPerBatch = 0 chooses at resolution H, as many as fit a
// texture-array budget (RGBA32F + 32-bit depth, 60·H² bytes per layer), in [4, 256]. On a GPU,
// 96 MiB: more hemicubes per draw amortise the draw (H100: 256 layers give 2.5–10× the hemicubes/s
// of one). On a software rasteriser (llvmpipe), 4 MiB: a batch that stays in the CPU caches for the
// reduction runs 1.5–2× faster than a 256-layer one (README, "Gathering solver").
int automaticLayersPerBatch(int resolution, bool softwareRenderer);

struct GatherIterationStats {
  int iteration = 0;              // 1, 2, ...
  int hemicubeResolution = 0;     // H of this iteration's gather
  double seconds = 0.0;           // wall time since the solve started (hemicubes, reductions, readback)
  double iterationSeconds = 0.0;  // this iteration alone
  // max over valid texels and channels of |L_k − L_{k−1}| / max(L_k, 10⁻² · mean L_k): the
  // floor keeps barely lit texels from dominating.
  double maxRelativeChange = 0.0;
  glm::dvec3 meanRadiance{0.0};  // mean L_k over valid texels (W·sr⁻¹·m⁻²)
};

struct GatherResult {
  Lightmap lightmap;
  std::vector<GatherIterationStats> iterations;
  std::size_t hemicubesPerIteration = 0;  // the valid texels
  int layersPerBatch = 0;                 // the batch size used
  double seconds = 0.0;                   // the whole solve, set-up included
};

// Called after every iteration with its figures and the iterate L_k (width × height texels, 0 on
// invalid ones), e.g. to record error against a reference per iteration.
using GatherIterationCallback =
    std::function<void(const GatherIterationStats& stats, std::span<const glm::vec3> radiance)>;
// Progress (util/progress.hpp): phase "gather", hemicubes done of those planned for maxIterations.

// Solves the lightmap on the GPU; a GL 4.5 context must be current on this thread. The result's
// atlasOptions carry only the atlas's density: the caller sets the options it built the atlas with. The scene's
// emitters must be emissive surfaces (point and spot lights have no texels: refused). Throws
// ibrr::Interrupted when Ctrl-C arrives (checked between batches), ibrr::Error on bad options.
[[nodiscard]] GatherResult solveGather(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                       const GatherOptions& options, const GatherIterationCallback& onIteration = {},
                                       const ProgressObserver& onProgress = {});

// Throws ibrr::Error naming the scene file when the gathering solver cannot light it: no emissive
// surface, or point and spot lights (which have no lightmap texels). solveGather() checks too.
void checkGatherScene(const scene::Scene& scene);

// The settings of a solve as one JSON object (for Lightmap::settingsJson and reports).
std::string gatherSettingsJson(const GatherOptions& options, int layersPerBatch);

// The atlas indices of the valid texels, in the order the solver renders their hemicubes.
std::vector<std::uint32_t> validTexels(const PatchList& patches);

// validTexels() for a solver: throws ibrr::Error when the patch list does not belong to the atlas
// or no texel is valid. Every texel solver starts with it.
std::vector<std::uint32_t> solverTexels(const LightmapAtlas& atlas, const PatchList& patches);

}  // namespace ibrr::lightmap
