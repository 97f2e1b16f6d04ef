// `ibrr bake --method gather`: the hemicube gathering solver on a texel lightmap (lightmap/gather.hpp),
// saved as a .lightmap (EXR atlas + metadata, lightmap/lightmap_file.hpp).
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "compare/method_run.hpp"
#include "lightmap/gather.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace ibrr::app {
namespace {

// --tolerance without --iterations: iterate until it is met, up to this many times.
constexpr int kGatherToleranceIterationCap = 1000;

// The hemicube gathering solver's bake: its flags are its GatherOptions' fields and the atlas's.
class GatherBake final : public BakeMethod {
public:
  void declareFlags(MethodFlags& flags) override {
    m_atlas.declare(flags, lightmap::kDefaultGatherAtlasSize, true);
    flags.option("--iterations", m_settings.maxIterations,
                 "Jacobi iterations K (with --tolerance alone, until it is met)");
    flags.option("--tolerance", m_settings.tolerance,
                 "stop when no texel changes by more than this fraction in an iteration (e.g. 0.01)");
    flags.option("--time-budget", m_settings.timeBudgetSeconds, "stop after the iteration that ends past S seconds");
    flags.option("--layers", m_settings.layersPerBatch,
                 "hemicubes per instanced draw (texture-array layers); 0 = automatic (a 96 MiB array on a GPU, 4 MiB "
                 "on llvmpipe)");
    flags.toggle("--no-rotation", m_noRotation,
                 "no random rotation of the hemicubes about the normal (banding instead of noise)");
    flags.option("--hemicube", m_settings.hemicubeResolution, "H of the first gather (the direct light)");
    flags.option("--indirect-hemicube", m_settings.indirectHemicubeResolution,
                 "h of the later gathers (default the smaller of its own and H)");
    flags.option("--seed", m_settings.seed, "seed of the hemicube rotations");
  }
  void run(const BakeRun& run) override;

private:
  lightmap::GatherOptions m_settings;
  AtlasFlags m_atlas;
  bool m_noRotation = false;
};

void GatherBake::run(const BakeRun& run) {
  checkLightmapOutputs(run.output);
  lightmap::GatherOptions settings = m_settings;
  // h defaults to the smaller of its default and H (so that --hemicube 16 alone is valid).
  if (!run.flags.given("--indirect-hemicube"))
    settings.indirectHemicubeResolution =
        std::min(lightmap::GatherOptions{}.indirectHemicubeResolution, settings.hemicubeResolution);
  settings.randomRotation = !m_noRotation;
  if (!run.flags.given("--iterations") && run.flags.given("--tolerance"))
    settings.maxIterations = kGatherToleranceIterationCap;
  lightmap::validateGatherOptions(settings);
  const lightmap::AtlasOptions atlasOptions = m_atlas.options(run.flags, lightmap::kDefaultGatherAtlasSize);

  const LightmapBakeInputs inputs = prepareLightmapBake(
      run, atlasOptions, "gathering", [&](const scene::Scene& loaded) { lightmap::checkGatherScene(loaded); });
  ProgressLine progress;
  const lightmap::GatherResult result =
      lightmap::solveGather(inputs.scene, inputs.atlas, inputs.patches, settings, {}, progress);
  progress.finish();
  saveSolvedLightmap(inputs, result.lightmap, run.output);

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
  compare::LightmapRun run(context, setup.atlasOptions, result, kLightmapDisplay);
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
    [] { return std::unique_ptr<BakeMethod>(std::make_unique<GatherBake>()); },
    false,
    {{"gather", "texel lightmap, GPU hemicube gathering with a multiplier map (Jacobi)", compareGather}}};

}  // namespace ibrr::app
