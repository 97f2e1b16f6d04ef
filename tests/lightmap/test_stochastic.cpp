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
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <vector>

namespace ibrr::lightmap {
namespace {

struct Atlas {
  LightmapAtlas atlas;
  PatchList patches;
};

Atlas makeAtlas(const scene::Scene& scene, int atlasSize) {
  test::glContext();
  Atlas a;
  AtlasOptions atlasOptions;
  atlasOptions.targetSize = atlasSize;
  a.atlas = buildAtlas(scene, atlasOptions);
  a.patches = rasterizePatches(scene, a.atlas);
  return a;
}

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
  // Progressive refinement with one-texel shooters everywhere solves L = L_e + T L with the very
  // kernel and visibility pass whose random version stochastic iteration applies: E[T* L] = T L.
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Atlas a = makeAtlas(scene, 32);
  ProgressiveOptions exact;
  exact.clusterTexels = 1;
  exact.emitterClusterTexels = 1;
  exact.hemisphereResolution = 128;
  exact.residualFraction = 2e-4;
  const ProgressiveResult solution = solveProgressive(scene, a.atlas, a.patches, exact);
  REQUIRE(solution.stopReason == "residual");

  const auto convergence = [&](StochasticShootFrom shootFrom, const char* name) {
    StochasticOptions options;
    options.hemisphereResolution = exact.hemisphereResolution;
    options.shootersPerIteration = 4;
    options.iterations = 320;
    options.checkpointIterations = 10;
    options.shootFrom = shootFrom;
    std::map<std::uint64_t, double> errors;
    const StochasticResult result =
        solveStochastic(scene, a.atlas, a.patches, options,
                        [&](const StochasticCheckpoint& checkpoint, std::span<const glm::vec3> l) {
                          errors[checkpoint.iterations] = relativeRms(a.patches, l, solution.lightmap.radiance);
                        });
    REQUIRE(result.iterations == 320);
    // Over a decade and more (m = 20 to 320): the least-squares slope of log error against log m.
    std::vector<double> logM, logE;
    for (const auto& [m, e] : errors)
      if (m >= 20) {
        logM.push_back(std::log(double(m)));
        logE.push_back(std::log(e));
      }
    const double n = double(logM.size());
    const double meanM = std::accumulate(logM.begin(), logM.end(), 0.0) / n;
    const double meanE = std::accumulate(logE.begin(), logE.end(), 0.0) / n;
    double sxy = 0.0, sxx = 0.0;
    for (std::size_t i = 0; i < logM.size(); ++i) {
      sxy += (logM[i] - meanM) * (logE[i] - meanE);
      sxx += (logM[i] - meanM) * (logM[i] - meanM);
    }
    std::printf("  shooting the %s: relative RMS at m = 10, 20, 40, 80, 160, 320: %.4f %.4f %.4f %.4f %.4f %.4f; "
                "slope of log error over log m (m = 20..320) %.3f\n",
                name, errors.at(10), errors.at(20), errors.at(40), errors.at(80), errors.at(160), errors.at(320),
                sxy / sxx);
    return std::pair(sxy / sxx, errors);
  };
  std::printf("stochastic vs progressive (one-texel shooters, %llu shots, residual %.5f), %zu texels:\n",
              static_cast<unsigned long long>(solution.shots), solution.checkpoints.back().residualFraction,
              std::size_t(std::count(a.patches.valid.begin(), a.patches.valid.end(), 1)));
  const auto [slope, errors] = convergence(StochasticShootFrom::LastIterate, "last iterate (default)");
  CHECK(slope <= -0.5);
  CHECK(errors.at(320) < 0.25 * errors.at(20));  // 1/√16 = 0.25
  // The paper's running-average source, for the record (stochastic.hpp: its start's error decays
  // as m^−(1−λ)); only its convergence is checked.
  const auto [paperSlope, paperErrors] = convergence(StochasticShootFrom::RunningAverage, "running average (paper)");
  CHECK(paperErrors.at(320) < paperErrors.at(20));
}

}  // namespace ibrr::lightmap

namespace ibrr::lightmap {

// The README's figures: `ibrr_lightmap_tests "[.stochastic_figures]"` with IBRR_STOCHASTIC_ATLAS
// (atlas side, default 256), IBRR_STOCHASTIC_SCENE (default cornell.json), IBRR_STOCHASTIC_OUT (a
// .lightmap to write, for `ibrr render --lightmap`), IBRR_STOCHASTIC_SHOOTERS, _HEMISPHERE,
// _ITERATIONS and _SEED.
TEST_CASE("stochastic: figures (time per iteration)", "[.figures][.stochastic_figures]") {
  const char* sceneEnv = std::getenv("IBRR_STOCHASTIC_SCENE");
  const scene::Scene scene = scene::loadScene(test::sceneDir() / (sceneEnv ? sceneEnv : "cornell.json"));
  StochasticOptions options;
  if (const char* e = std::getenv("IBRR_STOCHASTIC_SHOOTERS")) options.shootersPerIteration = std::atoi(e);
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
