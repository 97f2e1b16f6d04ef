// `ibrr bake --method stochastic`: stochastic iteration radiosity on a texel lightmap
// (lightmap/stochastic.hpp), saved as a .lightmap.
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "compare/method_run.hpp"
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
      [&](const scene::Scene& loaded) { lightmap::checkStochasticScene(loaded); });
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

// ---------------------------------------------------------------------------------------------
// In `ibrr compare`: texel lightmap, stochastic iteration radiosity, error every so many iterations.

struct StochasticSetup {
  lightmap::AtlasOptions atlasOptions;
  lightmap::StochasticOptions stochasticOptions;
};

StochasticSetup stochasticSetup(const compare::CompareOptions& options) {
  StochasticSetup setup;  // Final: the atlas's and the solver's documented defaults
  setup.atlasOptions.targetSize = lightmap::kDefaultStochasticAtlasSize;
  lightmap::StochasticOptions& s = setup.stochasticOptions;
  s.seed = options.seed + 1;
  if (options.quality == compare::Quality::Smoke) {
    setup.atlasOptions.targetSize = 48;
    s.hemisphereResolution = 64;
    s.clusterTexels = std::max(1, s.clusterTexels / 4);
    s.iterations = 40;
  } else if (options.quality == compare::Quality::Preview) {
    setup.atlasOptions.targetSize = lightmap::kDefaultStochasticAtlasSize / 2;
    s.clusterTexels = std::max(1, s.clusterTexels / 2);  // the same shooter size in scene units
    s.iterations /= 4;
  }
  s.checkpointIterations = std::max<std::uint64_t>(s.iterations / 8, 1);
  s.timeBudgetSeconds = options.budgetSeconds;
  if (s.timeBudgetSeconds > 0.0) s.iterations = 0;  // until the budget ends
  return setup;
}

compare::MethodResult compareStochastic(const compare::MethodContext& context) {
  const StochasticSetup setup = stochasticSetup(context.options);
  compare::MethodResult result;
  compare::LightmapRun run(context, setup.atlasOptions, result);
  ProgressLine progress;
  const lightmap::StochasticResult solved = lightmap::solveStochastic(
      context.scene, run.atlas(), run.patches(), setup.stochasticOptions,
      [&](const lightmap::StochasticCheckpoint& checkpoint, std::span<const glm::vec3> radiance) {
        run.recordIterate(radiance, checkpoint.seconds, std::to_string(checkpoint.iterations) + " iterations");
      },
      progress);
  progress.finish();
  nlohmann::json settings = nlohmann::json::parse(lightmap::stochasticSettingsJson(setup.stochasticOptions));
  settings["iterationsRun"] = solved.iterations;
  settings["shotsRun"] = solved.shots;
  settings["clusters"] = solved.clusters;
  settings["visibilityTriangles"] = solved.visibilityTriangles;
  settings["stopReason"] = solved.stopReason;
  result.summary = run.atlasSummary() + ", " + std::to_string(solved.iterations) + " iterations of " +
                   std::to_string(setup.stochasticOptions.shootersPerIteration) + " shooters (" +
                   std::to_string(setup.stochasticOptions.clusterTexels) + "² texel blocks)";
  run.finish(solved.lightmap, solved.seconds, std::move(settings));
  return result;
}

}  // namespace

const Method kStochasticMethod = {
    "stochastic",
    "texel lightmap, stochastic iteration",
    {"--texel-density", "--atlas", "--refine-near-lights", "--time-budget", "--iterations", "--seed", "--hemisphere",
     "--max-edge", "--cluster", "--emitter-cluster", "--shooters", "--shoot"},
    false,
    runStochasticBake,
    {{"stochastic", "texel lightmap, GPU stochastic iteration radiosity (perspective ray-bundle shooting)",
      compareStochastic}}};

}  // namespace ibrr::app
