#pragma once
// Stochastic iteration radiosity on the GPU with perspective ray-bundle shooting (Barta & Szirmay-
// Kalos, seed 000) on the shared lightmap atlas. Every valid texel holds the running average L̃ of
// its radiance (W·sr⁻¹·m⁻²) and the last iterate L, both L_e at the start. Iteration m applies a
// random transport operator T* to the shooting source L_src (the last iterate by default, or L̃ as
// in the paper: StochasticShootFrom):
//
//  1. shooters: S texels j drawn with probability P_j = lum(L_j) A_j / Φ, Φ = Σ_i lum(L_i) A_i
//     (L = L_src; lum: Rec. 709 luminance), by descending a sum pyramid of lum(L) A over the atlas
//     on the GPU (the paper's §3.1 mipmap walk, not its CPU linear search); each shoots the
//     cluster c it belongs to (a block of B×B texels of its chart, as progressive refinement's
//     substructuring; B = 1 is the paper's texel shooter), drawn so with P_c = Σ_{j∈c} P_j;
//     32 bytes per shooter come back;
//  2. first pass, per shooter: the tessellated scene by hemispherical projection from c's centroid
//     into a distance + chart buffer (shooting.hpp, the same visibility pass as progressive refinement);
//  3. second pass, one compute pass over every valid texel x: the transported radiance
//       (T* L)(x) = (1/S) Σ_s ρ_x · L_c / P_c · F(x → c) · V(x, c)
//     with F c's form factor seen from x: A_c cosθ_x cosθ_c / (π d² + A_c) for d ≥ 4√A_c, nearer
//     the sum of its texels' exact polygon form factors (each with its own L_j) — the kernel of
//     progressive refinement, so E[T* L] is exactly the operator it solves with the same clusters.
//     A cluster spreads a near shot over B² texels: B² times fewer, B² times weaker bright spots
//     next to reflecting shooters than texel shooters, the main noise of the paper's estimator;
//     then the iterate and the running average (the paper's eq. 2 when L_src = L̃_{m−1})
//       L_m = L_e + T* L_src,   L̃_m = L_m / n + (1 − 1/n) L̃_{m−1}
//     with n = m, or n = m − W after W warm-up iterations (L̃_m = L_m during them).
//
// E[T* L] = T L, so L̃_m converges in expectation to the solution of L = L_e + T L; shooting the
// last iterate, its noise falls as 1/√m and the start's bias as 1/m. A run is deterministic for a seed.
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

// The documented default atlas (`ibrr bake --method stochastic`, `ibrr compare`): the side the
// charts fill, chosen on the Cornell box (README, "Stochastic iteration").
inline constexpr int kDefaultStochasticAtlasSize = 256;

// What a shot carries (the shooting source L_src of  L_m = L_e + T* L_src):
//  - RunningAverage: L̃_{m−1}, the paper's eq. 2. Any error of the start (L̃_0 = L_e lacks all
//    reflected light) then decays only as m^−(1−λ), λ the dominant eigenvalue of T (in the furnace,
//    exactly Γ(m + a) / (Γ(a) Γ(m + 1)) ≈ m^(a−1) / Γ(a) of it remains): slower than 1/√m once
//    λ > ½, and so is the noise (each iterate's fresh noise is remembered the same way).
//  - LastIterate: L_{m−1}, the plain random iteration L_m = L_e + T* L_{m−1} (a Markov chain whose
//    mean converges geometrically, as λ^m), averaged: L̃_m is the mean of L_{W+1} … L_m after W
//    warm-up iterates (the chain's start, which lacks reflected light, left out of the average), so
//    its bias falls as λ^W/m and its noise as 1/√m whatever λ. The default.
enum class StochasticShootFrom { LastIterate, RunningAverage };

struct StochasticOptions {
  int shootersPerIteration = 16;   // S: shooters batched into one iteration, [1, 64]
  int clusterTexels = 4;           // B: reflecting texels shoot as blocks of up to B×B texels of a chart, [1, 16]
  int emitterClusterTexels = 1;    // the same for texels with emission (1: sharp direct shadows), [1, 16]
  int hemisphereResolution = 256;  // the visibility buffer's side in pixels, [16, 4096]
  // Visibility pass tessellation, as ProgressiveOptions::maxEdgeFraction (fraction of the scene
  // diagonal; 0 = none). In [0, 1].
  double maxEdgeFraction = 1.0 / 32.0;
  std::uint64_t iterations = 1024;    // m at the end; 0 = until the time budget
  double timeBudgetSeconds = 0.0;     // stop after the iteration that ends past this; 0 = none
  std::uint32_t seed = 1;             // the shooters' random numbers
  StochasticShootFrom shootFrom = StochasticShootFrom::LastIterate;
  // W: with LastIterate, the first W iterates are not averaged (λ^W of the start remains; the
  // Cornell box's λ ≈ 0.6 leaves 2% of it at W = 8, then divided by m). Counted in iterations.
  std::uint64_t warmupIterations = 8;
  std::uint64_t checkpointIterations = 0;  // call onCheckpoint every this many iterations (0 = only at the end)
};

// Throws ibrr::Error naming the flag (--shooters, --cluster, --emitter-cluster, --hemisphere, --max-edge, --iterations,
// --time-budget) for an out-of-range value; with iterations and timeBudgetSeconds both 0 the solve
// would never stop: refused. solveStochastic() checks too.
void validateStochasticOptions(const StochasticOptions& options);

struct StochasticCheckpoint {
  std::uint64_t iterations = 0;  // m so far
  double seconds = 0.0;          // wall time since the solve started
  glm::dvec3 meanRadiance{0.0};  // mean L̃ over valid texels (W·sr⁻¹·m⁻²)
};

struct StochasticResult {
  Lightmap lightmap;
  std::vector<StochasticCheckpoint> checkpoints;  // the last one is the end of the solve
  std::uint64_t iterations = 0;
  std::uint64_t shots = 0;                // iterations × S
  std::uint64_t emitterShots = 0;         // shots of clusters with emission
  std::size_t clusters = 0;               // shooters available (texel blocks)
  std::size_t visibilityTriangles = 0;    // triangles of the visibility pass after tessellation
  std::size_t sceneTriangles = 0;         // before
  int pyramidLevels = 0;                  // levels of the selection pyramid, the atlas included
  double seconds = 0.0;                   // the whole solve, set-up included
  double iterateSeconds = 0.0;            // the iterations alone
  double selectSeconds = 0.0;             // of which pyramid, descent and the shooters' read-back
  std::string stopReason;                 // "iterations" or "time"
};

// Called every checkpointIterations iterations and at the end with the figures and the current L̃
// (width × height texels, 0 on invalid ones; read back from the GPU only for this call).
using StochasticCheckpointCallback =
    std::function<void(const StochasticCheckpoint& checkpoint, std::span<const glm::vec3> radiance)>;
// Progress (util/progress.hpp): phase "stochastic", after every iteration m so far of those planned (0 when a
// time budget ends it).

// Throws ibrr::Error naming the scene file when it has point or spot lights (no texels to shoot
// from) or no emissive surface. No GPU needed; solveStochastic() checks too.
void checkStochasticScene(const scene::Scene& scene);

// Solves the lightmap on the GPU; a GL 4.5 context must be current on this thread. Emitters must be
// emissive surfaces (point and spot lights have no texels: refused by checkStochasticScene()). The
// result's atlasOptions carry only the atlas's density. Throws ibrr::Interrupted on Ctrl-C (checked
// every iteration), ibrr::Error on bad options.
[[nodiscard]] StochasticResult solveStochastic(const scene::Scene& scene, const LightmapAtlas& atlas,
                                               const PatchList& patches, const StochasticOptions& options,
                                               const StochasticCheckpointCallback& onCheckpoint = {},
                                               const ProgressObserver& onProgress = {});

// The settings of a solve as one JSON object (for Lightmap::settingsJson and reports).
std::string stochasticSettingsJson(const StochasticOptions& options);

}  // namespace ibrr::lightmap
