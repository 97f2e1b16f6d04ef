// `ibrr bake --method stochastic`: stochastic iteration radiosity on a texel lightmap
// (lightmap/stochastic.hpp), saved as a .lightmap.
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "compare/method_run.hpp"
#include "lightmap/stochastic.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace ibrr::app {
namespace {

// Stochastic iteration's bake: its flags are its StochasticOptions' fields and the atlas's.
class StochasticBake final : public BakeMethod {
public:
  void declareFlags(MethodFlags& flags) override {
    m_atlas.declare(flags, lightmap::kDefaultStochasticAtlasSize, true);
    flags.option("--time-budget", m_settings.timeBudgetSeconds, "stop after the iteration that ends past S seconds");
    flags.option("--iterations", m_settings.iterations, "iterations m (with --time-budget alone, until it ends)");
    flags.option("--seed", m_settings.seed, "seed of the shooters' selection and the ray bundles");
    declareShootingFlags(flags, m_settings.clusterTexels, m_settings.emitterClusterTexels,
                         m_settings.hemisphereResolution, m_settings.maxEdgeFraction);
    flags.option("--shooters", m_settings.shootersPerIteration,
                 "shooting texels per iteration, batched into one update pass, [1, 64]");
    flags.choice(
        "--shoot",
        [this](const std::string& value) {
          if (value == "iterate")
            m_settings.shootFrom = lightmap::StochasticShootFrom::LastIterate;
          else if (value == "average")
            m_settings.shootFrom = lightmap::StochasticShootFrom::RunningAverage;
          else
            throw OptionError("--shoot '" + value + "': choose iterate (the last iterate) or average (the paper's)");
        },
        "iterate",
        "what the shooters carry: iterate (the last iterate, then averaged: error falls as 1/√m) or average (the "
        "running average, the paper's eq. 2: slower when albedos are high)");
  }
  void run(const BakeRun& run) override;

private:
  lightmap::StochasticOptions m_settings;
  AtlasFlags m_atlas;
};

void StochasticBake::run(const BakeRun& run) {
  checkLightmapOutputs(run.output);
  lightmap::StochasticOptions settings = m_settings;
  // --time-budget alone: iterate until it ends.
  if (run.flags.given("--time-budget") && !run.flags.given("--iterations")) settings.iterations = 0;
  lightmap::validateStochasticOptions(settings);
  const lightmap::AtlasOptions atlasOptions = m_atlas.options(run.flags, lightmap::kDefaultStochasticAtlasSize);
  const bool fromIterate = settings.shootFrom == lightmap::StochasticShootFrom::LastIterate;

  const LightmapBakeInputs inputs = prepareLightmapBake(
      run, atlasOptions, "stochastic iteration of",
      [&](const scene::Scene& loaded) { lightmap::checkStochasticScene(loaded); });
  ProgressLine progress;
  const lightmap::StochasticResult result =
      lightmap::solveStochastic(inputs.scene, inputs.atlas, inputs.patches, settings, {}, progress);
  progress.finish();
  saveSolvedLightmap(inputs, result.lightmap, run.output);

  const lightmap::StochasticCheckpoint& end = result.checkpoints.back();
  const double iterations = double(std::max<std::uint64_t>(result.iterations, 1));
  printAtlasSummary(inputs);
  std::printf(
      "shooters         %d per iteration from the %s, drawn on a %d-level sum pyramid; visibility: %zu "
      "triangles tessellated into %zu, hemisphere %d²\n",
      settings.shootersPerIteration, fromIterate ? "last iterate" : "running average",
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
  compare::LightmapRun run(context, setup.atlasOptions, result, kLightmapDisplay);
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
    [] { return std::unique_ptr<BakeMethod>(std::make_unique<StochasticBake>()); },
    false,
    {{"stochastic", "texel lightmap, GPU stochastic iteration radiosity (perspective ray-bundle shooting)",
      compareStochastic}}};

}  // namespace ibrr::app
