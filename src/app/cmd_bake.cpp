// `ibrr bake SCENE -o FILE`: precomputes a scene's diffuse global illumination.
//   --method ibrr (default): light paths place VPLs, each VPL renders a hemicube on the GPU, and
//     every hemicube pixel is warped into the layered depth cube store (.ibrr), which is saved.
//   --method gather: the hemicube gathering solver on a texel lightmap (lightmap/gather.hpp),
//     saved as a .lightmap (EXR atlas + metadata, lightmap/lightmap_file.hpp).
//   --method progressive: progressive refinement radiosity on a texel lightmap
//     (lightmap/progressive.hpp), saved as a .lightmap.
//   --method stochastic: stochastic iteration radiosity on a texel lightmap
//     (lightmap/stochastic.hpp), saved as a .lightmap.
//   --method matrix: the k-bounce form-factor matrix on a coarse texel lightmap
//     (lightmap/matrix.hpp), saved as a .lightmap, and with --save-matrix the matrix itself, which
//     `ibrr render --matrix FILE --move-light ...` relights without recomputing it.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "cluster/distributed_bake.hpp"
#include "bake/bake.hpp"
#include "gpu/context.hpp"
#include "ibrr/store_file.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/matrix.hpp"
#include "lightmap/progressive.hpp"
#include "lightmap/stochastic.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"
#include "util/memory.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace ibrr::app {
namespace {

// The gathering solver's defaults for `ibrr bake --method gather` (lightmap/gather.hpp).
constexpr int kGatherDefaultAtlasSize = lightmap::kDefaultGatherAtlasSize;
constexpr int kGatherDefaultHemicube = lightmap::GatherOptions{}.hemicubeResolution;
constexpr int kGatherDefaultIndirectHemicube = lightmap::GatherOptions{}.indirectHemicubeResolution;
constexpr int kGatherDefaultIterations = lightmap::GatherOptions{}.maxIterations;
constexpr int kGatherToleranceIterationCap = 1000;  // --tolerance alone: iterate until it is met

// Progressive refinement's atlas default (README, "Progressive refinement"); its solver defaults
// are ProgressiveOptions'.
constexpr int kProgressiveDefaultAtlasSize = 256;

// Stochastic iteration's atlas default (README, "Stochastic iteration"); its solver defaults are
// StochasticOptions'.
constexpr int kStochasticDefaultAtlasSize = lightmap::kDefaultStochasticAtlasSize;
// The form-factor matrix's atlas default: its patches are the atlas texels, n² entries per channel.
constexpr int kMatrixDefaultAtlasSize = lightmap::kDefaultMatrixAtlasSize;

struct BakeCommandOptions {
  std::string scene;
  std::string output;
  std::string method = "ibrr";
  std::string splat = "box";
  std::string warp = "auto";
  bake::BakeOptions bake;
  // --method gather
  float texelDensity = 0.0f;  // texels per scene unit
  int atlasSize = 0;          // texels per side the atlas should fit
  int emitterRefinement = 1;  // density multiplier near lights (gather, progressive, stochastic)
  lightmap::GatherOptions gather;
  bool noRotation = false;
  // --method progressive (--atlas, --texel-density and --time-budget as above)
  lightmap::ProgressiveOptions progressive;
  bool adaptive = false;                                       // --adaptive: progressive.adaptive below
  lightmap::QuadtreeOptions quadtree;  // --max-depth, --leaf-texels, ...
  // --method stochastic (also --atlas, --texel-density, --time-budget, --iterations, --seed, and
  // --hemisphere and --max-edge as progressive)
  lightmap::StochasticOptions stochastic;
  std::string shootFrom = "iterate";
  // --method matrix (also --atlas, --texel-density, --hemicube, --layers and --seed)
  lightmap::MatrixOptions matrix;
  std::string direct = lightmap::matrixDirectName(lightmap::MatrixOptions{}.direct);
  std::string storage = lightmap::matrixStorageName(lightmap::MatrixOptions{}.storage);
  std::string reorder = lightmap::matrixReorderName(lightmap::MatrixOptions{}.reorder);
  std::string saveMatrix;
};

// The flags that only one method reads; giving one to the other method is an error naming it.
const std::vector<std::string> kIbrrOnlyFlags = {"--paths", "--max-bounces", "--clamp",            "--ldc",
                                                 "--splat", "--warp",        "--bias-compensation", "--bias-rays",
                                                 "--bias-passes"};
const std::vector<std::string> kGatherOnlyFlags = {"--texel-density", "--atlas",       "--iterations",
                                                   "--tolerance",     "--layers",      "--time-budget",
                                                   "--no-rotation",   "--refine-near-lights"};

// The visibility-pass flags of the two shooting methods, progressive and stochastic.
const std::vector<std::string> kShootingFlags = {"--hemisphere", "--max-edge", "--cluster", "--emitter-cluster"};
// Flags of --method progressive only; it also reads --atlas, --texel-density, --time-budget and the
// shooting flags.
const std::vector<std::string> kProgressiveOnlyFlags = {
    "--residual",     "--shots",     "--adaptive",    "--max-depth", "--leaf-texels",
    "--split-gradient", "--max-texels", "--split-every", "--leaf-borders"};
// Flags of --method progressive --adaptive only.
const std::vector<std::string> kAdaptiveOnlyFlags = {"--max-depth",  "--leaf-texels",  "--split-gradient",
                                                     "--max-texels", "--split-every", "--leaf-borders"};
// The gather and light-path flags progressive refinement has no use for.
const std::vector<std::string> kNotProgressiveFlags = {
    "--iterations", "--tolerance", "--layers", "--no-rotation", "--hemicube", "--indirect-hemicube", "--seed"};
// Flags of --method stochastic only; it also reads --atlas, --texel-density, --time-budget,
// --iterations, --seed and the shooting flags.
const std::vector<std::string> kStochasticOnlyFlags = {"--shooters", "--shoot"};
// The gather and light-path flags stochastic iteration has no use for.
const std::vector<std::string> kNotStochasticFlags = {"--tolerance", "--layers", "--no-rotation", "--hemicube",
                                                      "--indirect-hemicube"};
// Flags of --method matrix only; it also reads --atlas, --texel-density, --hemicube, --layers and --seed.
const std::vector<std::string> kMatrixOnlyFlags = {"--bounces",      "--direct",    "--light-samples", "--max-patches",
                                                   "--storage",      "--exact-fraction", "--log-range",
                                                   "--reorder",      "--save-matrix"};
// The gather and light-path flags the form-factor matrix has no use for.
// (--refine-near-lights: the matrix file does not record it, and its patches are few and coarse.)
const std::vector<std::string> kNotMatrixFlags = {"--iterations", "--tolerance", "--time-budget", "--no-rotation",
                                                  "--indirect-hemicube", "--refine-near-lights"};

bool given(const CLI::App& command, const std::string& flag) { return command.get_option(flag)->count() > 0; }

void refuseForeignFlags(const CLI::App& command, const std::vector<std::string>& flags, const std::string& method,
                        const std::string& owner) {
  for (const std::string& flag : flags)
    if (given(command, flag))
      throw CLI::ValidationError(flag + " belongs to --method " + owner + "; --method " + method +
                                 " does not use it (see ibrr bake --help)");
}

// The files a lightmap bake writes: the .lightmap, its data file, and the matrix (--save-matrix).
void checkLightmapOutputs(const BakeCommandOptions& options) {
  checkOutputFile(options.output);
  checkOutputFile(lightmap::lightmapImagePath(options.output));
  if (!options.saveMatrix.empty()) checkOutputFile(options.saveMatrix);
}

// A lightmap bake's own checks before any work: none of `notSettings` given (flags that exist
// for other methods but mean nothing to `method`), and a writable -o FILE.lightmap.
void checkLightmapBakeCommand(const CLI::App& command, const BakeCommandOptions& options, const std::string& method,
                              const std::vector<std::string>& notSettings) {
  for (const std::string& flag : notSettings)
    if (given(command, flag))
      throw CLI::ValidationError(flag + " is not a setting of --method " + method + " (see ibrr bake --help)");
  if (options.output.empty()) throw Error("give the lightmap file with -o FILE.lightmap");
  checkLightmapOutputs(options);
}

// The lightmap atlas from --texel-density or --atlas (else the method's default target size).
lightmap::AtlasOptions atlasOptionsFrom(const CLI::App& command, const BakeCommandOptions& options,
                                        int defaultTargetSize) {
  lightmap::AtlasOptions atlasOptions;
  if (given(command, "--texel-density")) {
    if (!(options.texelDensity > 0.0f))
      throw Error("--texel-density " + std::to_string(options.texelDensity) + ": give texels per scene unit > 0");
    atlasOptions.texelsPerUnit = options.texelDensity;
  } else {
    atlasOptions.targetSize = given(command, "--atlas") ? options.atlasSize : defaultTargetSize;
    if (atlasOptions.targetSize < 8 || atlasOptions.targetSize > 8192)
      throw Error("--atlas " + std::to_string(atlasOptions.targetSize) + ": give an atlas side in [8, 8192] texels");
  }
  if (options.emitterRefinement < 1 || options.emitterRefinement > lightmap::kMaxEmitterRefinement)
    throw Error("--refine-near-lights " + std::to_string(options.emitterRefinement) + ": give a factor from 1 to " +
                std::to_string(lightmap::kMaxEmitterRefinement));
  atlasOptions.emitterRefinement = options.emitterRefinement;
  return atlasOptions;
}

// What every lightmap solver's bake starts from: the scene (checked by `checkScene` before the
// GPU starts), a headless context, the atlas and its patch list, and the time they took.
struct LightmapBakeInputs {
  scene::Scene scene;
  std::unique_ptr<gpu::Context> context;
  Stopwatch total;  // from before the atlas
  lightmap::AtlasOptions atlasOptions;
  lightmap::LightmapAtlas atlas;
  lightmap::PatchList patches;
  double atlasSeconds = 0.0;
  std::size_t validTexels = 0;
};

template <typename CheckScene>
LightmapBakeInputs prepareLightmapBake(const BakeCommandOptions& options, lightmap::AtlasOptions atlasOptions,
                                       const std::string& what, CheckScene checkScene, int adaptiveDepth = 0) {
  LightmapBakeInputs inputs;
  inputs.scene = loadSceneArgument(options.scene);
  checkLightmapOutputs(options);  // none of the outputs is one of the scene's files
  checkScene(inputs.scene);       // before starting the GPU
  inputs.context = gpu::createHeadlessContext();
  info(what + " " + inputs.scene.sourcePath.string() + " (" + std::to_string(inputs.scene.triangleCount()) +
       " triangles) on " + inputs.context->info().renderer);
  inputs.total.restart();
  // Adaptive subdivision solves on its finest level: 2^depth times the roots' density.
  if (adaptiveDepth > 0) atlasOptions = lightmap::finestAtlasOptions(inputs.scene, atlasOptions, adaptiveDepth);
  inputs.atlasOptions = atlasOptions;
  inputs.atlas = lightmap::buildAtlas(inputs.scene, atlasOptions);
  // The patch list (58 bytes a texel) and a solver's radiance, residual and GPU textures: about 160.
  requireMemory(std::uint64_t(inputs.atlas.width) * std::uint64_t(inputs.atlas.height) * 160,
                "a lightmap of " + std::to_string(inputs.atlas.width) + "x" + std::to_string(inputs.atlas.height) +
                    " texels",
                "lower --atlas or --texel-density");
  const MemoryPhase phase("solving the lightmap");
  inputs.patches = lightmap::rasterizePatches(inputs.scene, inputs.atlas);
  inputs.atlasSeconds = inputs.total.seconds();
  for (const std::uint8_t valid : inputs.patches.valid) inputs.validTexels += valid;
  return inputs;
}

// Stages the solved lightmap with the atlas options it was solved on (the loader rebuilds the atlas
// from them) and its atlas's fingerprint.
void stageSolvedLightmap(OutputSet& outputs, const LightmapBakeInputs& inputs, lightmap::Lightmap solved,
                         const std::string& output) {
  solved.atlasOptions = inputs.atlasOptions;
  solved.atlasFingerprint = lightmap::atlasFingerprint(inputs.atlas);
  lightmap::stageLightmap(outputs, output, solved);
}

// Saves the solved lightmap (temporary names, then renames), and says so.
void saveSolvedLightmap(const LightmapBakeInputs& inputs, lightmap::Lightmap solved, const std::string& output) {
  OutputSet outputs;
  stageSolvedLightmap(outputs, inputs, std::move(solved), output);
  outputs.commit();
  std::printf("wrote %s\n", output.c_str());
}

// The summary's atlas line.
void printAtlasSummary(const LightmapBakeInputs& inputs, const char* texels = "valid texels") {
  std::printf("atlas            %d x %d texels, %.4g texels per unit, %zu charts, %zu %s (%.2f s)\n",
              inputs.atlas.width, inputs.atlas.height, double(inputs.atlas.texelsPerUnit),
              std::size_t(inputs.atlas.chartCount), inputs.validTexels, texels, inputs.atlasSeconds);
}

void runGatherBake(const CLI::App& command, const BakeCommandOptions& options) {
  refuseForeignFlags(command, kIbrrOnlyFlags, "gather", "ibrr");
  refuseForeignFlags(command, kProgressiveOnlyFlags, "gather", "progressive");
  refuseForeignFlags(command, kShootingFlags, "gather", "progressive or stochastic");
  refuseForeignFlags(command, kStochasticOnlyFlags, "gather", "stochastic");
  refuseForeignFlags(command, kMatrixOnlyFlags, "gather", "matrix");
  checkLightmapBakeCommand(command, options, "gather", {});
  lightmap::GatherOptions settings = options.gather;
  settings.hemicubeResolution = given(command, "--hemicube") ? options.bake.hemicubeResolution : kGatherDefaultHemicube;
  // h defaults to the smaller of its default and H (so that --hemicube 16 alone is valid).
  settings.indirectHemicubeResolution = given(command, "--indirect-hemicube")
                                            ? options.bake.indirectHemicubeResolution
                                            : std::min(kGatherDefaultIndirectHemicube, settings.hemicubeResolution);
  if (given(command, "--seed")) settings.seed = options.bake.seed;
  settings.randomRotation = !options.noRotation;
  if (!given(command, "--iterations"))
    settings.maxIterations = given(command, "--tolerance") ? kGatherToleranceIterationCap : kGatherDefaultIterations;
  lightmap::validateGatherOptions(settings);
  const lightmap::AtlasOptions atlasOptions = atlasOptionsFrom(command, options, kGatherDefaultAtlasSize);

  const LightmapBakeInputs inputs = prepareLightmapBake(
      options, atlasOptions, "gathering", [&](const scene::Scene& loaded) { lightmap::checkGatherScene(loaded); });
  std::unique_ptr<Progress> progress;
  std::uint64_t reported = 0;
  const lightmap::GatherResult result = lightmap::solveGather(
      inputs.scene, inputs.atlas, inputs.patches, settings, {}, [&](std::uint64_t done, std::uint64_t planned) {
        if (!progress) progress = std::make_unique<Progress>("gather", planned, "hemicubes");
        progress->advance(done - reported);
        reported = done;
      });
  if (progress) progress->finish();
  saveSolvedLightmap(inputs, result.lightmap, options.output);

  printAtlasSummary(inputs);
  std::printf(
      "hemicubes        %zu per iteration, H = %d for the first gather, h = %d after, %d per batch (layers)\n",
      result.hemicubesPerIteration, settings.hemicubeResolution,
      settings.indirectHemicubeResolution == 0 ? settings.hemicubeResolution : settings.indirectHemicubeResolution,
      result.layersPerBatch);
  std::printf("iteration   H   seconds   total s   hemicubes/s   max rel. change   mean radiance (R G B)\n");
  for (const lightmap::GatherIterationStats& it : result.iterations)
    std::printf("%9d %4d %9.2f %9.2f %13.0f %17.5f   %.5g %.5g %.5g\n", it.iteration, it.hemicubeResolution,
                it.iterationSeconds, it.seconds, double(result.hemicubesPerIteration) / it.iterationSeconds,
                it.maxRelativeChange, it.meanRadiance.x, it.meanRadiance.y, it.meanRadiance.z);
  std::printf("time             %.2f s: atlas and patches %.2f s, solve %.2f s\n", inputs.total.seconds(),
              inputs.atlasSeconds, result.seconds);
}

void runProgressiveBake(const CLI::App& command, const BakeCommandOptions& options) {
  refuseForeignFlags(command, kIbrrOnlyFlags, "progressive", "ibrr");
  refuseForeignFlags(command, kStochasticOnlyFlags, "progressive", "stochastic");
  refuseForeignFlags(command, kMatrixOnlyFlags, "progressive", "matrix");
  checkLightmapBakeCommand(command, options, "progressive", kNotProgressiveFlags);
  lightmap::ProgressiveOptions settings = options.progressive;
  settings.timeBudgetSeconds = options.gather.timeBudgetSeconds;
  if (options.adaptive) {
    lightmap::validateQuadtreeOptions(options.quadtree);
    settings.adaptive = options.quadtree;
    if (!given(command, "--cluster")) settings.clusterTexels = lightmap::kAdaptiveDefaultClusterRoots;
  } else {
    for (const std::string& flag : kAdaptiveOnlyFlags)
      if (given(command, flag))
        throw CLI::ValidationError(flag + " is a setting of adaptive subdivision: add --adaptive");
  }
  lightmap::validateProgressiveOptions(settings);
  const lightmap::AtlasOptions atlasOptions = atlasOptionsFrom(
      command, options, options.adaptive ? lightmap::kAdaptiveDefaultRootAtlas : kProgressiveDefaultAtlasSize);

  const LightmapBakeInputs inputs = prepareLightmapBake(
      options, atlasOptions, "progressive refinement of",
      [&](const scene::Scene& loaded) { lightmap::checkProgressiveScene(loaded); }, settings.adaptive.depth);
  Progress progress("progressive", 0, "shots");
  const lightmap::ProgressiveResult result = lightmap::solveProgressive(
      inputs.scene, inputs.atlas, inputs.patches, settings, {}, [&](std::uint64_t, double) { progress.advance(1); });
  progress.finish();
  saveSolvedLightmap(inputs, result.lightmap, options.output);

  const lightmap::ProgressiveCheckpoint& end = result.checkpoints.back();
  printAtlasSummary(inputs);
  std::printf(
      "shooters         %zu (blocks of %d² %s, %d² on emitters); visibility: %zu triangles tessellated "
      "into %zu, hemisphere %d²\n",
      result.clusters, settings.clusterTexels, options.adaptive ? "roots" : "texels", settings.emitterClusterTexels,
      result.sceneTriangles, result.visibilityTriangles, settings.hemisphereResolution);
  if (options.adaptive)
    std::printf(
        "adaptive         %zu radiosity texels (%.1f%% of the finest level's %zu) in %zu leaves of %d² texels, "
        "%zu leaf splits (%.2f s), roots %d² atlas texels\n",
        result.elements, 100.0 * double(result.elements) / double(std::max<std::size_t>(inputs.validTexels, 1)),
        inputs.validTexels, result.leaves.size(), settings.adaptive.leafElements, result.leafSplits, result.splitSeconds,
        1 << settings.adaptive.depth);
  std::printf(
      "shots            %llu (stopped by %s), %.2f ms per shot; residual %.4f of the emitted power; "
      "90%% converged after %llu shots, 99%% after %llu\n",
      static_cast<unsigned long long>(result.shots), result.stopReason.c_str(),
      result.shots ? 1e3 * result.shootSeconds / double(result.shots) : 0.0, end.residualFraction,
      static_cast<unsigned long long>(lightmap::shotsToResidual(result, 0.1)),
      static_cast<unsigned long long>(lightmap::shotsToResidual(result, 0.01)));
  std::printf("mean radiance    %.5g %.5g %.5g (R G B)\n", end.meanRadiance.x, end.meanRadiance.y, end.meanRadiance.z);
  std::printf("time             %.2f s: atlas and patches %.2f s, solve %.2f s (shots %.2f s)\n",
              inputs.total.seconds(), inputs.atlasSeconds, result.seconds, result.shootSeconds);
}

void runStochasticBake(const CLI::App& command, const BakeCommandOptions& options) {
  refuseForeignFlags(command, kIbrrOnlyFlags, "stochastic", "ibrr");
  refuseForeignFlags(command, kProgressiveOnlyFlags, "stochastic", "progressive");
  refuseForeignFlags(command, kMatrixOnlyFlags, "stochastic", "matrix");
  checkLightmapBakeCommand(command, options, "stochastic", kNotStochasticFlags);
  lightmap::StochasticOptions settings = options.stochastic;
  settings.hemisphereResolution =
      given(command, "--hemisphere") ? options.progressive.hemisphereResolution : settings.hemisphereResolution;
  settings.maxEdgeFraction =
      given(command, "--max-edge") ? options.progressive.maxEdgeFraction : settings.maxEdgeFraction;
  if (given(command, "--cluster")) settings.clusterTexels = options.progressive.clusterTexels;
  if (given(command, "--emitter-cluster")) settings.emitterClusterTexels = options.progressive.emitterClusterTexels;
  if (given(command, "--iterations")) {
    if (options.gather.maxIterations < 0)
      throw Error("--iterations " + std::to_string(options.gather.maxIterations) + ": give iterations m ≥ 0");
    settings.iterations = std::uint64_t(options.gather.maxIterations);
  }
  if (given(command, "--seed")) settings.seed = options.bake.seed;
  settings.timeBudgetSeconds = options.gather.timeBudgetSeconds;
  // --time-budget alone: iterate until it ends.
  if (given(command, "--time-budget") && !given(command, "--iterations")) settings.iterations = 0;
  if (options.shootFrom == "iterate")
    settings.shootFrom = lightmap::StochasticShootFrom::LastIterate;
  else if (options.shootFrom == "average")
    settings.shootFrom = lightmap::StochasticShootFrom::RunningAverage;
  else
    throw Error("--shoot '" + options.shootFrom + "': choose iterate (the last iterate) or average (the paper's)");
  lightmap::validateStochasticOptions(settings);
  const lightmap::AtlasOptions atlasOptions = atlasOptionsFrom(command, options, kStochasticDefaultAtlasSize);

  const LightmapBakeInputs inputs = prepareLightmapBake(
      options, atlasOptions, "stochastic iteration of",
      [&](const scene::Scene& loaded) { lightmap::checkShootingScene(loaded, "stochastic iteration"); });
  Progress progress("stochastic", settings.iterations, "iterations");
  const lightmap::StochasticResult result = lightmap::solveStochastic(
      inputs.scene, inputs.atlas, inputs.patches, settings, {}, [&](std::uint64_t) { progress.advance(1); });
  progress.finish();
  saveSolvedLightmap(inputs, result.lightmap, options.output);

  const lightmap::StochasticCheckpoint& end = result.checkpoints.back();
  const double iterations = double(std::max<std::uint64_t>(result.iterations, 1));
  printAtlasSummary(inputs);
  std::printf(
      "shooters         %d per iteration from the %s, drawn on a %d-level sum pyramid; visibility: %zu "
      "triangles tessellated into %zu, hemisphere %d²\n",
      settings.shootersPerIteration, options.shootFrom == "iterate" ? "last iterate" : "running average",
      result.pyramidLevels, result.sceneTriangles, result.visibilityTriangles, settings.hemisphereResolution);
  std::printf(
      "iterations       %llu (stopped by %s, seed %u), %.2f ms per iteration (selection %.3f ms), %.2f ms per "
      "shot; %.1f%% of the shots from emitters\n",
      static_cast<unsigned long long>(result.iterations), result.stopReason.c_str(), settings.seed,
      1e3 * result.iterateSeconds / iterations, 1e3 * result.selectSeconds / iterations,
      1e3 * result.iterateSeconds / double(std::max<std::uint64_t>(result.shots, 1)),
      100.0 * double(result.emitterShots) / double(std::max<std::uint64_t>(result.shots, 1)));
  std::printf("mean radiance    %.5g %.5g %.5g (R G B)\n", end.meanRadiance.x, end.meanRadiance.y, end.meanRadiance.z);
  std::printf("time             %.2f s: atlas and patches %.2f s, solve %.2f s (iterations %.2f s)\n",
              inputs.total.seconds(), inputs.atlasSeconds, result.seconds, result.iterateSeconds);
}

void runMatrixBake(const CLI::App& command, const BakeCommandOptions& options) {
  refuseForeignFlags(command, kIbrrOnlyFlags, "matrix", "ibrr");
  refuseForeignFlags(command, kProgressiveOnlyFlags, "matrix", "progressive");
  refuseForeignFlags(command, kShootingFlags, "matrix", "progressive or stochastic");
  refuseForeignFlags(command, kStochasticOnlyFlags, "matrix", "stochastic");
  checkLightmapBakeCommand(command, options, "matrix", kNotMatrixFlags);
  if (!options.saveMatrix.empty()) {
    checkOutputFile(options.saveMatrix);
    if (std::filesystem::path(options.saveMatrix) == std::filesystem::path(options.output))
      throw Error("--save-matrix " + options.saveMatrix + ": give a file other than the lightmap (-o)");
  }
  lightmap::MatrixOptions settings = options.matrix;
  if (given(command, "--hemicube")) settings.hemicubeResolution = options.bake.hemicubeResolution;
  if (given(command, "--layers")) settings.layersPerBatch = options.gather.layersPerBatch;
  if (given(command, "--seed")) settings.seed = options.bake.seed;
  settings.direct = lightmap::parseMatrixDirect(options.direct);
  settings.storage = lightmap::parseMatrixStorage(options.storage);
  settings.reorder = lightmap::parseMatrixReorder(options.reorder);
  lightmap::validateMatrixOptions(settings);
  const lightmap::AtlasOptions atlasOptions = atlasOptionsFrom(command, options, kMatrixDefaultAtlasSize);

  const LightmapBakeInputs inputs =
      prepareLightmapBake(options, atlasOptions, "form-factor matrix of",
                          [&](const scene::Scene& loaded) { lightmap::checkMatrixScene(loaded, settings.direct); });
  std::unique_ptr<Progress> progress;
  std::uint64_t reported = 0;
  lightmap::MatrixResult result = lightmap::solveMatrix(
      inputs.scene, inputs.atlas, inputs.patches, settings, [&](std::uint64_t done, std::uint64_t planned) {
        if (!progress) progress = std::make_unique<Progress>("matrix", planned, "stages");
        progress->advance(done - reported);
        reported = done;
      });
  if (progress) progress->finish();
  throwIfInterrupted();  // nothing is written after a Ctrl-C during the relight
  lightmap::MatrixSolution& solution = *result.solution;
  solution.atlasOptions = atlasOptions;  // `ibrr render --matrix` rebuilds the atlas from these
  double saveSeconds = 0.0;
  OutputSet outputs;  // the matrix and the lightmap are written all or none
  if (!options.saveMatrix.empty()) {
    const Stopwatch saving;
    // Dense storage keeps N_k; compressed keeps only the compressed form (what a relight reads).
    lightmap::stageMatrix(outputs, options.saveMatrix, solution, settings.storage == lightmap::MatrixStorage::Dense);
    saveSeconds = saving.seconds();
  }
  stageSolvedLightmap(outputs, inputs, result.lightmap, options.output);
  outputs.commit();
  std::printf("wrote %s\n", options.output.c_str());

  const std::vector<lightmap::MatrixLight> lights = lightmap::matrixLights(inputs.scene);
  glm::dvec3 mean(0.0);
  double area = 0.0;
  for (std::size_t t = 0; t < inputs.patches.texelCount(); ++t)
    if (inputs.patches.valid[t]) {
      mean += double(inputs.patches.area[t]) * glm::dvec3(result.lightmap.radiance[t]);
      area += double(inputs.patches.area[t]);
    }
  mean /= std::max(area, 1e-30);
  if (!options.saveMatrix.empty())
    std::printf("wrote %s (%.1f MB, %.2f s)\n", options.saveMatrix.c_str(),
                double(std::filesystem::file_size(options.saveMatrix)) * 1e-6, saveSeconds);
  printAtlasSummary(inputs, "patches (valid texels)");
  std::printf("matrix           N_k, k = %d bounces, H = %d; direct light by %s; %s: %.1f MB", settings.bounces,
              settings.hemicubeResolution, lightmap::matrixDirectName(solution.direct),
              lightmap::matrixStorageName(settings.storage), double(solution.denseBytes()) * 1e-6);
  if (solution.compressed)
    std::printf(" dense, %.2f MB compressed (%.1fx; reordering: %s, %.3g exact, log range %.3g)",
                double(solution.compressed->bytes()) * 1e-6,
                double(solution.denseBytes()) / double(std::max<std::size_t>(solution.compressed->bytes(), 1)),
                lightmap::matrixReorderName(settings.reorder), settings.exactFraction, double(settings.logRange));
  std::printf("\n");
  std::printf("lights           %s%s\n", lightmap::describeMatrixLights(lights).c_str(),
              solution.direct == lightmap::MatrixDirect::Rays ? " (movable: ibrr render --matrix FILE --move-light)"
                                                              : " (fixed: --direct matrix)");
  std::printf("precompute       %.2f s: form factors %.2f s, k-bounce matrix %.2f s, compression %.2f s\n",
              solution.formFactorSeconds + solution.powerSeconds + solution.compressSeconds, solution.formFactorSeconds,
              solution.powerSeconds, solution.compressSeconds);
  std::printf(
      "first relight    %.2f ms: emission vector %.2f ms, GPU product %.2f ms, transfer %.2f ms (with the GL's "
      "first-use costs; 'ibrr render --matrix' times a warm one)\n",
      result.timing.directMs + result.timing.productMs + result.timing.transferMs, result.timing.directMs,
      result.timing.productMs, result.timing.transferMs);
  std::printf("mean radiance    %.5g %.5g %.5g (R G B)\n", mean.x, mean.y, mean.z);
  std::printf("time             %.2f s: atlas and patches %.2f s, solve %.2f s\n", inputs.total.seconds(),
              inputs.atlasSeconds, result.seconds);
}

// The IBRR bake's options from the command line (the generic ones are checked before any file is read).
bake::BakeOptions ibrrBakeSettings(const BakeCommandOptions& options) {
  bake::BakeOptions settings = options.bake;
  if (options.splat == "box")
    settings.splat = SplatKernel::Box;
  else if (options.splat == "gauss")
    settings.splat = SplatKernel::Gaussian;
  else
    throw Error("--splat '" + options.splat + "': choose box or gauss");
  const std::optional<bake::WarpDevice> warp = bake::parseWarpDevice(options.warp);
  if (!warp) throw Error("--warp '" + options.warp + "': choose auto, cpu or gpu");
  settings.warp = *warp;
  bake::validateBakeOptions(settings);
  return settings;
}

void printIbrrBakeSummary(const bake::BakeResult& result, const bake::BakeOptions& settings) {
  const bake::BakeStats& s = result.stats;
  const StoreStats store = result.store.stats();
  std::printf("VPLs per bounce  ");
  for (std::size_t k = 0; k < s.vplsPerBounce.size(); ++k) std::printf("%s%zu", k ? " " : "", s.vplsPerBounce[k]);
  std::printf("  (%llu paths, seed %u)\n", static_cast<unsigned long long>(settings.paths), settings.seed);
  std::printf("hemicubes        %llu (H = %d on the lights, h = %d after a bounce), %.1f per second\n",
              static_cast<unsigned long long>(s.hemicubes), settings.hemicubeResolution,
              settings.indirectHemicubeResolution, s.totalSeconds > 0 ? double(s.hemicubes) / s.totalSeconds : 0.0);
  std::printf("samples inserted %llu of %llu hemicube pixels, %llu LDI pixel writes (%s warp)\n",
              static_cast<unsigned long long>(s.samplesInserted), static_cast<unsigned long long>(s.hemicubePixels),
              static_cast<unsigned long long>(s.pixelWrites), bake::warpDeviceName(s.warp));
  std::printf("layers           %llu from the geometry seeds, %llu opened by hemicubes (surfaces the seeds lack)\n",
              static_cast<unsigned long long>(s.seedLayers), static_cast<unsigned long long>(s.openedLayers));
  std::printf("store            R = %d, %llu layers, %.2f layers per occupied pixel, %.1f MiB (%.0f bytes per layer)\n",
              result.store.frame().resolution(), static_cast<unsigned long long>(store.layerCount),
              store.layersPerOccupiedPixel, double(store.totalBytes) / (1024.0 * 1024.0), store.bytesPerLayer);
  std::printf(
      "time             %.2f s: light paths %.2f s, render %.2f s, readback %.2f s, warp %.2f s (insertion %.2f s; "
      "overlapped), waiting for the warp %.2f s\n",
      s.totalSeconds, s.vplSeconds, s.renderSeconds, s.readbackSeconds, s.warpSeconds, s.insertSeconds, s.waitSeconds);
  if (s.biasCompensated)
    std::printf("bias compensation %.2f s (in the time above): %u rays per layer, %u pass%s, %.1f M rays (%.1f M/s); %llu "
                "layers found no surface under them\n",
                s.biasSeconds, settings.biasRays, settings.biasPasses, settings.biasPasses == 1 ? "" : "es",
                double(s.biasRays) * 1e-6, s.biasSeconds > 0 ? double(s.biasRays) * 1e-6 / s.biasSeconds : 0.0,
                static_cast<unsigned long long>(s.biasLayersWithoutSurface));
  else
    std::printf("bias compensation off (%s)\n", settings.biasCompensation ? "no clamp: --clamp 0" : "--bias-compensation off");
}

// Under mpirun: every rank bakes its share of the light paths, rank 0 writes the store (distributed_bake.hpp).
void runDistributedBake(cluster::Cluster& cluster, const scene::Scene& scene, const bake::BakeOptions& settings,
                        const std::string& output) {
  cluster.agree();  // every rank has its scene, options and GPU
  const double fingerprint = double(scene.fingerprint() >> 11);  // 53 bits, exact in a double
  const std::vector<double> range = cluster.allMax(std::vector<double>{fingerprint, -fingerprint});
  if (range[0] != -range[1])
    throw Error(scene.sourcePath.string() + ": the ranks loaded different scenes (their fingerprints differ); give "
                "every rank the same scene file");
  info("baking on " + std::to_string(cluster.size()) + " ranks, " + std::to_string(settings.paths) +
       " light paths split among them");
  bake::BakeProgressPrinter progress;
  const cluster::DistributedBakeResult distributed = cluster::bakeStoreAcrossRanks(cluster, scene, settings, progress);
  progress.finish();
  if (!cluster.isRoot()) return;
  const Stopwatch writeTime;
  bake::writeStoreFile(distributed.result->store, output);
  const double writeSeconds = writeTime.seconds();
  printIbrrBakeSummary(*distributed.result, settings);
  const cluster::DistributedBakeTimes& t = distributed.times;
  const double total = distributed.result->stats.totalSeconds + writeSeconds;
  std::printf("ranks            %d: light paths %.2f s (the slowest rank), reduce %.3f s (%.1f MiB a message, "
              "log2 N steps), store broadcast %.3f s, compensation %.2f s, write %.3f s; reduce + write %.1f%% of "
              "%.2f s\n",
              cluster.size(), t.lightPathSeconds, t.reduceSeconds, double(t.storeBytes) / (1024.0 * 1024.0),
              t.broadcastSeconds, t.compensationSeconds, writeSeconds,
              total > 0 ? 100.0 * (t.reduceSeconds + writeSeconds) / total : 0.0, total);
}

void runBake(const CLI::App& command, const BakeCommandOptions& options) {
  cluster::Cluster& cluster = cluster::Cluster::world();
  if (cluster.distributed() && options.method != "ibrr")
    throw Error("--method " + options.method + " bakes in one process; under mpirun only the IBRR store (--method "
                "ibrr) is split over the ranks: start it without mpirun");
  if (options.method == "gather") return runGatherBake(command, options);
  if (options.method == "progressive") return runProgressiveBake(command, options);
  if (options.method == "stochastic") return runStochasticBake(command, options);
  if (options.method == "matrix") return runMatrixBake(command, options);
  if (options.method != "ibrr")
    throw CLI::ValidationError("--method '" + options.method +
                               "': choose ibrr, gather, progressive, stochastic or matrix");
  refuseForeignFlags(command, kGatherOnlyFlags, "ibrr", "gather");
  refuseForeignFlags(command, kProgressiveOnlyFlags, "ibrr", "progressive");
  refuseForeignFlags(command, kShootingFlags, "ibrr", "progressive or stochastic");
  refuseForeignFlags(command, kStochasticOnlyFlags, "ibrr", "stochastic");
  refuseForeignFlags(command, kMatrixOnlyFlags, "ibrr", "matrix");
  if (options.output.empty()) throw Error("give the store file with -o FILE.ibrr");
  checkOutputFile(options.output);  // before any work
  const bake::BakeOptions settings = ibrrBakeSettings(options);
  const scene::Scene scene = loadSceneArgument(options.scene);
  checkOutputFile(options.output);  // and not one of the scene's files
  if (!scene.hasLights())
    throw Error(scene.sourcePath.string() +
                ": the scene has no emitters or lights to bake; add an emissive material "
                "(Ke) or a light to the manifest");
  bake::checkBakeMemory(scene, settings);  // before the GPU starts
  const auto context = gpu::createHeadlessContext(gpu::HeadlessPlatform::Automatic, cluster.localRank());
  info("baking " + scene.sourcePath.string() + " (" + std::to_string(scene.triangleCount()) + " triangles) on " +
       context->info().renderer);
  if (cluster.distributed()) return runDistributedBake(cluster, scene, settings, options.output);
  bake::BakeProgressPrinter progress;
  const bake::BakeResult result = bake::bakeStore(scene, settings, progress);
  progress.finish();
  bake::writeStoreFile(result.store, options.output);
  printIbrrBakeSummary(result, settings);
}

}  // namespace

// The lightmap atlas and the gathering solver's flags (--texel-density, --atlas, --iterations, ...).
void addLightmapFlags(CLI::App* command, BakeCommandOptions& options) {
  lightmap::GatherOptions& g = options.gather;
  CLI::Option* density = command->add_option(
      "--texel-density", options.texelDensity,
      "gather, progressive, stochastic, matrix: lightmap texels per scene unit (instead of --atlas)");
  command
      ->add_option("--atlas", options.atlasSize,
                   "gather, progressive, stochastic, matrix: the atlas side S in texels the charts should fill "
                   "(default " +
                       std::to_string(kGatherDefaultAtlasSize) + " for gather, " +
                       std::to_string(kProgressiveDefaultAtlasSize) + " for progressive, " +
                       std::to_string(kStochasticDefaultAtlasSize) + " for stochastic, " +
                       std::to_string(kMatrixDefaultAtlasSize) + " for matrix, whose patches are its texels)")
      ->excludes(density);
  command
      ->add_option("--refine-near-lights", options.emitterRefinement,
                   "gather, progressive, stochastic: F times the texel density (F² the texels) on the charts within " +
                       std::to_string(int(lightmap::kEmitterReachTexels)) +
                       " texels of a light, whose 1/r² hot spot is narrower than a texel (1 to " +
                       std::to_string(lightmap::kMaxEmitterRefinement) + ")")
      ->capture_default_str();
  command->add_option("--iterations", g.maxIterations,
                      "gather: Jacobi iterations K (default " + std::to_string(kGatherDefaultIterations) +
                          "; with --tolerance alone, until it is met); stochastic: iterations m (default " +
                          std::to_string(lightmap::StochasticOptions{}.iterations) +
                          "; with --time-budget alone, until it ends)");
  command->add_option("--tolerance", g.tolerance,
                      "gather: stop when no texel changes by more than this fraction in an iteration (e.g. 0.01)");
  command->add_option("--time-budget", g.timeBudgetSeconds,
                      "gather, stochastic: stop after the iteration that ends past S seconds; progressive: after "
                      "the shot that ends past S seconds");
  command->add_option("--layers", g.layersPerBatch,
                      "gather, matrix: hemicubes per instanced draw (texture-array layers); 0 = automatic (a 96 MiB "
                      "array on a GPU, 4 MiB on llvmpipe)");
  command->add_flag("--no-rotation", options.noRotation,
                    "gather: no random rotation of the hemicubes about the normal (banding instead of noise)");
}

// The flags of the two shooting solvers, progressive refinement (with adaptive subdivision) and stochastic iteration.
void addShootingFlags(CLI::App* command, BakeCommandOptions& options) {
  lightmap::ProgressiveOptions& pr = options.progressive;
  command
      ->add_option("--cluster", pr.clusterTexels,
                   "progressive, stochastic: reflecting surfaces shoot from blocks of B×B texels of a chart "
                   "(substructuring; default " + std::to_string(lightmap::StochasticOptions{}.clusterTexels) +
                       " for stochastic)")
      ->capture_default_str();
  command
      ->add_option("--emitter-cluster", pr.emitterClusterTexels,
                   "progressive, stochastic: the same for emitting texels (1 = every light texel shoots: sharp "
                   "shadows)")
      ->capture_default_str();
  command
      ->add_option("--hemisphere", pr.hemisphereResolution,
                   "progressive, stochastic: side in pixels of the hemispherical visibility buffer (default " +
                       std::to_string(lightmap::StochasticOptions{}.hemisphereResolution) + " for stochastic)")
      ->capture_default_str();
  command
      ->add_option("--max-edge", pr.maxEdgeFraction,
                   "progressive, stochastic: tessellate the visibility pass until no edge exceeds this fraction "
                   "of the scene diagonal (0 = off)")
      ->capture_default_str();
  command
      ->add_option("--residual", pr.residualFraction,
                   "progressive: stop when the unshot power falls below this fraction of the emitted power")
      ->capture_default_str();
  command->add_option("--shots", pr.maxShots, "progressive: stop after N shots (0 = no limit)");
  command->add_flag("--adaptive", options.adaptive,
                    "progressive: adaptive subdivision (GPU Gems 2 §39.3): every chart the root of quadtrees whose "
                    "leaves of k×k texels split in four where the radiosity's second difference is large; --atlas "
                    "then sizes the roots (default " + std::to_string(lightmap::kAdaptiveDefaultRootAtlas) +
                        "), --cluster counts roots (default " + std::to_string(lightmap::kAdaptiveDefaultClusterRoots) + ")");
  lightmap::QuadtreeOptions& q = options.quadtree;
  command->add_option("--max-depth", q.depth, "--adaptive: levels of splitting below the roots, [1, 6]")
      ->capture_default_str();
  command->add_option("--leaf-texels", q.leafElements, "--adaptive: a leaf holds k×k texels, [1, 32]")
      ->capture_default_str();
  command
      ->add_option("--split-gradient", q.splitThreshold,
                   "--adaptive: split a leaf where a texel's radiance differs from the line through its neighbours "
                   "by more than this fraction of the local radiance (|l₋ − 2l + l₊| / max l)")
      ->capture_default_str();
  command->add_option("--max-texels", q.maxElements, "--adaptive: the texel budget; no split beyond it (0 = none)")
      ->capture_default_str();
  command->add_option("--split-every", pr.splitEveryShots, "--adaptive: test the leaves after every N shots")
      ->capture_default_str();
  command->add_flag("--leaf-borders", pr.drawLeafBorders,
                    "--adaptive: darken the leaves' borders in the lightmap (a picture of the subdivision)");
  command
      ->add_option("--shooters", options.stochastic.shootersPerIteration,
                   "stochastic: shooting texels per iteration, batched into one update pass, [1, 64]")
      ->capture_default_str();
  command
      ->add_option("--shoot", options.shootFrom,
                   "stochastic: what the shooters carry: iterate (the last iterate, then averaged: error falls as "
                   "1/√m) or average (the running average, the paper's eq. 2: slower when albedos are high)")
      ->capture_default_str();
}

// The form-factor matrix's flags (--bounces, --direct, --storage, ...).
void addMatrixFlags(CLI::App* command, BakeCommandOptions& options) {
  lightmap::MatrixOptions& mx = options.matrix;
  command
      ->add_option("--bounces", mx.bounces,
                   "matrix: k of the k-bounce matrix N_k = T + ... + T^k (with --direct rays, paths of up to k+1 "
                   "bounces), [1, 64]")
      ->capture_default_str();
  command
      ->add_option("--direct", options.direct,
                   "matrix: the emission vector: rays (direct light by shadow rays to the lights, which can then "
                   "move), matrix (emitters are patches; lights fixed) or auto (rays unless every surface emits)")
      ->capture_default_str();
  command->add_option("--light-samples", mx.lightSamples, "matrix: shadow rays per patch and light, [1, 65536]")
      ->capture_default_str();
  command
      ->add_option("--max-patches", mx.maxPatches,
                   "matrix: refuse atlases with more valid texels (the dense matrix takes 12·n² bytes)")
      ->capture_default_str();
  command
      ->add_option("--storage", options.storage,
                   "matrix: what relights: dense (3 × n² floats) or compressed (exact top entries + a BC1 "
                   "texture of the log-mapped rest, ~10x smaller)")
      ->capture_default_str();
  command
      ->add_option("--exact-fraction", mx.exactFraction,
                   "matrix, compressed: the top fraction of each row and channel kept exact, [0, 1]")
      ->capture_default_str();
  command
      ->add_option("--log-range", mx.logRange,
                   "matrix, compressed: R, the natural-log range below each row's maximum that the 8-bit log "
                   "mapping covers, (0, 64]")
      ->capture_default_str();
  command
      ->add_option("--reorder", options.reorder,
                   "matrix, compressed: none, rows or rows-columns (nearest-neighbour chains before BC1 blocking)")
      ->capture_default_str();
  command->add_option("--save-matrix", options.saveMatrix,
                      "matrix: also write the matrix with its patch mapping to FILE (e.g. cornell.ffmatrix; dense "
                      "storage saves N_k, compressed only the compressed form) for 'ibrr render --matrix FILE "
                      "--move-light ...' and 'ibrr view --matrix FILE'");
}

void addBakeCommand(CLI::App& app) {
  auto options = std::make_shared<BakeCommandOptions>();
  bake::BakeOptions& b = options->bake;
  CLI::App* command = app.add_subcommand(
      "bake",
      "Bake global illumination: the IBRR store (VPL hemicubes warped into a layered depth cube) or a "
      "texel lightmap solved by hemicube gathering, progressive refinement, stochastic iteration or a "
      "form-factor matrix");
  addSceneArgument(*command, options->scene);
  command
      ->add_option("-o,--output", options->output,
                   "file to write: .ibrr store, or .lightmap for --method gather, progressive, stochastic or matrix")
      ->required();
  command
      ->add_option(
          "--method", options->method,
          "ibrr (the LDC store), gather (texel lightmap, hemicube gathering), progressive (texel "
          "lightmap, progressive refinement), stochastic (texel lightmap, stochastic iteration) or matrix (texel "
          "lightmap, k-bounce form-factor matrix; lights can be moved later)")
      ->capture_default_str();
  command->add_option("--ldc", b.ldcResolution, "R: pixels per side of each of the three layered depth images")
      ->capture_default_str();
  command->add_option("--splat", options->splat, "splat kernel: box (the paper's) or gauss")->capture_default_str();
  command
      ->add_option("--warp", options->warp,
                   "where hemicube pixels are inserted into the store: cpu (read back, TBB), gpu (a compute pass "
                   "where the hemicube was rendered, no readback) or auto (cpu: on llvmpipe and on an NVIDIA H100 the "
                   "faster one)")
      ->capture_default_str();
  addLightPathOptions(*command, b);
  addBiasCompensationOptions(*command, b);
  addLightmapFlags(command, *options);
  addShootingFlags(command, *options);
  addMatrixFlags(command, *options);
  command->footer(
      "Examples:\n  ibrr bake cornell -o cornell.ibrr\n  ibrr bake cornell --paths 8192 --ldc 512 -o fine.ibrr\n"
      "  ibrr bake cornell --method gather -o cornell.lightmap\n"
      "  ibrr bake cornell --method gather --atlas 256 --hemicube 128 --tolerance 0.005 -o fine.lightmap\n"
      "  ibrr bake cornell --method progressive -o cornell.lightmap\n"
      "  ibrr bake cornell --method progressive --atlas 1024 --cluster 32 --emitter-cluster 4 -o fine.lightmap\n"
      "  ibrr bake cornell --method progressive --adaptive -o adaptive.lightmap\n"
      "  ibrr bake cornell --method stochastic -o cornell.lightmap\n"
      "  ibrr bake cornell --method stochastic --iterations 2000 --shooters 16 --seed 7 -o more.lightmap\n"
      "  ibrr bake cornell --method matrix --save-matrix cornell.ffmatrix -o cornell.lightmap\n"
      "  ibrr bake cornell --method matrix --storage compressed --reorder rows --bounces 12 -o c.lightmap\n"
      "--hemicube, --indirect-hemicube and --seed serve ibrr and gather (--seed also stochastic, --hemicube and --seed "
      "also matrix: H of its form-factor hemicubes, default " +
      std::to_string(lightmap::MatrixOptions{}.hemicubeResolution) +
      ", and the seed of their rotations and the light samples); for gather they are H of the first "
      "gather (direct light, default " +
      std::to_string(kGatherDefaultHemicube) + "), h of the later ones (default " +
      std::to_string(kGatherDefaultIndirectHemicube) + ") and the seed of the hemicube rotations.");
  command->callback([options, command] { runBake(*command, *options); });
}

}  // namespace ibrr::app
