#pragma once
// The IBRR bake (Mertens & Van Reeth 2002, §4): light paths place virtual point lights (VPLs);
// each VPL renders a hemicube on the GPU; every covered hemicube pixel is warped into the layered
// depth cube with its value Φ·g, its footprint and its normal. The GL thread renders hemicube k+1
// while TBB warps batch k, so the rasteriser and the CPU work at the same time.
#include "bake/bias_compensation.hpp"
#include "gpu/context.hpp"
#include "gpu/hemicube.hpp"
#include "ibrr/ldc.hpp"
#include "ibrr/ldc_builder.hpp"
#include "ibrr/splat.hpp"
#include "rays/vpl.hpp"
#include "scene/scene.hpp"
#include "util/progress.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace ibrr::bake {

// The automatic clamp distances of one method, as fractions of the scene diagonal (see BakeOptions): without
// bias compensation and with it. Compensated, a stronger clamp means less VPL noise and the compensation adds
// back what it removes, so the store's distance is chosen by measurement (Cornell box, 4096 paths, relRMSE
// against the 4096-spp reference: 3.21% at 0.09 with 2 passes, 2.99% at 0.18, 2.96% at 0.27, 3.04% at 0.36;
// at 0.27, 3 passes 2.83% and 4 passes 2.81%; docs/bias_compensation.md). Keller's per-pixel compensation runs
// one pass (its H(y) is the VPL sum itself, with no store to iterate on), which loses the recursion's light
// at a long distance, so it keeps the shorter one.
struct AutoClampDistances {
  float clamped = 0.0f;
  float compensated = 0.0f;
};
inline constexpr AutoClampDistances kStoreClampDistances{0.045f, 0.27f};
inline constexpr AutoClampDistances kKellerClampDistances{0.045f, 0.09f};

// Where the hemicube pixels are warped into the store (see gpu_insertion.hpp).
enum class WarpDevice {
  Automatic,  // the GPU on a hardware GL, the CPU on a software one (llvmpipe), where both share the cores
  Cpu,        // read each hemicube back and insert it with TBB (ibrr/ldc_builder.hpp)
  Gpu,        // insert it on the GPU where it was rendered, no readback (needs seedLayersFromGeometry)
};

// Where the direct light comes from (direct_light.hpp).
enum class DirectLight {
  Vpl,   // the paper's: the VPLs on the lights render hemicubes, clamped like every VPL
  Rays,  // shadow rays to the lights from every store layer, unclamped; hemicubes only after a bounce
};

inline constexpr int kMaxGpuBatchHemicubes = 2048;  // GL 4.5's least GL_MAX_ARRAY_TEXTURE_LAYERS

// The default bounces' level is R/8, and no coarser than this: its pixels hold the bounced light, which is
// smooth, and a coarse pixel gathers the samples of surfaces too thin for a bounce hemicube's pixels (the
// Sibenik nave's energy, 0.946 0.956 0.965 at R2 = 128 and 0.995 1.000 1.001 at 32; docs/benchmarks.md).
inline constexpr int kMinDefaultIndirectLdc = 32;

struct BakeOptions {
  std::uint32_t paths = 4096;           // N light paths (particles) leaving the lights
  std::uint32_t seed = 0;               // light-path sampling seed
  std::uint32_t maxBounces = 8;         // reflections after which a path stops (Cornell: 8 lose ≈ 0.2%)
  int ldcResolution = 256;              // R, pixels per LDI side
  // R2 of a second, coarser cube the VPLs after a bounce are warped into (their light is smooth); every layer
  // of the store then adds that level's light (ibrr::withIndirectLevel). 0 or R: one level; negative (the
  // default): R/8, at least kMinDefaultIndirectLdc (one level where R is no more).
  int indirectLdcResolution = -1;
  int hemicubeResolution = 128;         // H, for VPLs on the lights (sharp direct shadows), even
  int indirectHemicubeResolution = 64;  // h, for VPLs after a bounce (paper §4.1), even
  SplatKernel splat = SplatKernel::Box;
  // Upper bound on the geometry term g = I(ω)/Φ·cosθx/r² (1/area in scene units), against the
  // 1/r² singularity where a VPL sits near another surface (corners), which otherwise shows as
  // bright blotches. 0 = no clamp (unbiased); negative = automatic (the default): the value of
  // g for a Lambertian VPL facing a point at r = a fraction of the scene diagonal,
  // g_max = 1/(π r²) (kStoreClampDistances: 4.5%, or 27% with bias compensation). Uncompensated, it darkens
  // corners slightly (the Cornell box loses about 1% of its energy).
  float geometryClamp = -1.0f;
  float epsDistance = 0.0f;  // ε_d of the store, world units; 0 = the store's default (1 LDI pixel)
  float epsNormal = 0.0f;    // ε_n; 0 = the store's default
  // Create the store's layers from the triangles before any VPL (ibrr/surface_seeds.hpp), so that
  // every surface has its layer whatever the VPLs saw: no holes where no VPL looked, and a layer
  // structure (hence a display cost) that depends on the geometry alone. Off only for comparisons.
  bool seedLayersFromGeometry = true;
  // Stop adding light paths once the bake has run this long (seconds; 0 = no limit) and scale the
  // store to the paths completed. The result then depends on the machine's speed.
  double timeBudgetSeconds = 0.0;
  WarpDevice warp = WarpDevice::Automatic;
  // --warp gpu: the hemicubes drawn before they are warped, one atlas slot each; 0 (the default): as many as an
  // eighth of the GPU's free memory holds (at most 256), or 64 MiB's worth where the driver does not say (a
  // software GL). The store does not depend on it.
  int gpuBatchHemicubes = 0;  // at most kMaxGpuBatchHemicubes
  // After the warp, add to every layer the light the clamp removed there, estimated by rays from the layer
  // (bias_compensation.hpp). Only with a clamp (geometryClamp ≠ 0); the store file records it.
  bool biasCompensation = true;
  // The light paths this process bakes: [firstPath, endPath) of the `paths` (endPath 0 = up to `paths`). A rank's
  // share in a distributed bake (src/cluster/): every VPL keeps its power Φ/paths, so the shares' layer sums add
  // up to the whole bake's. A share bakes without a time budget or checkpoints.
  std::uint32_t firstPath = 0;
  std::uint32_t endPath = 0;
  std::uint32_t shareEnd() const { return endPath == 0 ? paths : endPath; }
  bool isShare() const { return firstPath != 0 || shareEnd() != paths; }
  std::uint32_t biasRays = 32;    // jittered points per layer in pass 1 (a quarter later), each one cosine ray
                                  // and one light sample
  std::uint32_t biasPasses = 3;   // 1: H(y) read from the clamped store; k: what pass k − 1's increment causes
  DirectLight direct = DirectLight::Rays;
  std::uint32_t directPoints = 16;  // --direct rays: jittered points per layer
  // --direct rays: shadow rays per point and emissive triangle. 2: where they all reach the light its closed form
  // stands (direct_light.hpp), so they mostly decide visibility; 4 gave the Cornell box 2.02% against 2.04% and
  // the Sibenik nave 11.9% against 12.1% relRMSE, in twice the direct pass's time (16.3 s against 8.9 s there).
  std::uint32_t directSamples = 2;
};

struct BakeStats {
  std::vector<std::size_t> vplsPerBounce;
  std::uint64_t hemicubes = 0;
  std::uint64_t hemicubePixels = 0;   // rendered (covered or not)
  std::uint64_t samplesInserted = 0;  // covered pixels warped into the store
  std::uint64_t trianglesSubmitted = 0;
  std::uint64_t renderPasses = 0;     // passes the hemicubes were drawn in (a batch a pass with the GPU warp)
  std::uint64_t warpDispatches = 0;   // the GPU warp's accumulating dispatches, over both levels (0: CPU warp)
  std::uint64_t warpBatchWaits = 0;   // the GPU warp: batches the host waited for, to keep two in flight
  std::uint64_t seedSamples = 0;      // geometry seeds (seedLayersFromGeometry)
  double seedSeconds = 0.0;           // making and inserting the seeds
  double vplSeconds = 0.0;            // light paths
  double renderSeconds = 0.0;         // CPU warp: GL submission + rasterisation (GL thread); GPU warp: the passes'
                                      // GPU time
  double readbackSeconds = 0.0;       // glGetTextureSubImage (GL thread; CPU warp only)
  double warpSeconds = 0.0;           // CPU: conversion to samples (on the GL thread or in the task, CpuWarp) +
                                      // LDC insertion (a TBB task, overlapped with rendering); GPU: the
                                      // insertion's GPU time, from its first dispatch to its last a batch
  double insertSeconds = 0.0;         // of which LDC insertion
  double waitSeconds = 0.0;           // GL thread waiting for the warp to free a batch (CPU warp)
  std::uint64_t pixelWrites = 0;      // (sample, LDI pixel) pairs the splats covered
  std::uint64_t seedLayers = 0;       // layers the geometry seeds made
  std::uint64_t openedLayers = 0;     // layers the hemicubes opened (surfaces the seeds lack)
  WarpDevice warp = WarpDevice::Cpu;  // the device that warped
  bool gpuTimes = false;              // render and warp seconds are the GPU's (the GPU warp on a hardware GPU)
  bool biasCompensated = false;       // the compensation pass ran (on, and the store was clamped)
  double biasSeconds = 0.0;           // the compensation pass (Embree, TBB), after the warp
  std::uint64_t biasRays = 0;         // its probe, cosine and shadow rays
  std::uint64_t biasLayersWithoutSurface = 0;  // layers whose jittered points all missed their surface
  std::uint32_t biasPointsPerLayer = 0;  // points a layer in its first pass
  int biasLevelResolution = 0;           // the R of the layers it estimated on (the store's, or the bounces' R2)
  int indirectLdcResolution = 0;      // R2 of the bounces' level, 0 when the bake has one level
  std::uint64_t indirectLevelWrites = 0;  // the LDI pixel writes of that level (included in pixelWrites)
  double levelSeconds = 0.0;          // adding the bounces' level to the store
  double directSeconds = 0.0;         // the direct-light pass (--direct rays; Embree, TBB), after the warp or beside it
  bool directBeside = false;          // the store level's seeding and direct pass ran beside the hemicubes
  double besideSeedSeconds = 0.0;     // that seeding (not in seedSeconds)
  double besideWaitSeconds = 0.0;     // the time the bake waited for them (and helped) after its hemicubes
  std::uint64_t directRays = 0;       // its probe and shadow rays
  std::uint64_t directLayersWithoutSurface = 0;  // layers none of whose points found their surface (0 direct)
  double totalSeconds = 0.0;          // wall time of the whole bake (checkpoint callbacks excluded)
  std::uint32_t pathsCompleted = 0;   // options.paths, or fewer when the time budget ended the bake
};

struct BakeResult {
  LayeredDepthCube store;
  BakeStats stats;
};

// The device options.warp resolves to on the current GL context.
WarpDevice resolveWarpDevice(WarpDevice requested);
// Where llvmpipe should rasterise a bake's hemicubes (the context the bake command makes): on the GL thread where
// the process has two cores or fewer, else on llvmpipe's own threads.
gpu::SoftwareRaster bakeSoftwareRaster();
const char* warpDeviceName(WarpDevice warp);                       // "cpu", "gpu" or "auto"
std::optional<WarpDevice> parseWarpDevice(std::string_view name);  // the inverse; nullopt for another name
const char* directLightName(DirectLight direct);                       // "vpl" or "rays"
std::optional<DirectLight> parseDirectLight(std::string_view name);   // the inverse; nullopt for another name

// Throws ibrr::Error naming the flag (--paths, --ldc, --hemicube, ...) for an option out of range.
// bakeStore() checks too; commands call it first to fail before loading anything.
void validateBakeOptions(const BakeOptions& options);

// The clamp bound on g that `options` asks for in this scene: 0 (none), the given value, or the
// automatic one at `distances` (the compensated one when options.biasCompensation).
float geometryClampFor(const scene::Scene& scene, const BakeOptions& options,
                       const AutoClampDistances& distances = kStoreClampDistances);

// True when the bake runs the bias compensation: it is on, the clamp is positive, and some VPL is clamped (the
// lights' own with --direct vpl; with --direct rays only VPLs after a bounce, none at --max-bounces 0).
bool compensatesClamp(const scene::Scene& scene, const BakeOptions& options);

// The paper's configuration (Mertens & Van Reeth): the VPLs on the lights render hemicubes too, and every VPL is
// warped into the one store at R (`--direct vpl --indirect-ldc 0`); everything else as `options`.
BakeOptions paperConfiguration(BakeOptions options = {});

// The VPLs of the bake's light paths (options: paths, seed, maxBounces). Throws ibrr::Error for a
// scene without lights. Keller's instant radiosity uses the same ones, for a pixel-exact comparison.
rays::VplSet generateBakeVpls(const scene::Scene& scene, const BakeOptions& options);

// The hemicube emitter for a VPL, and its hemicube resolution under `options` (H on the lights,
// h after a bounce).
gpu::HemicubeSource hemicubeSourceFor(const rays::Vpl& vpl, const scene::Scene& scene);
int hemicubeResolutionFor(const rays::Vpl& vpl, const BakeOptions& options);

// The CPU insertion alone (ibrr bench ibrr): the hemicubes of the first `hemicubes` VPLs after a bounce, rendered
// and read back once, inserted into a cube of `resolution` seeded from the geometry, on one thread and on all;
// each time the fastest of three insertions of them into the same builder after a first, as a bake's builder
// runs once warmed up.
struct InsertionTiming {
  std::uint64_t hemicubes = 0;
  std::uint64_t writes = 0;         // LDI pixel writes of one insertion of them all
  double oneThreadSeconds = 0.0;
  double allThreadsSeconds = 0.0;
  int threads = 0;                  // TBB's default concurrency
};
InsertionTiming timeCpuInsertion(const scene::Scene& scene, const BakeOptions& options, int resolution,
                                 std::uint32_t hemicubes);

// The bake's two long parts, in order, for progress.
// The bake reports through a ProgressObserver (util/progress.hpp): phase kHemicubePhase (hemicubes), then
// kCompensationPhase (points, bias_compensation.hpp). Hemicubes are reported on the GL thread, points from any.
inline constexpr const char* kHemicubePhase = "hemicubes";
using BakeProgress = ProgressObserver;

// Partial stores during the bake, for error-against-time curves (ibrr compare): once the VPLs of
// the first P light paths (P in `paths`, increasing, below options.paths) are warped, the callback
// gets the store so far, already scaled by options.paths / P so that it estimates the same
// radiosity, with the bounces' level on its own when the bake has one (for compensateBias; null otherwise), P
// and the bake's wall time up to that point (callback time excluded).
struct BakeCheckpoints {
  std::vector<std::uint32_t> paths;
  std::function<void(const LayeredDepthCube& partial, const LayeredDepthCube* bouncesLevel, std::uint32_t paths,
                     double bakeSeconds)>
      onCheckpoint;
};

// The bytes a bake of `scene` with `options` needs at its peak, from the geometry alone: about 200
// bytes per store layer (the builder's tiles, the seeds, the store and the GPU warp's buffers) and
// 16 per LDI pixel (offset arrays), plus 256 MiB for the rest (GL, hemicube atlas, VPLs). The
// layers are counted as the geometry seeds them: each triangle's area projected on its dominant
// axis, in LDI pixels. The Cornell box's peak RSS at R = 1024 and 2048 was 1.39 and 5.30 GB for
// 6.2 and 24.6 M layers (measured); this model says 1.5 and 5.4. bakeStore refuses a bake that needs
// more than the machine has (util/memory.hpp) before it allocates anything.
std::uint64_t estimateBakeBytes(const scene::Scene& scene, const BakeOptions& options);
// Throws ibrr::Error "baking the IBRR store at --ldc R needs about N GiB, M GiB available; ..." when
// estimateBakeBytes exceeds the memory available (util/memory.hpp).
void checkBakeMemory(const scene::Scene& scene, const BakeOptions& options);

// Bakes the store. A GL 4.5 context must be current on this thread. Throws ibrr::Error for bad
// options or a scene without lights, and ibrr::Interrupted when Ctrl-C was pressed (nothing is
// returned then). Deterministic: the same scene and options give the same store, byte for byte,
// whatever the thread count.
BakeResult bakeStore(const scene::Scene& scene, const BakeOptions& options, const BakeProgress& progress = {},
                     const BakeCheckpoints* checkpoints = nullptr);

// The hemicube part of a bake: the VPLs of options' share of the light paths (all by default) rendered and warped,
// the layer sums before any time-budget scaling or bias compensation. bakeStore is this, then those two.
// A share of the light paths (not the whole bake) warped on the CPU defers the layers its hemicubes open
// (ldc_builder.hpp): `sums` then holds the seeded layers only, and `deferred` the records that open or join the
// others, for openDeferredLayers once every share's are known.
struct LightPathBake {
  LayerSums sums;  // the store's level (R)
  std::vector<DeferredOpening> deferred;
  // With --indirect-ldc R2 < R: the bounces' level and its deferred openings.
  std::optional<LayerSums> indirect;
  std::vector<DeferredOpening> indirectDeferred;
  // bakeStore's default bake only (the whole bake on the CPU warp, the direct light by rays, the bounces on their own
  // level): the direct light of the store level's layers, traced beside the hemicubes, for bakeStore to add.
  std::optional<std::vector<glm::vec3>> storeDirect;
  BakeStats stats;
};
// The stores of light-path sums: `store`, the store's level rounded with the bounces' level added when there is
// one, and that level on its own, rounded once for both (compensateBias estimates on its layers).
struct LightPathStores {
  LayeredDepthCube store;
  std::optional<LayeredDepthCube> bouncesLevel;
  const LayeredDepthCube* bounces() const { return bouncesLevel ? &*bouncesLevel : nullptr; }
};
LightPathStores lightPathStores(const LayerSums& sums, const LayerSums* indirect);
// The R2 the bounces' level of `options` uses (R when the bake has one level).
int indirectLevelResolution(const BakeOptions& options);
// Whether the bake renders a hemicube for `vpl` (with the direct light by rays, the VPLs on the lights render none).
bool rendersHemicube(const rays::Vpl& vpl, const BakeOptions& options);
// The largest H among the VPLs of `vpls` that render a hemicube (options' h when none do).
int renderedHemicubeResolution(const rays::VplSet& vpls, const BakeOptions& options);
// The GPU warp's hemicubes a batch, for hemicubes of up to `maxResolution` warped into `levels` levels:
// options.gpuBatchHemicubes, or what an eighth of the GPU's free memory holds; within GL's limits.
int gpuBatchSlots(const BakeOptions& options, int maxResolution, int levels);
// The atlas slots a bake with `warp` draws its hemicubes into, a pass for as many: the GPU warp's batch, or one for
// the CPU warp, which reads each back.
int hemicubeSlots(const BakeOptions& options, WarpDevice warp, int maxResolution, int levels);
LightPathBake bakeLightPaths(const scene::Scene& scene, const BakeOptions& options, const BakeProgress& progress = {},
                             const BakeCheckpoints* checkpoints = nullptr);

// `store` with the direct light of every layer added (direct_light.hpp, options.directPoints and directSamples);
// the time and rays go into `stats`. bakeStore calls it for --direct rays, before the bias compensation.
LayeredDepthCube addDirectLight(const scene::Scene& scene, const LayeredDepthCube& store, const BakeOptions& options,
                                const BakeProgress& progress, BakeStats& stats);

// `store` (baked with `options`, uncompensated) with the clamp's missing light added per layer
// (bias_compensation.hpp, options.biasRays and biasPasses at geometryClampFor's clamp, which must be > 0); its
// time and rays go to `stats`. bakeStore calls it when options.biasCompensation; compare calls it for the
// partial stores of its error-against-time curve. With a bounces' level (LightPathStores::bouncesLevel) and the
// direct light by rays, the only clamped VPLs are the level's, and the missing light is estimated on its layers
// (compensateClampBias); otherwise on the store's.
// `share`, when given, sets the part of the layers this process estimates and how the ranks exchange them
// (BiasCompensationOptions' firstPixel, endPixel and shareMissing; src/cluster/).
LayeredDepthCube compensateBias(const scene::Scene& scene, const LayeredDepthCube& store,
                                const LayeredDepthCube* bouncesLevel, const BakeOptions& options,
                                const BakeProgress& progress, BakeStats& stats,
                                const std::function<void(BiasCompensationOptions&)>& share = {});
// On the bounces' level each layer takes this many times options.biasRays points: a coarse layer's estimate
// spreads over (R/R2)² fine pixels, so its noise shows as blotches where a fine layer's averages out. Cornell box,
// the defaults, relRMSE against the 4096-spp reference: 32 points 2.20%, 128 2.01%, 256 2.00% (estimated on the
// store's layers at 32 points: 1.98%, in 25 times the time).
inline constexpr std::uint32_t kBouncesLevelBiasPoints = 4;
// The store whose layers compensateBias estimates on, and a share splits: `bouncesLevel` when the direct light is by
// rays (the level's VPLs are then the only clamped ones), `store` otherwise.
const LayeredDepthCube& compensationLevel(const LayeredDepthCube& store, const LayeredDepthCube* bouncesLevel,
                                          const BakeOptions& options);

// Saves a baked store to `path` (ibrr/store_file.hpp's format) all or nothing: a unique temporary
// file renamed over `path` (util/atomic_file.hpp), refused if `path` is one of this run's inputs.
void writeStoreFile(const LayeredDepthCube& store, const std::filesystem::path& path);

// Loads a store file (ibrr/store_file.hpp's checks) after checking that it is a regular file, and
// records it as an input of this run.
LayeredDepthCube readStoreFile(const std::filesystem::path& path,
                               std::optional<std::uint64_t> expectedFingerprint = std::nullopt);

}  // namespace ibrr::bake
