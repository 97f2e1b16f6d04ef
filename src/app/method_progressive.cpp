// `ibrr bake --method progressive`: progressive refinement radiosity on a texel lightmap
// (lightmap/progressive.hpp), with adaptive subdivision by --adaptive, saved as a .lightmap.
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "compare/method_run.hpp"
#include "lightmap/progressive.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace ibrr::app {
namespace {

// The flags of adaptive subdivision: they need --adaptive.
const std::vector<std::string> kAdaptiveOnlyFlags = {"--max-depth",  "--leaf-texels", "--split-gradient",
                                                     "--max-texels", "--split-every", "--leaf-borders"};

// Progressive refinement's bake: its flags are its ProgressiveOptions' fields, the quadtree's (--adaptive) and the
// atlas's.
class ProgressiveBake final : public BakeMethod {
public:
  void declareFlags(MethodFlags& flags) override;
  void run(const BakeRun& run) override;

private:
  lightmap::ProgressiveOptions m_settings;
  lightmap::QuadtreeOptions m_quadtree;
  AtlasFlags m_atlas;
  bool m_adaptive = false;
};

// The default atlas side of progressive refinement (README, "Progressive refinement").
constexpr int kProgressiveDefaultAtlasSize = 256;

void ProgressiveBake::declareFlags(MethodFlags& flags) {
  m_atlas.declare(flags, kProgressiveDefaultAtlasSize, true);
  flags.option("--time-budget", m_settings.timeBudgetSeconds, "stop after the shot that ends past S seconds");
  declareShootingFlags(flags, m_settings.clusterTexels, m_settings.emitterClusterTexels,
                       m_settings.hemisphereResolution, m_settings.maxEdgeFraction);
  flags.option("--residual", m_settings.residualFraction,
               "stop when the unshot power falls below this fraction of the emitted power");
  flags.option("--shots", m_settings.maxShots, "stop after N shots (0 = no limit)");
  flags.toggle("--adaptive", m_adaptive,
               "adaptive subdivision (GPU Gems 2 §39.3): every chart the root of quadtrees whose leaves of k×k texels "
               "split in four where the radiosity's second difference is large; --atlas then sizes the roots "
               "(default " + std::to_string(lightmap::kAdaptiveDefaultRootAtlas) + "), --cluster counts roots (default " +
                   std::to_string(lightmap::kAdaptiveDefaultClusterRoots) + ")");
  flags.option("--max-depth", m_quadtree.depth, "--adaptive: levels of splitting below the roots, [1, 6]");
  flags.option("--leaf-texels", m_quadtree.leafElements, "--adaptive: a leaf holds k×k texels, [1, 32]");
  flags.option("--split-gradient", m_quadtree.splitThreshold,
               "--adaptive: split a leaf where a texel's radiance differs from the line through its neighbours by "
               "more than this fraction of the local radiance (|l₋ − 2l + l₊| / max l)");
  flags.option("--max-texels", m_quadtree.maxElements, "--adaptive: the texel budget; no split beyond it (0 = none)");
  flags.option("--split-every", m_settings.splitEveryShots, "--adaptive: test the leaves after every N shots");
  flags.toggle("--leaf-borders", m_settings.drawLeafBorders,
               "--adaptive: darken the leaves' borders in the lightmap (a picture of the subdivision)");
}

void ProgressiveBake::run(const BakeRun& run) {
  checkLightmapOutputs(run.output);
  lightmap::ProgressiveOptions settings = m_settings;
  if (m_adaptive) {
    lightmap::validateQuadtreeOptions(m_quadtree);
    settings.adaptive = m_quadtree;
    if (!run.flags.given("--cluster")) settings.clusterTexels = lightmap::kAdaptiveDefaultClusterRoots;
  } else {
    for (const std::string& flag : kAdaptiveOnlyFlags)
      if (run.flags.given(flag))
        throw CLI::ValidationError(flag + " is a setting of adaptive subdivision: add --adaptive");
  }
  lightmap::validateProgressiveOptions(settings);
  const lightmap::AtlasOptions atlasOptions =
      m_atlas.options(run.flags, m_adaptive ? lightmap::kAdaptiveDefaultRootAtlas : kProgressiveDefaultAtlasSize);
  const bool adaptive = m_adaptive;

  const LightmapBakeInputs inputs = prepareLightmapBake(
      run, atlasOptions, "progressive refinement of",
      [&](const scene::Scene& loaded) { lightmap::checkProgressiveScene(loaded); }, settings.adaptive.depth);
  ProgressLine progress;
  const lightmap::ProgressiveResult result =
      lightmap::solveProgressive(inputs.scene, inputs.atlas, inputs.patches, settings, {}, progress);
  progress.finish();
  saveSolvedLightmap(inputs, result.lightmap, run.output);

  const lightmap::ProgressiveCheckpoint& end = result.checkpoints.back();
  printAtlasSummary(inputs);
  std::printf(
      "shooters         %zu (blocks of %d² %s, %d² on emitters); visibility: %zu triangles tessellated "
      "into %zu, hemisphere %d²\n",
      result.clusters, settings.clusterTexels, adaptive ? "roots" : "texels", settings.emitterClusterTexels,
      result.sceneTriangles, result.visibilityTriangles, settings.hemisphereResolution);
  if (adaptive)
    std::printf(
        "adaptive         %zu radiosity texels (%.1f%% of the finest level's %zu) in %zu leaves of %d² texels, "
        "%zu leaf splits (%.2f s), roots %d² atlas texels\n",
        result.elements, 100.0 * double(result.elements) / double(std::max<std::size_t>(inputs.validTexels, 1)),
        inputs.validTexels, result.leaves.size(), settings.adaptive.leafElements, result.leafSplits,
        result.splitSeconds, 1 << settings.adaptive.depth);
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

// ---------------------------------------------------------------------------------------------
// In `ibrr compare`: texel lightmap, progressive refinement radiosity, error every so many shots.

struct ProgressiveSetup {
  lightmap::AtlasOptions atlasOptions;  // adaptive: the roots'
  lightmap::ProgressiveOptions progressiveOptions;
};

// Final: the atlas's and the solver's documented defaults (adaptive: `ibrr bake --adaptive`'s).
ProgressiveSetup progressiveSetup(const compare::CompareOptions& options, bool adaptive) {
  ProgressiveSetup setup;
  lightmap::ProgressiveOptions& p = setup.progressiveOptions;
  p.checkpointShots = 500;
  if (adaptive) {
    setup.atlasOptions.targetSize = lightmap::kAdaptiveDefaultRootAtlas;
    p.adaptive = lightmap::QuadtreeOptions{};
    p.clusterTexels = lightmap::kAdaptiveDefaultClusterRoots;
  }
  if (options.quality == compare::Quality::Smoke) {
    setup.atlasOptions.targetSize = adaptive ? 32 : 64;
    p.hemisphereResolution = 128;
    p.residualFraction = 0.05;
    p.maxShots = 400;
    p.checkpointShots = 100;
  } else if (options.quality == compare::Quality::Preview) {
    setup.atlasOptions.targetSize /= 2;
    p.clusterTexels /= 2;  // the same shooter size in scene units as at the final atlas
    p.residualFraction = 0.02;
    p.checkpointShots = 250;
  }
  p.timeBudgetSeconds = options.budgetSeconds;
  return setup;
}

compare::MethodResult compareProgressive(const compare::MethodContext& context, bool adaptive) {
  const ProgressiveSetup setup = progressiveSetup(context.options, adaptive);
  const lightmap::ProgressiveOptions& options = setup.progressiveOptions;
  compare::MethodResult result;
  compare::LightmapRun run(context,
                           adaptive
                               ? lightmap::finestAtlasOptions(context.scene, setup.atlasOptions, options.adaptive.depth)
                               : setup.atlasOptions,
                           result, kLightmapDisplay);
  ProgressLine progress;
  const lightmap::ProgressiveResult solved = lightmap::solveProgressive(
      context.scene, run.atlas(), run.patches(), options,
      [&](const lightmap::ProgressiveCheckpoint& checkpoint, std::span<const glm::vec3> radiance) {
        run.recordIterate(radiance, checkpoint.seconds, std::to_string(checkpoint.shots) + " shots");
      },
      progress);
  progress.finish();
  nlohmann::json settings = nlohmann::json::parse(lightmap::progressiveSettingsJson(options));
  settings["shots"] = solved.shots;
  settings["clusters"] = solved.clusters;
  settings["visibilityTriangles"] = solved.visibilityTriangles;
  settings["residualFractionReached"] = solved.checkpoints.back().residualFraction;
  settings["stopReason"] = solved.stopReason;
  settings["radiosityTexels"] = solved.elements;
  const long residualTenthsOfPercent = std::lround(1000.0 * solved.checkpoints.back().residualFraction);
  const std::string residual =
      std::to_string(residualTenthsOfPercent / 10) + "." + std::to_string(residualTenthsOfPercent % 10) + "%";
  result.summary = run.atlasSummary() + ", " +
                   (adaptive ? std::to_string(solved.elements) + " radiosity texels in " +
                                   std::to_string(solved.leaves.size()) + " leaves, "
                             : std::string()) +
                   std::to_string(solved.clusters) + " shooters (" + std::to_string(options.clusterTexels) + "² " +
                   (adaptive ? "root" : "texel") + " blocks), " + std::to_string(solved.shots) + " shots to " +
                   residual + " residual";
  run.finish(solved.lightmap, solved.seconds, std::move(settings));
  return result;
}

}  // namespace

const Method kProgressiveMethod = {
    "progressive",
    "texel lightmap, progressive refinement",
    [] { return std::unique_ptr<BakeMethod>(std::make_unique<ProgressiveBake>()); },
    false,
    {{"progressive", "texel lightmap, GPU progressive refinement radiosity (hemispherical projection)",
      [](const compare::MethodContext& context) { return compareProgressive(context, false); }},
     {"progressive-adaptive",
      "the same with adaptive subdivision: quadtree leaves split where the radiosity's second difference is large",
      [](const compare::MethodContext& context) { return compareProgressive(context, true); }}}};

}  // namespace ibrr::app
