// `ibrr bake --method gather`: the hemicube gathering solver on a texel lightmap (lightmap/gather.hpp),
// saved as a .lightmap (EXR atlas + metadata, lightmap/lightmap_file.hpp).
#include "app/bake_command.hpp"
#include "app/cli_support.hpp"
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

}  // namespace

const BakeMethod kGatherBake = {
    "gather",
    "texel lightmap, hemicube gathering",
    {"--texel-density", "--atlas", "--refine-near-lights", "--iterations", "--tolerance", "--time-budget", "--layers",
     "--no-rotation", "--hemicube", "--indirect-hemicube", "--seed"},
    false,
    runGatherBake};

}  // namespace ibrr::app
