#include "compare/compare.hpp"

#include "bake/bake.hpp"
#include "display/render_methods.hpp"
#include "gpu/context.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/matrix.hpp"
#include "lightmap/progressive.hpp"
#include "lightmap/stochastic.hpp"
#include "metrics/metrics.hpp"
#include "rays/embree_scene.hpp"
#include "rays/pinhole.hpp"
#include "rays/reference.hpp"
#include "scene/load.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <thread>

namespace ibrr::compare {
namespace {

// Every method renders at twice the report size and box-filters down, as `ibrr render
// --supersample 2` does, so that edges are averaged like the path tracer's pixels.
constexpr int kSupersample = 2;

struct RenderedView {
  display::Image image;
  double displaySeconds = 0.0;
  std::uint64_t holes = 0;
  std::uint64_t covered = 0;
};

RenderedView renderView(const display::RenderMethod& method, const scene::Scene& scene, const scene::Camera& camera,
                        const CompareOptions& options, const display::RenderSettings& settings) {
  display::RenderOutput output = method.render(
      {scene, camera, options.width * kSupersample, options.height * kSupersample, settings});
  RenderedView view;
  view.image = display::downsample(output.image, kSupersample);
  view.displaySeconds = output.reconstructionSeconds;
  view.holes = output.holePixels;
  view.covered = output.coveredPixels;
  return view;
}

// A frame's display time: the second of two renders (the first compiles shaders and uploads).
CameraResult renderCamera(const MethodContext& context, std::size_t c, const display::RenderMethod& method,
                          const display::RenderSettings& settings, bool warmUp = true) {
  if (warmUp) (void)renderView(method, context.scene, context.cameras[c], context.options, settings);
  RenderedView view = renderView(method, context.scene, context.cameras[c], context.options, settings);
  CameraResult result;
  result.camera = context.cameras[c].name;
  result.error = context.measure(c, view.image);
  result.image = std::move(view.image);
  result.displayMilliseconds = 1e3 * view.displaySeconds;
  result.holePixels = view.holes;
  result.coveredPixels = view.covered;
  return result;
}

std::string jsonText(const nlohmann::json& json) { return json.dump(); }

// ---------------------------------------------------------------------------------------------
// IBRR: bake the store (checkpoints at 1/8, 1/4, 1/2 of the paths), render every camera.

bake::BakeOptions ibrrBakeOptions(const CompareOptions& options) {
  bake::BakeOptions bake;  // Final: the documented defaults
  bake.seed = options.seed;
  if (options.quality == Quality::Preview) bake.paths = 1024;
  if (options.quality == Quality::Smoke) {
    bake.paths = 32;
    bake.ldcResolution = 128;
    bake.hemicubeResolution = 32;
    bake.indirectHemicubeResolution = 16;
  }
  bake.timeBudgetSeconds = options.budgetSeconds;
  return bake;
}

nlohmann::json bakeSettingsJson(const bake::BakeOptions& bake) {
  return {{"paths", bake.paths},
          {"seed", bake.seed},
          {"maxBounces", bake.maxBounces},
          {"ldcResolution", bake.ldcResolution},
          {"hemicubeResolution", bake.hemicubeResolution},
          {"indirectHemicubeResolution", bake.indirectHemicubeResolution},
          {"geometryClamp", bake.geometryClamp},
          {"biasCompensation", bake.biasCompensation},
          {"biasRays", bake.biasRays},
          {"biasPasses", bake.biasPasses},
          {"splat", bake.splat == SplatKernel::Box ? "box" : "gauss"},
          {"seedLayersFromGeometry", bake.seedLayersFromGeometry},
          {"timeBudgetSeconds", bake.timeBudgetSeconds},
          {"supersample", kSupersample}};
}

// The IBRR bake and display, with the clamp's bias compensated (the default) or not ("ibrr-clamped").
MethodResult runIbrrBake(const MethodContext& context, bool biasCompensation) {
  bake::BakeOptions bake = ibrrBakeOptions(context.options);
  bake.biasCompensation = biasCompensation;
  const display::RenderMethod& method = display::findRenderMethod("ibrr");
  MethodResult result;
  result.method = biasCompensation ? "ibrr" : "ibrr-clamped";
  bake::BakeCheckpoints checkpoints;
  for (std::uint32_t divisor : {8u, 4u, 2u})
    if (bake.paths / divisor > 0) checkpoints.paths.push_back(bake.paths / divisor);
  // Each point is what a bake of that many paths gives and costs: compensated (its time added) when the
  // bake is.
  checkpoints.onCheckpoint = [&](const LayeredDepthCube& partial, std::uint32_t paths, double seconds) {
    std::optional<LayeredDepthCube> compensated;
    if (bake.biasCompensation && bake::geometryClampFor(context.scene, bake) > 0.0f) {
      bake::BakeStats stats;
      compensated = bake::compensateBias(context.scene, partial, bake, {}, stats);
      seconds += stats.biasSeconds;
    }
    display::RenderSettings settings;
    settings.store = compensated ? &*compensated : &partial;
    const double error = context.meanError([&](std::size_t c) {
      return renderView(method, context.scene, context.cameras[c], context.options, settings).image;
    });
    result.convergence.push_back({seconds, error, std::to_string(paths) + " of " + std::to_string(bake.paths) +
                                                      " paths"});
  };
  ProgressLine progress;
  const bake::BakeResult baked = bake::bakeStore(context.scene, bake, progress, &checkpoints);
  progress.finish();
  result.bakeSeconds = baked.stats.totalSeconds;
  result.bytes = baked.store.stats().totalBytes;
  result.bytesWhat = "store";
  result.invalidWhat = "hole pixels";
  nlohmann::json settings = bakeSettingsJson(bake);
  settings["pathsCompleted"] = baked.stats.pathsCompleted;
  settings["vpls"] = baked.stats.hemicubes;
  result.settingsJson = jsonText(settings);
  result.summary = std::to_string(baked.stats.pathsCompleted) + " paths, " + std::to_string(baked.stats.hemicubes) +
                   " VPLs, R = " + std::to_string(bake.ldcResolution) + ", H = " +
                   std::to_string(bake.hemicubeResolution) + ", h = " + std::to_string(bake.indirectHemicubeResolution) +
                   (baked.stats.biasCompensated ? ", bias compensated (" + std::to_string(bake.biasRays) +
                                                      " rays per layer, " + std::to_string(bake.biasPasses) + " passes)"
                                                : ", clamped, no bias compensation");
  display::RenderSettings renderSettings;
  renderSettings.store = &baked.store;
  for (std::size_t c = 0; c < context.cameras.size(); ++c) {
    result.cameras.push_back(renderCamera(context, c, method, renderSettings));
    result.invalid += result.cameras.back().holePixels;
  }
  double meanError = 0.0;
  for (const CameraResult& camera : result.cameras) meanError += camera.error.relativeRmse;
  result.convergence.push_back({result.bakeSeconds, meanError / double(result.cameras.size()),
                                std::to_string(baked.stats.pathsCompleted) + " paths (final)"});
  return result;
}

// ---------------------------------------------------------------------------------------------
// Keller's instant radiosity: no precomputation, every frame shades all VPLs with shadow maps.

// Keller's frame on IBRR's VPLs, with the per-pixel bias compensation (the default) or not ("keller-clamped").
MethodResult runKellerFrame(const MethodContext& context, bool biasCompensation) {
  bake::BakeOptions vplOptions = ibrrBakeOptions(context.options);  // the same VPLs as IBRR's bake
  vplOptions.biasCompensation = biasCompensation;
  vplOptions.timeBudgetSeconds = 0.0;
  // Keller's frame costs a shadow map per VPL: on a CPU rasteriser the preview uses a quarter of
  // IBRR's paths (the first quarter of the same VPLs).
  if (context.options.quality == Quality::Preview) vplOptions.paths /= 4;
  const display::RenderMethod& method = display::findRenderMethod("keller");
  display::RenderSettings settings;
  settings.vplOptions = vplOptions;
  MethodResult result;
  result.method = biasCompensation ? "keller" : "keller-clamped";
  result.bytesWhat = "VPL list";
  result.bytes = bake::generateBakeVpls(context.scene, vplOptions).vpls.size() * sizeof(rays::Vpl);
  result.settingsJson = jsonText(bakeSettingsJson(vplOptions));
  result.summary = std::to_string(vplOptions.paths) + " paths, the same VPLs and clamp as IBRR's first " +
                   std::to_string(vplOptions.paths) + " paths, shadow hemicubes H = " +
                   std::to_string(vplOptions.hemicubeResolution) + " / h = " +
                   std::to_string(vplOptions.indirectHemicubeResolution) +
                   (biasCompensation ? ", bias compensated per pixel" : ", clamped, no bias compensation");
  for (std::size_t c = 0; c < context.cameras.size(); ++c)
    result.cameras.push_back(renderCamera(context, c, method, settings, /*warmUp=*/false));
  // Its whole cost is per frame: the curve's one point is the first camera's frame time.
  double meanError = 0.0;
  for (const CameraResult& camera : result.cameras) meanError += camera.error.relativeRmse;
  result.convergence.push_back({1e-3 * result.cameras.front().displayMilliseconds,
                                meanError / double(result.cameras.size()), "one frame"});
  return result;
}

// What the texel-lightmap solvers share in a comparison: the atlas and its patches, the error of
// an iterate as a convergence point (rendering it is left out of the solver's time), and the
// result's common figures and final renders.
class LightmapRun {
public:
  LightmapRun(const MethodContext& context, const lightmap::AtlasOptions& atlasOptions, MethodResult& result)
      : m_context(context),
        m_atlasOptions(atlasOptions),
        m_result(result),
        m_method(display::findRenderMethod("lightmap")) {
    const Stopwatch setupTime;
    m_atlas = lightmap::buildAtlas(context.scene, atlasOptions);
    m_patches = lightmap::rasterizePatches(context.scene, m_atlas);
    m_atlasSeconds = setupTime.seconds();
    for (std::uint8_t valid : m_patches.valid) m_validTexels += valid;
  }

  const lightmap::LightmapAtlas& atlas() const { return m_atlas; }
  const lightmap::PatchList& patches() const { return m_patches; }
  std::uint64_t validTexels() const { return m_validTexels; }

  // The error of iterate `radiance`, reached after `solverSeconds` of the solver's wall time.
  void recordIterate(std::span<const glm::vec3> radiance, double solverSeconds, std::string label) {
    const Stopwatch callbackTime;
    lightmap::Lightmap iterate;
    iterate.atlasOptions = m_atlasOptions;
    iterate.width = m_atlas.width;
    iterate.height = m_atlas.height;
    iterate.radiance.assign(radiance.begin(), radiance.end());
    iterate.sceneFingerprint = m_context.scene.fingerprint();
    const display::RenderSettings settings = settingsFor(iterate);
    const double error = m_context.meanError([&](std::size_t c) {
      return renderView(m_method, m_context.scene, m_context.cameras[c], m_context.options, settings).image;
    });
    m_result.convergence.push_back({m_atlasSeconds + solverSeconds - m_callbackSeconds, error, std::move(label)});
    m_callbackSeconds += callbackTime.seconds();
  }

  // Bake time, bytes, the settings JSON with the atlas added, and every camera's final render.
  void finish(lightmap::Lightmap lightmap, double solverSeconds, nlohmann::json settings) {
    lightmap.atlasOptions = m_atlasOptions;
    m_result.bakeSeconds = m_atlasSeconds + solverSeconds - m_callbackSeconds;
    m_result.bytes = std::uint64_t(lightmap.width) * std::uint64_t(lightmap.height) * sizeof(glm::vec3);
    m_result.bytesWhat = "lightmap radiance (RGB32F)";
    m_result.invalidWhat = "invalid texels";
    m_result.invalid = 0;  // every valid texel gets a value; padding is not a surface
    settings["atlas"] = {{"width", m_atlas.width},
                         {"height", m_atlas.height},
                         {"texelsPerUnit", m_atlas.texelsPerUnit},
                         {"targetSize", m_atlasOptions.targetSize},
                         {"paddingTexels", m_atlasOptions.paddingTexels},
                         {"validTexels", m_validTexels},
                         {"charts", m_atlas.chartCount}};
    settings["supersample"] = kSupersample;
    m_result.settingsJson = jsonText(settings);
    const display::RenderSettings renderSettings = settingsFor(lightmap);
    for (std::size_t c = 0; c < m_context.cameras.size(); ++c)
      m_result.cameras.push_back(renderCamera(m_context, c, m_method, renderSettings));
  }

  std::string atlasSummary() const {
    return std::to_string(m_atlas.width) + "x" + std::to_string(m_atlas.height) + " atlas (" +
           std::to_string(m_validTexels) + " texels)";
  }

private:
  display::RenderSettings settingsFor(const lightmap::Lightmap& lightmap) const {
    display::RenderSettings settings;
    settings.lightmap = &lightmap;
    settings.lightmapAtlas = &m_atlas;
    settings.lightmapPatches = &m_patches;
    return settings;
  }

  const MethodContext& m_context;
  lightmap::AtlasOptions m_atlasOptions;
  MethodResult& m_result;
  const display::RenderMethod& m_method;
  lightmap::LightmapAtlas m_atlas;
  lightmap::PatchList m_patches;
  double m_atlasSeconds = 0.0;
  double m_callbackSeconds = 0.0;  // rendering iterates, left out of the solver's times
  std::uint64_t m_validTexels = 0;
};

// ---------------------------------------------------------------------------------------------
// Texel lightmap, hemicube gathering (Jacobi iterations), error after every iteration.

struct LightmapSetup {
  lightmap::AtlasOptions atlasOptions;
  lightmap::GatherOptions gatherOptions;
};

LightmapSetup gatherSetup(const CompareOptions& options) {
  LightmapSetup setup;  // Final: the documented defaults of `ibrr bake --method gather`
  setup.atlasOptions.targetSize = lightmap::kDefaultGatherAtlasSize;
  setup.gatherOptions.seed = options.seed + 1;
  if (options.quality == Quality::Smoke) {
    setup.atlasOptions.targetSize = 64;
    setup.gatherOptions.hemicubeResolution = 16;
    setup.gatherOptions.indirectHemicubeResolution = 16;
    setup.gatherOptions.maxIterations = 3;
  } else if (options.quality == Quality::Preview) {
    setup.atlasOptions.targetSize = 64;
    setup.gatherOptions.maxIterations = 6;
  }
  setup.gatherOptions.timeBudgetSeconds = options.budgetSeconds;
  return setup;
}

MethodResult runGather(const MethodContext& context) {
  const LightmapSetup setup = gatherSetup(context.options);
  MethodResult result;
  result.method = "gather";
  LightmapRun run(context, setup.atlasOptions, result);
  ProgressLine progress;
  const lightmap::GatherResult solved = lightmap::solveGather(
      context.scene, run.atlas(), run.patches(), setup.gatherOptions,
      [&](const lightmap::GatherIterationStats& stats, std::span<const glm::vec3> radiance) {
        run.recordIterate(radiance, stats.seconds, "iteration " + std::to_string(stats.iteration));
      },
      progress);
  progress.finish();
  nlohmann::json settings = nlohmann::json::parse(lightmap::gatherSettingsJson(setup.gatherOptions, solved.layersPerBatch));
  settings["iterations"] = solved.iterations.size();
  result.summary = run.atlasSummary() + ", H = " + std::to_string(setup.gatherOptions.hemicubeResolution) +
                   " / h = " + std::to_string(setup.gatherOptions.indirectHemicubeResolution) + ", " +
                   std::to_string(solved.iterations.size()) + " Jacobi iterations";
  run.finish(solved.lightmap, solved.seconds, std::move(settings));
  return result;
}

// ---------------------------------------------------------------------------------------------
// Texel lightmap, progressive refinement radiosity, error every so many shots.

struct ProgressiveSetup {
  lightmap::AtlasOptions atlasOptions;  // adaptive: the roots'
  lightmap::ProgressiveOptions progressiveOptions;
};

// Final: the atlas's and the solver's documented defaults (adaptive: `ibrr bake --adaptive`'s).
ProgressiveSetup progressiveSetup(const CompareOptions& options, bool adaptive) {
  ProgressiveSetup setup;
  lightmap::ProgressiveOptions& p = setup.progressiveOptions;
  p.checkpointShots = 500;
  if (adaptive) {
    setup.atlasOptions.targetSize = lightmap::kAdaptiveDefaultRootAtlas;
    p.adaptive = lightmap::QuadtreeOptions{};
    p.clusterTexels = lightmap::kAdaptiveDefaultClusterRoots;
  }
  if (options.quality == Quality::Smoke) {
    setup.atlasOptions.targetSize = adaptive ? 32 : 64;
    p.hemisphereResolution = 128;
    p.residualFraction = 0.05;
    p.maxShots = 400;
    p.checkpointShots = 100;
  } else if (options.quality == Quality::Preview) {
    setup.atlasOptions.targetSize /= 2;
    p.clusterTexels /= 2;  // the same shooter size in scene units as at the final atlas
    p.residualFraction = 0.02;
    p.checkpointShots = 250;
  }
  p.timeBudgetSeconds = options.budgetSeconds;
  return setup;
}

MethodResult runProgressive(const MethodContext& context, bool adaptive) {
  const ProgressiveSetup setup = progressiveSetup(context.options, adaptive);
  const lightmap::ProgressiveOptions& options = setup.progressiveOptions;
  MethodResult result;
  result.method = adaptive ? "progressive-adaptive" : "progressive";
  LightmapRun run(context,
                  adaptive ? lightmap::finestAtlasOptions(context.scene, setup.atlasOptions, options.adaptive.depth)
                           : setup.atlasOptions,
                  result);
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

// ---------------------------------------------------------------------------------------------
// Texel lightmap, stochastic iteration radiosity, error every so many iterations.

struct StochasticSetup {
  lightmap::AtlasOptions atlasOptions;
  lightmap::StochasticOptions stochasticOptions;
};

StochasticSetup stochasticSetup(const CompareOptions& options) {
  StochasticSetup setup;  // Final: the atlas's and the solver's documented defaults
  setup.atlasOptions.targetSize = lightmap::kDefaultStochasticAtlasSize;
  lightmap::StochasticOptions& s = setup.stochasticOptions;
  s.seed = options.seed + 1;
  if (options.quality == Quality::Smoke) {
    setup.atlasOptions.targetSize = 48;
    s.hemisphereResolution = 64;
    s.clusterTexels = std::max(1, s.clusterTexels / 4);
    s.iterations = 40;
  } else if (options.quality == Quality::Preview) {
    setup.atlasOptions.targetSize = lightmap::kDefaultStochasticAtlasSize / 2;
    s.clusterTexels = std::max(1, s.clusterTexels / 2);  // the same shooter size in scene units
    s.iterations /= 4;
  }
  s.checkpointIterations = std::max<std::uint64_t>(s.iterations / 8, 1);
  s.timeBudgetSeconds = options.budgetSeconds;
  if (s.timeBudgetSeconds > 0.0) s.iterations = 0;  // until the budget ends
  return setup;
}

MethodResult runStochastic(const MethodContext& context) {
  const StochasticSetup setup = stochasticSetup(context.options);
  MethodResult result;
  result.method = "stochastic";
  LightmapRun run(context, setup.atlasOptions, result);
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

// ---------------------------------------------------------------------------------------------
// Texel lightmap, k-bounce form-factor matrix: precompute (form factors, N_k), then one relight;
// a single convergence point, the end (N_k is all k bounces at once, there is no iterate before it).

struct MatrixSetup {
  lightmap::AtlasOptions atlasOptions;
  lightmap::MatrixOptions matrixOptions;
};

MatrixSetup matrixSetup(const CompareOptions& options) {
  MatrixSetup setup;  // Final: the documented defaults of `ibrr bake --method matrix`
  setup.atlasOptions.targetSize = lightmap::kDefaultMatrixAtlasSize;
  lightmap::MatrixOptions& m = setup.matrixOptions;
  m.seed = options.seed + 1;
  if (options.quality == Quality::Smoke) {  // ~440 patches on the Cornell box
    setup.atlasOptions.targetSize = 32;
    m.hemicubeResolution = 16;
    m.bounces = 4;
    m.lightSamples = 16;
  } else if (options.quality == Quality::Preview) {  // ~1,100 patches
    setup.atlasOptions.targetSize = 48;
    m.hemicubeResolution = 32;
    m.lightSamples = 64;
  }
  return setup;
}

MethodResult runMatrix(const MethodContext& context) {
  const MatrixSetup setup = matrixSetup(context.options);
  MethodResult result;
  result.method = "matrix";
  LightmapRun run(context, setup.atlasOptions, result);
  ProgressLine progress;
  const lightmap::MatrixResult solved =
      lightmap::solveMatrix(context.scene, run.atlas(), run.patches(), setup.matrixOptions, progress);
  progress.finish();
  const lightmap::MatrixSolution& solution = *solved.solution;
  const double relightMs = solved.timing.directMs + solved.timing.productMs + solved.timing.transferMs;
  run.recordIterate(solved.lightmap.radiance, solved.seconds, "k = " + std::to_string(solution.bounces));
  nlohmann::json settings = nlohmann::json::parse(solution.settingsJson);
  settings["patches"] = solution.size();
  settings["formFactorSeconds"] = solution.formFactorSeconds;
  settings["bounceMatrixSeconds"] = solution.powerSeconds;
  settings["relightMilliseconds"] = relightMs;
  result.summary = run.atlasSummary() + ", " + std::to_string(solution.size()) + " patches, k = " +
                   std::to_string(solution.bounces) + " bounces, H = " +
                   std::to_string(setup.matrixOptions.hemicubeResolution) + ", direct light by " +
                   lightmap::matrixDirectName(solution.direct);
  run.finish(solved.lightmap, solved.seconds, std::move(settings));
  // What a relight needs is the matrix (the lightmap is its output).
  result.bytes = solution.denseBytes();
  result.bytesWhat = "k-bounce matrix (3 x n² float32)";
  return result;
}

constexpr std::array kRunners{
    MethodRunner{"ibrr",
                 "image-based radiosity representation: VPL hemicubes warped into a layered depth cube, the clamp's "
                 "bias compensated per layer",
                 [](const MethodContext& context) { return runIbrrBake(context, true); }},
    MethodRunner{"ibrr-clamped", "the same IBRR bake without the bias compensation (the clamped store)",
                 [](const MethodContext& context) { return runIbrrBake(context, false); }},
    MethodRunner{"keller",
                 "instant radiosity: every VPL shaded per frame with a shadow hemicube, the clamp's bias "
                 "compensated per pixel",
                 [](const MethodContext& context) { return runKellerFrame(context, true); }},
    MethodRunner{"keller-clamped", "the same Keller frame without the bias compensation",
                 [](const MethodContext& context) { return runKellerFrame(context, false); }},
    MethodRunner{"gather", "texel lightmap, GPU hemicube gathering with a multiplier map (Jacobi)", runGather},
    MethodRunner{"progressive", "texel lightmap, GPU progressive refinement radiosity (hemispherical projection)",
                 [](const MethodContext& context) { return runProgressive(context, false); }},
    MethodRunner{"progressive-adaptive",
                 "the same with adaptive subdivision: quadtree leaves split where the radiosity's second difference "
                 "is large",
                 [](const MethodContext& context) { return runProgressive(context, true); }},
    MethodRunner{"stochastic", "texel lightmap, GPU stochastic iteration radiosity (perspective ray-bundle shooting)",
                 runStochastic},
    MethodRunner{"matrix", "texel lightmap, k-bounce form-factor matrix (one GPU matrix-vector product per relight)",
                 runMatrix},
};

const MethodRunner& findRunner(const std::string& name) {
  for (const MethodRunner& runner : kRunners)
    if (runner.name == name) return runner;
  throw Error("--methods: unknown method '" + name + "'; implemented: " + methodRunnerNames());
}

Reference makeReference(const scene::Scene& scene, const rays::EmbreeScene& embree, const scene::Camera& camera,
                        std::size_t index, const CompareOptions& options) {
  Reference reference;
  reference.camera = camera.name;
  if (!options.references.empty()) {
    const std::filesystem::path& file = options.references[index];
    reference.image = display::readImage(file);
    if (reference.image.width != options.width || reference.image.height != options.height)
      throw Error("--reference " + file.string() + " is " + std::to_string(reference.image.width) + "x" +
                  std::to_string(reference.image.height) + " but the report is " + std::to_string(options.width) +
                  "x" + std::to_string(options.height) + " (--size); render it at that size with 'ibrr reference'");
    reference.source = file.string();
  } else {
    rays::ReferenceOptions ref;
    ref.camera = camera.name;
    ref.width = options.width;
    ref.height = options.height;
    ref.seed = options.seed;
    ref.spp = options.referenceSpp > 0                ? options.referenceSpp
              : options.quality == Quality::Final     ? 4096u
              : options.quality == Quality::Preview   ? 256u
                                                      : 16u;
    const rays::ReferenceImage image = rays::renderReference(embree, ref);
    reference.image = image.radiance;
    reference.spp = image.spp;
    reference.seconds = image.seconds;
    reference.source = "rendered";
  }
  (void)scene;
  reference.mask = rays::maskOutEmitters(embree, camera, options.width, options.height);
  return reference;
}

}  // namespace

ImageError MethodContext::measure(std::size_t camera, const display::Image& image) const {
  const Reference& reference = references[camera];
  const metrics::ErrorMetrics m = metrics::compareImages(image, reference.image, reference.mask);
  return {m.relativeRmse, m.relMse, m.energyRatio};
}

double MethodContext::meanError(const std::function<display::Image(std::size_t)>& render) const {
  double sum = 0.0;
  for (std::size_t c = 0; c < cameras.size(); ++c) sum += measure(c, render(c)).relativeRmse;
  return sum / double(cameras.size());
}

std::span<const MethodRunner> methodRunners() { return kRunners; }

std::string methodRunnerNames() {
  std::string names;
  for (const MethodRunner& runner : kRunners) names += (names.empty() ? "" : ", ") + std::string(runner.name);
  return names;
}

Quality parseQuality(const std::string& text) {
  if (text == "smoke") return Quality::Smoke;
  if (text == "preview") return Quality::Preview;
  if (text == "final") return Quality::Final;
  throw Error("--quality '" + text + "': choose preview or final (or smoke, for tests)");
}

std::string qualityName(Quality quality) {
  switch (quality) {
    case Quality::Smoke: return "smoke";
    case Quality::Preview: return "preview";
    case Quality::Final: return "final";
  }
  return "?";
}

void validateCompareOptions(const CompareOptions& options) {
  for (const std::string& name : options.methods) (void)findRunner(name);
  if (!(options.budgetSeconds >= 0.0) || !std::isfinite(options.budgetSeconds))
    throw Error("--budget must be a non-negative number of seconds");
  if (options.width < 8 || options.height < 8 || options.width > 4096 || options.height > 4096)
    throw Error("--size must be between 8x8 and 4096x4096");
  if (options.output.empty()) throw Error("-o REPORT_FOLDER is required");
}

CompareResults runComparison(const CompareOptions& options) {
  validateCompareOptions(options);
  CompareResults results;
  results.options = options;
  const scene::Scene scene = scene::loadScene(scene::resolveScenePath(options.scene));
  results.sceneName = scene.sourcePath.stem().string();
  results.sceneFingerprint = scene.fingerprint();
  results.triangles = scene.triangleCount();
  results.cpu = std::to_string(std::thread::hardware_concurrency()) + " hardware threads";

  std::vector<scene::Camera> cameras;
  if (options.cameras.empty())
    cameras = scene.cameras;
  else
    for (const std::string& name : options.cameras) cameras.push_back(scene.camera(name));
  if (!options.references.empty() && options.references.size() != cameras.size())
    throw Error("--reference: give one image per camera (" + std::to_string(cameras.size()) + " cameras, " +
                std::to_string(options.references.size()) + " references)");

  const rays::EmbreeScene embree(scene);
  for (std::size_t c = 0; c < cameras.size(); ++c) {
    info("reference for camera " + cameras[c].name);
    results.references.push_back(makeReference(scene, embree, cameras[c], c, options));
  }

  const auto context = gpu::createHeadlessContext();
  results.gpu = context->info().summary();
  const MethodContext methodContext{scene, cameras, results.references, options};
  std::vector<std::string> names = options.methods;
  if (names.empty())
    for (const MethodRunner& runner : kRunners) names.emplace_back(runner.name);
  for (const std::string& name : names) {
    info("method " + name);
    MethodResult result = findRunner(name).run(methodContext);
    result.method = name;
    for (const CameraResult& camera : result.cameras)
      info("  " + camera.camera + ": relRMSE " + std::to_string(camera.error.relativeRmse));
    results.methods.push_back(std::move(result));
  }
  return results;
}

}  // namespace ibrr::compare
