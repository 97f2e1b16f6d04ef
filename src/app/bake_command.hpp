#pragma once
// `ibrr bake`: its options, what a method's bake is given (BakeRequest), and what the four lightmap methods'
// bakes share (bake_lightmap.cpp). The methods themselves are the table of app/methods.hpp.
#include "bake/bake.hpp"
#include "gpu/context.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/matrix.hpp"
#include "lightmap/progressive.hpp"
#include "lightmap/stochastic.hpp"
#include "scene/scene.hpp"
#include "util/atomic_file.hpp"
#include "util/stopwatch.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ibrr::app {

// The gathering solver's defaults for `ibrr bake --method gather` (lightmap/gather.hpp).
inline constexpr int kGatherDefaultAtlasSize = lightmap::kDefaultGatherAtlasSize;
inline constexpr int kGatherDefaultHemicube = lightmap::GatherOptions{}.hemicubeResolution;
inline constexpr int kGatherDefaultIndirectHemicube = lightmap::GatherOptions{}.indirectHemicubeResolution;
inline constexpr int kGatherDefaultIterations = lightmap::GatherOptions{}.maxIterations;
inline constexpr int kGatherToleranceIterationCap = 1000;  // --tolerance alone: iterate until it is met

// Progressive refinement's atlas default (README, "Progressive refinement"); its solver defaults
// are ProgressiveOptions'.
inline constexpr int kProgressiveDefaultAtlasSize = 256;

// Stochastic iteration's atlas default (README, "Stochastic iteration"); its solver defaults are
// StochasticOptions'.
inline constexpr int kStochasticDefaultAtlasSize = lightmap::kDefaultStochasticAtlasSize;
// The form-factor matrix's atlas default: its patches are the atlas texels, n² entries per channel.
inline constexpr int kMatrixDefaultAtlasSize = lightmap::kDefaultMatrixAtlasSize;

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

// One `ibrr bake` run: the parsed command (which flags were given) and its options.
struct BakeRequest {
  const CLI::App& command;
  const BakeCommandOptions& options;
};

// True when `flag` (e.g. "--atlas") was given on the command line.
bool given(const CLI::App& command, const std::string& flag);

// --- What the lightmap methods share (bake_lightmap.cpp) ---

// The files a lightmap bake writes (the .lightmap, its data file, and --save-matrix) are writable and none is an
// input; a -o FILE.lightmap is given.
void checkLightmapOutputs(const BakeCommandOptions& options);

// The lightmap atlas from --texel-density or --atlas (else the method's default target size).
lightmap::AtlasOptions atlasOptionsFrom(const CLI::App& command, const BakeCommandOptions& options,
                                        int defaultTargetSize);

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
LightmapBakeInputs prepareLightmapBake(const BakeCommandOptions& options, lightmap::AtlasOptions atlasOptions,
                                       const std::string& what,
                                       const std::function<void(const scene::Scene&)>& checkScene,
                                       int adaptiveDepth = 0);

// Stages the solved lightmap with the atlas options it was solved on (the loader rebuilds the atlas
// from them) and its atlas's fingerprint.
void stageSolvedLightmap(OutputSet& outputs, const LightmapBakeInputs& inputs, lightmap::Lightmap solved,
                         const std::string& output);
// Saves the solved lightmap (temporary names, then renames), and says so.
void saveSolvedLightmap(const LightmapBakeInputs& inputs, lightmap::Lightmap solved, const std::string& output);
// The summary's atlas line.
void printAtlasSummary(const LightmapBakeInputs& inputs, const char* texels = "valid texels");
// The summary's last lines: the mean radiance (when given) and the time, split into the atlas and the solve,
// and within the solve its own part `part` (e.g. "shots"; null for none) of `partSeconds`.
void printMeanAndTime(const LightmapBakeInputs& inputs, const glm::dvec3* meanRadiance, double solveSeconds,
                      const char* part = nullptr, double partSeconds = 0.0);

}  // namespace ibrr::app
