// `ibrr bake --method stochastic`: stochastic iteration radiosity on a texel lightmap
// (lightmap/stochastic.hpp), saved as a .lightmap.
#include "app/bake_command.hpp"
#include "app/cli_support.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace ibrr::app {
namespace {

void runStochasticBake(const BakeRequest& request) {
  const CLI::App& command = request.command;
  const BakeCommandOptions& options = request.options;
  checkLightmapOutputs(options);
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
  ProgressLine progress;
  const lightmap::StochasticResult result =
      lightmap::solveStochastic(inputs.scene, inputs.atlas, inputs.patches, settings, {}, progress);
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
  const glm::dvec3 mean(end.meanRadiance);
  printMeanAndTime(inputs, &mean, result.seconds, "iterations", result.iterateSeconds);
}

}  // namespace

const BakeMethod kStochasticBake = {
    "stochastic",
    "texel lightmap, stochastic iteration",
    {"--texel-density", "--atlas", "--refine-near-lights", "--time-budget", "--iterations", "--seed", "--hemisphere",
     "--max-edge", "--cluster", "--emitter-cluster", "--shooters", "--shoot"},
    false,
    runStochasticBake};

}  // namespace ibrr::app
