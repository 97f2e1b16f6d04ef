// Stochastic iteration radiosity against known answers: its expectation is the solution that
// progressive refinement reaches with the same kernel (one-texel shooters, same visibility pass),
// so the error against that solution falls as 1/√m; determinism for a seed; the furnace, the
// options' errors and the command line: test_solvers.cpp.
#include "gpu/resources.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/progressive.hpp"
#include "lightmap/stochastic.hpp"
#include "lightmap_test_support.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace ibrr::lightmap {
namespace {

using Atlas = test::AtlasAndPatches;
constexpr auto makeAtlas = test::makeAtlasAndPatches;

using test::relativeRms;  // relativeRms(patches, x, y): area-weighted over the valid texels

// The convergence of stochastic iteration shooting from `shootFrom` against the solution of the same kernel: the
// least-squares slope of log RMS error against log m, and the mean squared error at each m (over five seeds).
std::pair<double, std::vector<double>> convergenceAgainstProgressive(StochasticShootFrom shootFrom, const char* name) {
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
  std::printf("stochastic vs progressive (the same 4x4 clusters, %llu shots, residual %.5f), %zu texels:\n",
              static_cast<unsigned long long>(solution.shots), solution.checkpoints.back().residualFraction,
              std::size_t(std::count(a.patches.valid.begin(), a.patches.valid.end(), 1)));
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
  std::printf(
      "  shooting the %s: RMS over %d runs of the relative RMS error at m = 20, 40, 80, 160, 320: "
      "%.4f %.4f %.4f %.4f %.4f; slope %.3f\n",
      name, kRuns, std::sqrt(meanSquared[0]), std::sqrt(meanSquared[1]), std::sqrt(meanSquared[2]),
      std::sqrt(meanSquared[3]), std::sqrt(meanSquared[4]), sxy / sxx);
  return std::pair(sxy / sxx, meanSquared);
}

}  // namespace

// Stochastic iteration against progressive refinement with the same shooting clusters, one case for each
// source the shooters are drawn from (each case a few tens of seconds).
TEST_CASE("stochastic: shooting the last iterate, the error against the solution of the same kernel falls as 1/sqrt(m)",
          "[lightmap][stochastic]") {
  // 1/√m is a slope of −0.5; five runs estimate it within about ±0.05 (sets measured −0.47, −0.53 and −0.58), so
  // the test asks −0.45. The paper's running-average source measures about −0.35 to −0.40 here and would fail it.
  const auto [slope, meanSquared] =
      convergenceAgainstProgressive(StochasticShootFrom::LastIterate, "last iterate (default)");
  CHECK(slope <= -0.45);
  CHECK(std::sqrt(meanSquared.back() / meanSquared.front()) < 0.3);  // 1/√16 = 0.25
}

TEST_CASE("stochastic: shooting the running average (the paper's source) converges too, more slowly",
          "[lightmap][stochastic]") {
  const auto [slope, meanSquared] =
      convergenceAgainstProgressive(StochasticShootFrom::RunningAverage, "running average (paper)");
  CHECK(meanSquared.back() < meanSquared.front());
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

}  // namespace ibrr::lightmap
