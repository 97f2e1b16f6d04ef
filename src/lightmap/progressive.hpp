#pragma once
// Progressive refinement radiosity on the GPU (Coombe & Harris, GPU Gems 2 ch. 39) on the shared
// lightmap atlas. Every valid texel holds its radiance L and its residual ("unshot") radiance ΔL
// (W·sr⁻¹·m⁻², B = πL), both starting at L_e. A shot:
//
//  1. next shooter: the cluster (a block of up to B×B texels of one chart, the chapter's
//     substructuring) of largest residual power Φ_c = π Σ_{s∈c} mean_rgb(ΔL_s) A_s, found by a
//     compute-shader reduction; 16 bytes are read back (cluster, its power, the total residual);
//  2. visibility: one pass of hemispherical projection (the chapter's listing 39-2: x, y = the
//     unit direction's tangent components; depth projected separately, here the exact distance
//     per fragment) of the tessellated scene from the cluster's centroid into a distance + chart
//     buffer;
//  3. one compute pass over the whole atlas: every receiver r that the buffer shows visible gets
//       ΔL_r = ρ_r · ΔL_c · A_c · max(cosθ_r cosθ_c, 0) / (π d² + A_c)
//     (the disc form factor from r to a disc of the cluster's area A_c, exact for a coaxial disc),
//     added to L_r and ΔL_r; the cluster's residual is zeroed. ΔL_c = Σ ΔL_s A_s / A_c. Receivers
//     nearer than 4√A_c sum the cluster's texels instead, each by its exact polygon form factor
//     (Lambert) within 5 texel sides, else its own disc: the disc formula alone loses up to 18%
//     of a shot's power next to the shooter (shaders/lightmap_shoot_update.comp).
//
// It stops when the residual power falls below a fraction of the emitted power, after a number
// of shots, or at a time budget. Unshot residual light is missing from L (no ambient term).
//
// Adaptive subdivision (§39.3; ProgressiveOptions::adaptive, lightmap/quadtree.hpp): the unknowns
// are the elements of quadtree leaves instead of texels; after every shot the leaves whose
// radiance has a large second difference split in four (children keep the parent's L and ΔL),
// and the children take that shot again at their own size (update pass over them only). The
// result is the finest level's atlas, interpolated from the elements.
#include "lightmap/atlas.hpp"
#include "lightmap/quadtree.hpp"
#include "scene/scene.hpp"
#include "util/progress.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ibrr::lightmap {

// `ibrr bake --method progressive --adaptive`'s defaults (README, "Adaptive subdivision"): the
// roots' atlas side (the finest level is 2^depth times as dense) and the shooters' blocks in roots
// (the uniform default's blocks in scene units). The quadtree's: QuadtreeOptions.
inline constexpr int kAdaptiveDefaultRootAtlas = 128;
inline constexpr int kAdaptiveDefaultClusterRoots = 4;

struct ProgressiveOptions {
  int clusterTexels = 8;           // B: reflecting surfaces shoot from blocks of up to B×B texels of a chart, [1, 64]
  int emitterClusterTexels = 1;    // the same for texels with emission (sharp direct shadows), [1, 64]
  int hemisphereResolution = 512;  // the visibility buffer's side in pixels, [16, 4096]
  // Visibility pass tessellation: triangles are split until no edge is longer than this fraction
  // of the scene's bounding-box diagonal (hemispherical projection bends edges; straight
  // rasterised edges need short ones). 0 = no tessellation. In [0, 1].
  double maxEdgeFraction = 1.0 / 32.0;
  double residualFraction = 0.005;    // stop when residual power < this × emitted power; 0 = off
  std::uint64_t maxShots = 0;         // stop after this many shots; 0 = no limit
  double timeBudgetSeconds = 0.0;     // stop after the shot that ends past this; 0 = none
  std::uint64_t checkpointShots = 0;  // call onCheckpoint every this many shots (0 = only at the end)
  // Adaptive subdivision (§39.3; lightmap/quadtree.hpp), off while adaptive.depth = 0. On, the
  // atlas given to solveProgressive() must be built at 2^depth times the roots' density
  // (finestAtlasOptions()), and clusterTexels / emitterClusterTexels count roots, not texels.
  QuadtreeOptions adaptive{.depth = 0};
  std::uint64_t splitEveryShots = 1;  // look for leaves to split after every this many shots, ≥ 1
  bool drawLeafBorders = false;       // darken the leaves' borders in the result (a picture of the subdivision)
};

// Throws ibrr::Error naming the flag (--cluster, --emitter-cluster, --hemisphere, --max-edge,
// --residual, --time-budget, --split-every and the quadtree's) for an out-of-range value. solveProgressive()
// checks too. With residualFraction, maxShots and timeBudgetSeconds all 0 it is refused: the
// solve would never stop.
void validateProgressiveOptions(const ProgressiveOptions& options);

struct ProgressiveCheckpoint {
  std::uint64_t shots = 0;        // shots so far
  double seconds = 0.0;           // wall time since the solve started
  double residualFraction = 0.0;  // Σ residual power / Σ emitted power (powers: π · mean of RGB · area)
  glm::dvec3 meanRadiance{0.0};   // mean L over valid texels (W·sr⁻¹·m⁻²)
};

struct ProgressiveResult {
  Lightmap lightmap;
  std::vector<ProgressiveCheckpoint> checkpoints;  // the last one is the end of the solve
  std::uint64_t shots = 0;
  std::vector<float> shotPowers;        // per shot, the shooter's residual power Φ_c (as emittedPower)
  std::vector<float> shotResiduals;     // per shot, the residual fraction just before it
  std::size_t clusters = 0;             // shooters available (texel blocks)
  std::size_t visibilityTriangles = 0;  // triangles of the visibility pass after tessellation
  std::size_t sceneTriangles = 0;       // before
  double emittedPower = 0.0;            // Σ π mean_rgb(L_e) A over texels (W per channel, averaged)
  double seconds = 0.0;                 // the whole solve, set-up included
  double shootSeconds = 0.0;            // the shots alone (selection, visibility, update)
  std::string stopReason;               // "residual", "shots" or "time"
  std::size_t elements = 0;             // radiosity elements at the end (valid texels; adaptive: the leaves' texels)
  std::vector<QuadtreeLeaf> leaves;     // adaptive: the quadtree's leaves at the end
  std::size_t leafSplits = 0;           // adaptive: leaves split during the solve
  double splitSeconds = 0.0;            // adaptive: the split tests, splits and re-shots (within shootSeconds)
};

// Called every checkpointShots shots and at the end with the figures and the current L (width ×
// height texels, 0 on invalid ones; read back from the GPU only for this call).
using ProgressiveCheckpointCallback =
    std::function<void(const ProgressiveCheckpoint& checkpoint, std::span<const glm::vec3> radiance)>;
// The shots after which the residual fraction first fell to `fraction` or below (e.g. 0.1 for 90%
// convergence); result.shots + 1 when it never did.
std::uint64_t shotsToResidual(const ProgressiveResult& result, double fraction);

// Progress (util/progress.hpp): phase "progressive", after every shot the shots so far (of maxShots, 0 when
// unbounded) with the residual fraction as the note.

// Throws ibrr::Error naming the scene file when it has point or spot lights (no texels to shoot
// from) or no emissive surface. No GPU needed; solveProgressive() checks too.
void checkProgressiveScene(const scene::Scene& scene);

// Solves the lightmap on the GPU; a GL 4.5 context must be current on this thread. Emitters must
// be emissive surfaces (point and spot lights have no texels: refused). The result's atlasOptions
// carry only the atlas's density: the caller sets the options it built the atlas with. Throws
// ibrr::Interrupted on Ctrl-C (checked every shot), ibrr::Error on bad options.
[[nodiscard]] ProgressiveResult solveProgressive(const scene::Scene& scene, const LightmapAtlas& atlas,
                                                 const PatchList& patches, const ProgressiveOptions& options,
                                                 const ProgressiveCheckpointCallback& onCheckpoint = {},
                                                 const ProgressObserver& onProgress = {});

// The settings of a solve as one JSON object (for Lightmap::settingsJson and reports).
std::string progressiveSettingsJson(const ProgressiveOptions& options);

}  // namespace ibrr::lightmap
