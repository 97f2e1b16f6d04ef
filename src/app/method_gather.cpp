// `ibrr bake --method gather`: the hemicube gathering solver on a texel lightmap (lightmap/gather.hpp),
// saved as a .lightmap (EXR atlas + metadata, lightmap/lightmap_file.hpp).
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

void runGatherBake(const BakeRequest& request) {
  const CLI::App& command = request.command;
  const BakeCommandOptions& options = request.options;
  checkLightmapOutputs(options);
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
  ProgressLine progress;
  const lightmap::GatherResult result =
      lightmap::solveGather(inputs.scene, inputs.atlas, inputs.patches, settings, {}, progress);
  progress.finish();
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
  printMeanAndTime(inputs, nullptr, result.seconds);
}

// ---------------------------------------------------------------------------------------------
// In `ibrr compare`: texel lightmap, hemicube gathering (Jacobi iterations), error after every iteration.

struct LightmapSetup {
  lightmap::AtlasOptions atlasOptions;
  lightmap::GatherOptions gatherOptions;
};

LightmapSetup gatherSetup(const compare::CompareOptions& options) {
  LightmapSetup setup;  // Final: the documented defaults of `ibrr bake --method gather`
  setup.atlasOptions.targetSize = lightmap::kDefaultGatherAtlasSize;
  setup.gatherOptions.seed = options.seed + 1;
  if (options.quality == compare::Quality::Smoke) {
    setup.atlasOptions.targetSize = 64;
    setup.gatherOptions.hemicubeResolution = 16;
    setup.gatherOptions.indirectHemicubeResolution = 16;
    setup.gatherOptions.maxIterations = 3;
  } else if (options.quality == compare::Quality::Preview) {
    setup.atlasOptions.targetSize = 64;
    setup.gatherOptions.maxIterations = 6;
  }
  setup.gatherOptions.timeBudgetSeconds = options.budgetSeconds;
  return setup;
}

compare::MethodResult compareGather(const compare::MethodContext& context) {
  const LightmapSetup setup = gatherSetup(context.options);
  compare::MethodResult result;
  compare::LightmapRun run(context, setup.atlasOptions, result);
  ProgressLine progress;
  const lightmap::GatherResult solved = lightmap::solveGather(
      context.scene, run.atlas(), run.patches(), setup.gatherOptions,
      [&](const lightmap::GatherIterationStats& stats, std::span<const glm::vec3> radiance) {
        run.recordIterate(radiance, stats.seconds, "iteration " + std::to_string(stats.iteration));
      },
      progress);
  progress.finish();
  nlohmann::json settings =
      nlohmann::json::parse(lightmap::gatherSettingsJson(setup.gatherOptions, solved.layersPerBatch));
  settings["iterations"] = solved.iterations.size();
  result.summary = run.atlasSummary() + ", H = " + std::to_string(setup.gatherOptions.hemicubeResolution) +
                   " / h = " + std::to_string(setup.gatherOptions.indirectHemicubeResolution) + ", " +
                   std::to_string(solved.iterations.size()) + " Jacobi iterations";
  run.finish(solved.lightmap, solved.seconds, std::move(settings));
  return result;
}

}  // namespace

const Method kGatherMethod = {
    "gather",
    "texel lightmap, hemicube gathering",
    {"--texel-density", "--atlas", "--refine-near-lights", "--iterations", "--tolerance", "--time-budget", "--layers",
     "--no-rotation", "--hemicube", "--indirect-hemicube", "--seed"},
    false,
    runGatherBake,
    {{"gather", "texel lightmap, GPU hemicube gathering with a multiplier map (Jacobi)", compareGather}}};

}  // namespace ibrr::app
