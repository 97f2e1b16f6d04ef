// The hemicube gathering solver against known answers: the multiplier map against the analytic
// form factor of a hemicube face, a furnace box by hand (Jacobi iterates L_k = L_e Σ_{i≤k} a^i),
// the GPU iterates against a CPU Jacobi solve of the same texel system (form factors read back from
// the same hemicubes) with Gauss–Seidel beside it; the furnace and command line: test_solvers.cpp.
#include "lightmap/atlas.hpp"
#include "lightmap/form_factors.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/gather_hemicubes.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>

namespace ibrr::lightmap {
namespace {

void makeGlCurrent() { test::glContext(); }

std::filesystem::path builtinScene(const char* name) { return test::sceneDir() / name; }

// Form factor from a differential area to a parallel rectangle [0, X] × [0, Y] at unit distance
// with a corner above it (Howell's catalogue, C-11).
double cornerRectangleFormFactor(double x, double y) {
  const double sx = std::sqrt(1.0 + x * x);
  const double sy = std::sqrt(1.0 + y * y);
  return (x / sx * std::atan(y / sx) + y / sy * std::atan(x / sy)) / (2.0 * std::numbers::pi);
}

// The unit box [0, 1]³ seen from inside, built by hand: each face one n × n chart of two
// triangles, front faces inward, texel centres strictly inside the faces.
struct BoxAtlas {
  LightmapAtlas atlas;
  PatchList patches;
  std::vector<int> faceOfTexel;  // -1 on padding
};

BoxAtlas makeBoxAtlas(int n, const std::vector<glm::vec3>& faceAlbedo, const std::vector<glm::vec3>& faceEmission) {
  struct Face {
    glm::vec3 origin, u, v;  // cross(u, v) = the inward normal
  };
  const Face faces[6] = {{{0, 0, 0}, {0, 0, 1}, {1, 0, 0}}, {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}},
                         {{0, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {{1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
                         {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
  const int cell = n + 2;  // one texel of padding around each chart
  BoxAtlas box;
  LightmapAtlas& atlas = box.atlas;
  atlas.width = 3 * cell;
  atlas.height = 2 * cell;
  atlas.texelsPerUnit = float(n);
  atlas.chartCount = 6;
  PatchList& p = box.patches;
  p.width = atlas.width;
  p.height = atlas.height;
  const std::size_t count = p.texelCount();
  p.position.assign(count, glm::vec3(0.0f));
  p.normal.assign(count, glm::vec3(0.0f, 0.0f, 1.0f));
  p.albedo.assign(count, glm::vec3(0.0f));
  p.emission.assign(count, glm::vec3(0.0f));
  p.area.assign(count, 0.0f);
  p.valid.assign(count, 0);
  box.faceOfTexel.assign(count, -1);
  for (int f = 0; f < 6; ++f) {
    const Face& face = faces[f];
    const glm::vec3 normal = glm::cross(face.u, face.v);
    const glm::vec2 chart(float((f % 3) * cell + 1), float((f / 3) * cell + 1));
    const glm::vec3 corner[4] = {face.origin, face.origin + face.u, face.origin + face.u + face.v,
                                 face.origin + face.v};
    const glm::vec2 uv[4] = {chart, chart + glm::vec2(n, 0), chart + glm::vec2(n, n), chart + glm::vec2(0, n)};
    for (const int c : {0, 1, 2, 0, 2, 3}) atlas.vertices.push_back({corner[c], normal, uv[c], 0});
    atlas.triangleChart.insert(atlas.triangleChart.end(), {std::uint32_t(f), std::uint32_t(f)});
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        const std::size_t t = std::size_t(int(chart.y) + j) * std::size_t(p.width) + std::size_t(int(chart.x) + i);
        p.position[t] = face.origin + (float(i) + 0.5f) / float(n) * face.u + (float(j) + 0.5f) / float(n) * face.v;
        p.normal[t] = normal;
        p.albedo[t] = faceAlbedo[std::size_t(f)];
        p.emission[t] = faceEmission[std::size_t(f)];
        p.area[t] = 1.0f / float(n * n);
        p.valid[t] = 1;
        box.faceOfTexel[t] = f;
      }
    }
  }
  return box;
}

}  // namespace

TEST_CASE("gather: the multiplier map sums to one and matches the analytic hemicube face form factors",
          "[lightmap][gather]") {
  const double quadrant = cornerRectangleFormFactor(1.0, 1.0);  // one quarter of the front face
  for (const int resolution : {8, 32, 64}) {
    const std::vector<float> w = gatherMultiplierMap(resolution);
    REQUIRE(w.size() == std::size_t(resolution) * gatherLayerRows(resolution));
    double total = 0.0, front = 0.0, frontQuadrant = 0.0;
    for (int row = 0; row < gatherLayerRows(resolution); ++row) {
      for (int x = 0; x < resolution; ++x) {
        const double value = w[std::size_t(row) * resolution + x];
        CHECK(value > 0.0);
        total += value;
        if (row < resolution) front += value;
        if (row < resolution / 2 && x < resolution / 2) frontQuadrant += value;
      }
    }
    CHECK(total == Approx(1.0).epsilon(1e-6));
    // The front face carries 4 · 0.13853 = 0.5541 of the cosine-weighted hemisphere; the midpoint
    // rule errs by O(1/H²).
    const double tolerance = resolution >= 32 ? 2e-3 : 2e-2;
    CHECK(front == Approx(4.0 * quadrant).epsilon(tolerance));
    CHECK(frontQuadrant == Approx(quadrant).epsilon(tolerance));
  }
}

TEST_CASE("gather: the hemicube rotation is fixed per texel and lies between -pi and pi", "[lightmap][gather]") {
  CHECK(gatherHemicubeRotation(1, 17) == gatherHemicubeRotation(1, 17));
  CHECK(gatherHemicubeRotation(1, 17) != gatherHemicubeRotation(2, 17));
  double mean = 0.0;
  for (std::uint32_t t = 0; t < 4096; ++t) {
    const float angle = gatherHemicubeRotation(7, t);
    REQUIRE(angle >= -std::numbers::pi_v<float>);
    REQUIRE(angle < std::numbers::pi_v<float>);
    mean += angle / 4096.0;
  }
  CHECK(std::abs(mean) < 0.1);
}

TEST_CASE("gather: furnace box built by hand, every Jacobi iterate is L_e (1 + a + ... + a^k)", "[lightmap][gather]") {
  makeGlCurrent();
  const scene::Scene scene = scene::loadScene(builtinScene("furnace.json"));
  const BoxAtlas box =
      makeBoxAtlas(6, std::vector<glm::vec3>(6, glm::vec3(0.5f)), std::vector<glm::vec3>(6, glm::vec3(1.0f)));
  GatherOptions options;
  options.hemicubeResolution = 16;
  options.indirectHemicubeResolution = 0;
  options.maxIterations = 8;
  options.layersPerBatch = 50;  // not a divisor of the 216 texels: a partial last batch
  std::vector<double> worst;
  const GatherResult result = solveGather(
      scene, box.atlas, box.patches, options, [&](const GatherIterationStats& stats, std::span<const glm::vec3> L) {
        const double expected = 2.0 * (1.0 - std::pow(0.5, stats.iteration + 1));
        double deviation = 0.0;
        for (std::size_t t = 0; t < L.size(); ++t)
          if (box.patches.valid[t])
            for (int c = 0; c < 3; ++c) deviation = std::max(deviation, std::abs(double(L[t][c]) / expected - 1.0));
        worst.push_back(deviation);
      });
  REQUIRE(result.iterations.size() == 8);
  for (std::size_t k = 0; k < worst.size(); ++k) {
    INFO("iteration " << k + 1);
    CHECK(worst[k] < 1e-5);
  }
  for (std::size_t t = 0; t < box.patches.texelCount(); ++t)
    if (box.patches.valid[t]) REQUIRE(result.lightmap.radiance[t].x == Approx(2.0).epsilon(0.02));
}

// Runs the GPU solver with h = H for `iterations` and, beside it, CPU Jacobi and Gauss–Seidel on
// the form factors read back from the same hemicubes. Checks per iteration that GPU Jacobi equals
// CPU Jacobi within `tolerance` (relative, per texel and channel), and that Gauss–Seidel is never
// further from the converged solution than Jacobi (from L_0 = L_e both rise monotonically towards
// it, Gauss–Seidel faster: Stein–Rosenberg). Prints the convergence of both.
void checkAgainstCpuSolve(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                          int resolution, int iterations, int layers, double tolerance) {
  const std::uint32_t seed = 3;
  const TexelFormFactors factors = computeTexelFormFactors(scene, atlas, patches, resolution, seed, true, layers);
  const TexelSystem system(factors, patches);
  // The converged solution of the same system, by Gauss–Seidel to a fixed point.
  std::vector<glm::dvec3> converged = system.emission, previous;
  for (int sweep = 0; sweep < 500; ++sweep) {
    previous = converged;
    gaussSeidelSweep(system, converged);
    double change = 0.0;
    for (std::size_t i = 0; i < converged.size(); ++i)
      change = std::max(change, glm::length(converged[i] - previous[i]) / std::max(glm::length(converged[i]), 1e-9));
    if (change < 1e-12) break;
  }
  // Relative L2 error of the reflected radiance L − L_e (emitters would dominate L itself).
  auto relativeError = [&](const auto& values, auto valueOf) {
    double squared = 0.0, reference = 0.0;
    for (std::size_t i = 0; i < converged.size(); ++i) {
      const glm::dvec3 d = glm::dvec3(valueOf(values, i)) - converged[i];
      const glm::dvec3 reflected = converged[i] - system.emission[i];
      squared += glm::dot(d, d);
      reference += glm::dot(reflected, reflected);
    }
    return std::sqrt(squared / reference);
  };
  std::vector<glm::dvec3> jacobi = system.emission, gaussSeidel = system.emission, next;
  GatherOptions options;
  options.hemicubeResolution = resolution;
  options.indirectHemicubeResolution = 0;
  options.seed = seed;
  options.maxIterations = iterations;
  options.layersPerBatch = layers;
  double worstJacobi = 0.0;
  bool gaussSeidelAhead = true;
  std::printf(
      "%zu texels, H = %d: iteration, GPU vs CPU Jacobi (max rel.), error of L - L_e vs the converged "
      "solution (rel. L2): GPU Jacobi, CPU Gauss-Seidel\n",
      factors.size(), resolution);
  const GatherResult result =
      solveGather(scene, atlas, patches, options, [&](const GatherIterationStats& stats, std::span<const glm::vec3> L) {
        jacobiStep(system, jacobi, next);
        std::swap(jacobi, next);
        gaussSeidelSweep(system, gaussSeidel);
        double deviation = 0.0;
        for (std::size_t i = 0; i < factors.size(); ++i) {
          const glm::vec3& gpu = L[factors.texels[i]];
          for (int c = 0; c < 3; ++c) {
            const double scale = std::max(jacobi[i][c], 1e-3 * std::max(converged[i][c], 1e-6));
            deviation = std::max(deviation, std::abs(double(gpu[c]) - jacobi[i][c]) / scale);
          }
          for (int c = 0; c < 3; ++c)
            if (gaussSeidel[i][c] < jacobi[i][c] * (1.0 - 1e-9)) gaussSeidelAhead = false;
        }
        const double gpuError = relativeError(L, [&](auto& v, std::size_t i) { return v[factors.texels[i]]; });
        const double gaussSeidelError = relativeError(gaussSeidel, [](auto& v, std::size_t i) { return v[i]; });
        std::printf("  %2d  %.2e  %.5f  %.5f\n", stats.iteration, deviation, gpuError, gaussSeidelError);
        worstJacobi = std::max(worstJacobi, deviation);
      });
  REQUIRE(result.iterations.size() == std::size_t(iterations));
  // Jacobi on the GPU and on the CPU is the same arithmetic up to float summation order.
  CHECK(worstJacobi < tolerance);
  CHECK(gaussSeidelAhead);
}

TEST_CASE("gather: GPU Jacobi iterates track a CPU solve of the same texel system (box)", "[lightmap][gather]") {
  makeGlCurrent();
  const scene::Scene scene = scene::loadScene(builtinScene("furnace.json"));
  // A box lit by its ceiling only, walls of different colours: light arrives unevenly.
  const std::vector<glm::vec3> albedo = {{0.7f, 0.7f, 0.7f}, {0.5f, 0.5f, 0.5f}, {0.6f, 0.1f, 0.1f},
                                         {0.1f, 0.6f, 0.1f}, {0.7f, 0.7f, 0.7f}, {0.3f, 0.3f, 0.8f}};
  std::vector<glm::vec3> emission(6, glm::vec3(0.0f));
  emission[1] = glm::vec3(5.0f, 4.0f, 3.0f);
  const BoxAtlas box = makeBoxAtlas(8, albedo, emission);
  // A closed box: every hemicube sees something in every pixel, Σ_j F_ij = 1.
  const TexelFormFactors factors = computeTexelFormFactors(scene, box.atlas, box.patches, 16, 1, true, 64);
  REQUIRE(factors.size() == 6 * 64);
  for (std::size_t i = 0; i < factors.size(); ++i) {
    double row = 0.0;
    for (std::size_t k = factors.rowStart[i]; k < factors.rowStart[i + 1]; ++k) row += factors.factor[k];
    REQUIRE(row == Approx(1.0).epsilon(1e-5));
  }
  checkAgainstCpuSolve(scene, box.atlas, box.patches, 16, 6, 37, 1e-4);
}

TEST_CASE("gather: culling chunks per hemicube face changes no pixel", "[lightmap][gather]") {
  // The Cornell box in chunks of 2 triangles (its boxes, walls and light apart, culled per face)
  // against one chunk of all 32 (whose box is the room: never culled): every texel-id pixel of
  // every hemicube must agree.
  makeGlCurrent();
  const scene::Scene scene = scene::loadScene(builtinScene("cornell.json"));
  AtlasOptions atlasOptions;
  atlasOptions.targetSize = 24;
  const LightmapAtlas atlas = buildAtlas(scene, atlasOptions);
  const PatchList patches = rasterizePatches(scene, atlas);
  const std::vector<std::uint32_t> texels = validTexels(patches);
  const GatherHemicubeSetup setup = defaultHemicubeSetup(scene, atlas, 1, true);
  constexpr int kResolution = 16, kLayers = 32;
  const std::vector<std::int32_t> seenMap = seenTexelMap(patches);
  const gpu::Texture seen(GL_R32I, patches.width, patches.height);
  glTextureSubImage2D(seen.id(), 0, 0, 0, patches.width, patches.height, GL_RED_INTEGER, GL_INT, seenMap.data());
  GatherHemicubeRenderer culled(atlas, patches, texels, setup, kResolution, kLayers, GatherTarget::TexelId, 2);
  GatherHemicubeRenderer whole(atlas, patches, texels, setup, kResolution, kLayers, GatherTarget::TexelId, 1 << 20);
  std::size_t differing = 0, seenPixels = 0;
  for (std::size_t first = 0; first < texels.size(); first += kLayers) {
    const int count = int(std::min<std::size_t>(kLayers, texels.size() - first));
    culled.render(first, count, kResolution, seen.id());
    const std::vector<std::uint32_t> a = culled.readIds(count, kResolution);
    whole.render(first, count, kResolution, seen.id());
    const std::vector<std::uint32_t> b = whole.readIds(count, kResolution);
    for (std::size_t k = 0; k < a.size(); ++k) {
      differing += a[k] != b[k] ? 1 : 0;
      seenPixels += b[k] != 0 ? 1 : 0;
    }
  }
  std::printf("culling: %zu hemicubes, %zu of %zu seen pixels differ\n", texels.size(), differing, seenPixels);
  CHECK(seenPixels > 0);
  CHECK(differing == 0);
}

TEST_CASE("gather: GPU Jacobi iterates track a CPU solve of the same texel system (Cornell box, 32² atlas)",
          "[lightmap][gather]") {
  makeGlCurrent();
  const scene::Scene scene = scene::loadScene(builtinScene("cornell.json"));
  AtlasOptions atlasOptions;
  atlasOptions.targetSize = 32;
  const LightmapAtlas atlas = buildAtlas(scene, atlasOptions);
  const PatchList patches = rasterizePatches(scene, atlas);
  checkAgainstCpuSolve(scene, atlas, patches, 32, 8, 64, 1e-4);
}

}  // namespace ibrr::lightmap
