// Stochastic iteration radiosity against known answers: its expectation is the solution that
// progressive refinement reaches with the same kernel (one-texel shooters, same visibility pass),
// so the error against that solution falls as 1/√m; the furnace E / (1 − a); determinism for a
// seed; the options' errors; the command line.
#include "gpu/resources.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/progressive.hpp"
#include "lightmap/stochastic.hpp"
#include "scene/load.hpp"
#include "lightmap_test_support.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <numeric>
#include <vector>

namespace ibrr::lightmap {
namespace {

using Atlas = test::AtlasAndPatches;
constexpr auto makeAtlas = test::makeAtlasAndPatches;

// Area-weighted relative RMS difference over valid texels and channels:
//   √(Σ A |x − y|² / Σ A |y|²)
double relativeRms(const PatchList& patches, std::span<const glm::vec3> x, std::span<const glm::vec3> y) {
  double squared = 0.0, reference = 0.0;
  for (std::size_t t = 0; t < patches.texelCount(); ++t) {
    if (!patches.valid[t]) continue;
    const glm::dvec3 d = glm::dvec3(x[t]) - glm::dvec3(y[t]);
    squared += double(patches.area[t]) * glm::dot(d, d);
    reference += double(patches.area[t]) * glm::dot(glm::dvec3(y[t]), glm::dvec3(y[t]));
  }
  return std::sqrt(squared / reference);
}

}  // namespace

TEST_CASE("stochastic: the error against the solution of the same kernel falls as 1/sqrt(m)",
          "[lightmap][stochastic]") {
  // Progressive refinement with the same shooting clusters solves L = L_e + T L with the very
  // kernel and visibility pass whose random version stochastic iteration applies: E[T* L] = T L.
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Atlas a = makeAtlas(scene, 32);
  ProgressiveOptions exact;
  exact.clusterTexels = 4;
  exact.emitterClusterTexels = 1;
  exact.hemisphereResolution = 64;
  exact.residualFraction = 1e-4;
  const ProgressiveResult solution = solveProgressive(scene, a.atlas, a.patches, exact);
  REQUIRE(solution.stopReason == "residual");

  // The mean squared error over independent runs (seeds 1..R) at m = 20, 40, …, 320: one run's
  // error swings with its few brightest shots; the mean over runs estimates E|L̃_m − L|².
  constexpr int kRuns = 5;
  const std::vector<std::uint64_t> ms = {20, 40, 80, 160, 320};
  const auto convergence = [&](StochasticShootFrom shootFrom, const char* name) {
    std::vector<double> meanSquared(ms.size(), 0.0);
    for (int run = 1; run <= kRuns; ++run) {
      StochasticOptions options;
      options.hemisphereResolution = exact.hemisphereResolution;
      options.shootersPerIteration = 4;
      options.clusterTexels = exact.clusterTexels;
      options.emitterClusterTexels = exact.emitterClusterTexels;
      options.iterations = ms.back();
      options.checkpointIterations = ms.front();
      options.shootFrom = shootFrom;
      options.seed = std::uint32_t(run);
      const StochasticResult result =
          solveStochastic(scene, a.atlas, a.patches, options,
                          [&](const StochasticCheckpoint& checkpoint, std::span<const glm::vec3> l) {
                            const auto at = std::find(ms.begin(), ms.end(), checkpoint.iterations);
                            if (at == ms.end()) return;
                            const double e = relativeRms(a.patches, l, solution.lightmap.radiance);
                            meanSquared[std::size_t(at - ms.begin())] += e * e / kRuns;
                          });
      REQUIRE(result.iterations == ms.back());
    }
    // The least-squares slope of log RMS error against log m, over m = 20 … 320 (1.2 decades).
    std::vector<double> logM, logE;
    for (std::size_t k = 0; k < ms.size(); ++k) {
      logM.push_back(std::log(double(ms[k])));
      logE.push_back(0.5 * std::log(meanSquared[k]));
    }
    const double n = double(logM.size());
    const double meanM = std::accumulate(logM.begin(), logM.end(), 0.0) / n;
    const double meanE = std::accumulate(logE.begin(), logE.end(), 0.0) / n;
    double sxy = 0.0, sxx = 0.0;
    for (std::size_t i = 0; i < logM.size(); ++i) {
      sxy += (logM[i] - meanM) * (logE[i] - meanE);
      sxx += (logM[i] - meanM) * (logM[i] - meanM);
    }
    std::printf("  shooting the %s: RMS over %d runs of the relative RMS error at m = 20, 40, 80, 160, 320: "
                "%.4f %.4f %.4f %.4f %.4f; slope %.3f\n",
                name, kRuns, std::sqrt(meanSquared[0]), std::sqrt(meanSquared[1]), std::sqrt(meanSquared[2]),
                std::sqrt(meanSquared[3]), std::sqrt(meanSquared[4]), sxy / sxx);
    return std::pair(sxy / sxx, meanSquared);
  };
  std::printf("stochastic vs progressive (the same 4x4 clusters, %llu shots, residual %.5f), %zu texels:\n",
              static_cast<unsigned long long>(solution.shots), solution.checkpoints.back().residualFraction,
              std::size_t(std::count(a.patches.valid.begin(), a.patches.valid.end(), 1)));
  // 1/√m is a slope of −0.5; five runs estimate it within about ±0.05 (two sets measured −0.53 and −0.58), so the test
  // asks −0.45. The paper's running-average source measures about −0.35 here and would fail it.
  const auto [slope, meanSquared] = convergence(StochasticShootFrom::LastIterate, "last iterate (default)");
  CHECK(slope <= -0.45);
  CHECK(std::sqrt(meanSquared.back() / meanSquared.front()) < 0.3);  // 1/√16 = 0.25
  const auto [paperSlope, paperMeanSquared] = convergence(StochasticShootFrom::RunningAverage, "running average (paper)");
  CHECK(paperMeanSquared.back() < paperMeanSquared.front());  // it converges, more slowly
}

TEST_CASE("stochastic: the furnace through the project's atlas reaches E / (1 - a) within 2%",
          "[lightmap][stochastic]") {
  // Every surface emits E = 1 and reflects a = 0.5 in a closed box: L = E / (1 − a) = 2 everywhere.
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "furnace.json");
  const Atlas a = makeAtlas(scene, 32);
  StochasticOptions options;
  options.hemisphereResolution = 128;
  options.shootersPerIteration = 16;
  options.clusterTexels = 4;
  options.emitterClusterTexels = 4;
  options.iterations = 200;
  const StochasticResult result = solveStochastic(scene, a.atlas, a.patches, options);
  double worst = 0.0, squared = 0.0, mean = 0.0, area = 0.0;
  for (std::size_t t = 0; t < a.patches.texelCount(); ++t) {
    if (!a.patches.valid[t]) continue;
    const double w = a.patches.area[t];
    area += w;
    for (int c = 0; c < 3; ++c) {
      const double deviation = double(result.lightmap.radiance[t][c]) / 2.0 - 1.0;
      worst = std::max(worst, std::abs(deviation));
      squared += w * deviation * deviation / 3.0;
      mean += w * double(result.lightmap.radiance[t][c]) / 3.0;
    }
  }
  mean /= area;
  std::printf("furnace: %llu iterations x %d shooters, mean %.4f, RMS deviation from 2: %.3f%%, worst texel %.3f%%\n",
              static_cast<unsigned long long>(result.iterations), options.shootersPerIteration, mean,
              100.0 * std::sqrt(squared / area), 100.0 * worst);
  CHECK(std::abs(mean / 2.0 - 1.0) < 0.02);
  CHECK(std::sqrt(squared / area) < 0.02);
  CHECK(worst < 0.06);
}

TEST_CASE("stochastic: a run is deterministic for a seed, and another seed draws other shooters",
          "[lightmap][stochastic]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Atlas a = makeAtlas(scene, 32);
  StochasticOptions options;
  options.hemisphereResolution = 64;
  options.iterations = 12;
  const StochasticResult first = solveStochastic(scene, a.atlas, a.patches, options);
  const StochasticResult again = solveStochastic(scene, a.atlas, a.patches, options);
  options.seed = 2;
  const StochasticResult other = solveStochastic(scene, a.atlas, a.patches, options);
  CHECK(first.lightmap.radiance == again.lightmap.radiance);
  CHECK(first.emitterShots == again.emitterShots);
  CHECK(relativeRms(a.patches, first.lightmap.radiance, other.lightmap.radiance) > 1e-3);
}

TEST_CASE("stochastic: bad options are refused, naming the flag", "[lightmap][stochastic]") {
  const auto refuses = [](auto change, const char* flag) {
    StochasticOptions options;
    change(options);
    CHECK_THROWS_WITH(validateStochasticOptions(options), Catch::Contains(flag));
  };
  refuses([](StochasticOptions& o) { o.shootersPerIteration = 0; }, "--shooters");
  refuses([](StochasticOptions& o) { o.shootersPerIteration = 65; }, "--shooters");
  refuses([](StochasticOptions& o) { o.clusterTexels = 0; }, "--cluster");
  refuses([](StochasticOptions& o) { o.emitterClusterTexels = 17; }, "--emitter-cluster");
  refuses([](StochasticOptions& o) { o.hemisphereResolution = 8; }, "--hemisphere");
  refuses([](StochasticOptions& o) { o.maxEdgeFraction = 2.0; }, "--max-edge");
  refuses([](StochasticOptions& o) { o.timeBudgetSeconds = -1.0; }, "--time-budget");
  refuses([](StochasticOptions& o) { o.iterations = 0; }, "never stop");
}

}  // namespace ibrr::lightmap

namespace ibrr::lightmap {

// The README's figures: `ibrr_lightmap_tests "[.stochastic_figures]"` with IBRR_STOCHASTIC_ATLAS
// (atlas side, default 256), IBRR_STOCHASTIC_SCENE (default cornell.json), IBRR_STOCHASTIC_OUT (a
// .lightmap to write, for `ibrr render --lightmap`), IBRR_STOCHASTIC_SHOOTERS, _CLUSTER, _EMITTER_CLUSTER, _MAX_EDGE, _HEMISPHERE,
// _ITERATIONS and _SEED.
TEST_CASE("stochastic: figures (time per iteration)", "[.figures][.stochastic_figures]") {
  const char* sceneEnv = std::getenv("IBRR_STOCHASTIC_SCENE");
  const scene::Scene scene = scene::loadScene(test::sceneDir() / (sceneEnv ? sceneEnv : "cornell.json"));
  StochasticOptions options;
  if (const char* e = std::getenv("IBRR_STOCHASTIC_SHOOTERS")) options.shootersPerIteration = std::atoi(e);
  if (const char* e = std::getenv("IBRR_STOCHASTIC_CLUSTER")) options.clusterTexels = std::atoi(e);
  if (const char* e = std::getenv("IBRR_STOCHASTIC_MAX_EDGE")) options.maxEdgeFraction = std::atof(e);
  if (const char* e = std::getenv("IBRR_STOCHASTIC_EMITTER_CLUSTER")) options.emitterClusterTexels = std::atoi(e);
  if (const char* e = std::getenv("IBRR_STOCHASTIC_HEMISPHERE")) options.hemisphereResolution = std::atoi(e);
  if (const char* e = std::getenv("IBRR_STOCHASTIC_ITERATIONS")) options.iterations = std::strtoull(e, nullptr, 10);
  if (const char* e = std::getenv("IBRR_STOCHASTIC_SEED")) options.seed = std::uint32_t(std::atoi(e));
  const char* atlasEnv = std::getenv("IBRR_STOCHASTIC_ATLAS");
  const Atlas a = makeAtlas(scene, atlasEnv ? std::atoi(atlasEnv) : 256);
  StochasticResult result = solveStochastic(scene, a.atlas, a.patches, options);
  std::printf(
      "atlas %dx%d (%zu texels), %zu -> %zu visibility triangles, pyramid %d levels; %llu iterations x %d "
      "shooters in %.2f s: %.2f ms per iteration, %.2f ms per shot, selection %.3f ms per iteration; "
      "%.1f%% of shots on emitters\n",
      a.atlas.width, a.atlas.height, std::size_t(std::count(a.patches.valid.begin(), a.patches.valid.end(), 1)),
      result.sceneTriangles, result.visibilityTriangles, result.pyramidLevels,
      static_cast<unsigned long long>(result.iterations), options.shootersPerIteration, result.iterateSeconds,
      1e3 * result.iterateSeconds / double(result.iterations), 1e3 * result.iterateSeconds / double(result.shots),
      1e3 * result.selectSeconds / double(result.iterations),
      100.0 * double(result.emitterShots) / double(result.shots));
  if (const char* outEnv = std::getenv("IBRR_STOCHASTIC_OUT")) {
    result.lightmap.atlasOptions.targetSize = atlasEnv ? std::atoi(atlasEnv) : 256;
    result.lightmap.atlasOptions.texelsPerUnit = 0.0f;
    saveLightmap(outEnv, result.lightmap);
  }
}

}  // namespace ibrr::lightmap

namespace ibrr::lightmap {

TEST_CASE("stochastic: ibrr bake --method stochastic writes a furnace lightmap of E / (1 - a)",
          "[lightmap][stochastic][cli]") {
  test::glContext();
  const std::filesystem::path folder = test::outputDir("stochastic_cli_furnace");
  const std::filesystem::path file = folder / "furnace.lightmap";
  const test::CommandResult result =
      test::runIbrr({"bake", "furnace", "--method", "stochastic", "--atlas", "32", "--cluster", "4", "--emitter-cluster",
                     "4", "--shooters", "16", "--hemisphere", "128", "--iterations", "200", "-o", file.string()});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  CHECK_THAT(result.out, Catch::Contains("wrote") && Catch::Contains("ms per iteration") &&
                             Catch::Contains("200 (stopped by iterations"));
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "furnace.json");
  LightmapAtlas atlas;
  const Lightmap lightmap = loadLightmap(file, scene, &atlas);
  CHECK(lightmap.method == "stochastic");
  const PatchList patches = rasterizePatches(scene, atlas);
  double sum = 0.0, area = 0.0;
  for (std::size_t t = 0; t < patches.texelCount(); ++t)
    if (patches.valid[t]) {
      sum += double(patches.area[t]) * double(lightmap.radiance[t].r + lightmap.radiance[t].g + lightmap.radiance[t].b) / 3.0;
      area += double(patches.area[t]);
    }
  std::printf("stochastic bake of the furnace: mean %.4f (2 expected)\n", sum / area);
  CHECK(sum / area == Approx(2.0).epsilon(0.02));
}

TEST_CASE("stochastic: bake flags of other methods are refused, naming the flag", "[lightmap][stochastic][cli]") {
  const std::filesystem::path folder = test::outputDir("stochastic_cli_flags");
  const std::string lightmap = (folder / "x.lightmap").string();
  const std::string store = (folder / "x.ibrr").string();
  test::checkRefusedByName(folder, {
      {{"bake", "furnace", "--method", "stochastic", "--paths", "64", "-o", lightmap}, "--paths"},
      {{"bake", "furnace", "--method", "stochastic", "--residual", "0.01", "-o", lightmap}, "--residual"},
      {{"bake", "furnace", "--method", "stochastic", "--tolerance", "0.01", "-o", lightmap}, "--tolerance"},
      {{"bake", "furnace", "--method", "stochastic", "--hemicube", "32", "-o", lightmap}, "--hemicube"},
      {{"bake", "furnace", "--method", "gather", "--shooters", "4", "-o", lightmap}, "--shooters"},
      {{"bake", "furnace", "--method", "progressive", "--shoot", "average", "-o", lightmap}, "--shoot"},
      {{"bake", "furnace", "--shooters", "4", "-o", store}, "--shooters"},
      {{"bake", "furnace", "--method", "stochastic", "--shooters", "0", "-o", lightmap}, "--shooters"},
      {{"bake", "furnace", "--method", "stochastic", "--shoot", "sideways", "-o", lightmap}, "--shoot"},
      {{"bake", "furnace", "--method", "stochastic", "--iterations", "-3", "-o", lightmap}, "--iterations"},
  });
}

TEST_CASE("stochastic: Ctrl-C stops a stochastic bake: exit 130, no lightmap and no temporary file left",
          "[lightmap][stochastic][cli]") {
  const std::filesystem::path folder = test::outputDir("stochastic_cli_interrupt");
  const std::filesystem::path file = folder / "cornell.lightmap";
  test::checkInterruptedCleanly(folder, "bake cornell --method stochastic --iterations 100000 -o " + file.string());
}

}  // namespace ibrr::lightmap
