// `ibrr bake --method progressive`: progressive refinement radiosity on a texel lightmap
// (lightmap/progressive.hpp), with adaptive subdivision by --adaptive, saved as a .lightmap.
#include "app/bake_command.hpp"
#include "app/cli_support.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace ibrr::app {
namespace {

// The flags of adaptive subdivision: they need --adaptive.
const std::vector<std::string> kAdaptiveOnlyFlags = {"--max-depth",  "--leaf-texels",  "--split-gradient",
                                                     "--max-texels", "--split-every", "--leaf-borders"};

void runProgressiveBake(const BakeRequest& request) {
  const CLI::App& command = request.command;
  const BakeCommandOptions& options = request.options;
  checkLightmapOutputs(options);
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
  ProgressLine progress;
  const lightmap::ProgressiveResult result =
      lightmap::solveProgressive(inputs.scene, inputs.atlas, inputs.patches, settings, {}, progress);
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
  const glm::dvec3 mean(end.meanRadiance);
  printMeanAndTime(inputs, &mean, result.seconds, "shots", result.shootSeconds);
}

}  // namespace

const BakeMethod kProgressiveBake = {
    "progressive",
    "texel lightmap, progressive refinement",
    {"--texel-density", "--atlas", "--refine-near-lights", "--time-budget", "--hemisphere", "--max-edge", "--cluster",
     "--emitter-cluster", "--residual", "--shots", "--adaptive", "--max-depth", "--leaf-texels", "--split-gradient",
     "--max-texels", "--split-every", "--leaf-borders"},
    false,
    runProgressiveBake};

}  // namespace ibrr::app
