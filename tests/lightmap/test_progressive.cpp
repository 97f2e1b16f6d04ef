// Progressive refinement radiosity against known answers: the tessellation's counts and areas, one
// shot from a small light onto a plane against the disc form factor (exact for a coaxial disc)
// and the exact rectangle form factor, the energy of one shot in a closed box (all the power that
// leaves the shooter arrives somewhere) and checkpoints; the furnace and the flags: test_solvers.cpp.
#include "gpu/resources.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/progressive.hpp"
#include "lightmap/shooting.hpp"  // tessellateTriangles, internal to the shooting solvers
#include "lightmap_test_support.hpp"
#include "rays/test_scenes.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>

namespace ibrr::lightmap {
namespace {

constexpr double kPi = std::numbers::pi;

struct Solved : test::AtlasAndPatches {
  ProgressiveResult result = {};
};

Solved solve(const scene::Scene& scene, int atlasSize, const ProgressiveOptions& options) {
  Solved s{test::makeAtlasAndPatches(scene, atlasSize)};
  s.result = solveProgressive(scene, s.atlas, s.patches, options);
  return s;
}

}  // namespace

TEST_CASE("progressive: tessellation splits every triangle into k² of equal area", "[lightmap][progressive]") {
  const std::vector<glm::vec3> corners = {{0, 0, 0}, {3, 0, 0}, {0, 1, 0}};
  for (const float maxEdge : {0.0f, 4.0f, 1.0f, 0.5f}) {
    const TessellatedTriangles t = tessellateTriangles(corners, maxEdge);
    const int k = maxEdge <= 0.0f ? 1 : int(std::ceil(std::sqrt(10.0f) / maxEdge));  // longest edge √10
    REQUIRE(t.source.size() == std::size_t(k * k));
    double area = 0.0;
    for (std::size_t i = 0; i < t.source.size(); ++i) {
      const glm::vec3 a = t.corners[3 * i], b = t.corners[3 * i + 1], c = t.corners[3 * i + 2];
      const glm::vec3 n = glm::cross(b - a, c - a);
      CHECK(n.z > 0.0f);  // the winding (front side) is kept
      area += 0.5 * double(glm::length(n));
    }
    CHECK(area == Approx(1.5).epsilon(1e-5));
  }
}

TEST_CASE("progressive: one shot from a small light matches the disc and rectangle form factors",
          "[lightmap][progressive]") {
  rays::test::PlaneUnderLight setup;
  setup.x0 = -0.05f, setup.x1 = 0.05f, setup.y0 = -0.05f, setup.y1 = 0.05f, setup.height = 1.0f;
  const scene::Scene scene = rays::test::makePlaneUnderLight(setup);
  ProgressiveOptions options;
  options.emitterClusterTexels = 64;  // the whole light shoots as one disc
  options.maxShots = 1;
  options.residualFraction = 0.0;
  const Solved s = solve(scene, 64, options);
  REQUIRE(s.result.shots == 1);
  const glm::vec3 lightCentre(0.0f, 0.0f, 1.0f);
  const double lightArea = 0.01;
  double worstDisc = 0.0, worstRectangle = 0.0;
  int checked = 0;
  for (std::size_t t = 0; t < s.patches.texelCount(); ++t) {
    if (!s.patches.valid[t] || s.patches.normal[t].z < 0.5f) continue;  // the plane's texels only
    const glm::vec3 p = s.patches.position[t];
    if (std::abs(p.x) > 3.0f || std::abs(p.y) > 3.0f) continue;
    const glm::vec3 toLight = lightCentre - p;
    const double d2 = glm::dot(toLight, toLight);
    const double cosine = double(toLight.z) / std::sqrt(d2);  // at both ends: the light faces −z
    const double disc = lightArea * cosine * cosine / (kPi * d2 + lightArea);
    const double rectangle = rays::test::formFactor(setup, p.x, p.y);
    for (int c = 0; c < 3; ++c) {
      const double expected = double(setup.albedo[c]) * double(setup.radiance[c]);
      const double factor = double(s.result.lightmap.radiance[t][c]) / expected;
      worstDisc = std::max(worstDisc, std::abs(factor / disc - 1.0));
      worstRectangle = std::max(worstRectangle, std::abs(factor / rectangle - 1.0));
    }
    ++checked;
  }
  std::printf("one shot: %d texels, worst deviation from the disc formula %.2e, from the exact rectangle %.2e\n",
              checked, worstDisc, worstRectangle);
  REQUIRE(checked > 50);
  CHECK(worstDisc < 1e-4);       // the shader's arithmetic (float)
  CHECK(worstRectangle < 0.01);  // a 0.1 × 0.1 light seen from ≥ 1 away is almost a disc
}

TEST_CASE("progressive: in a closed box, the power that leaves a shooter all arrives", "[lightmap][progressive]") {
  // Only one face emits, so the one shot comes from it; the other faces receive.
  scene::Scene scene;
  const float a = 0.5f;
  const glm::vec3 albedo(a);
  using rays::test::addQuad;
  addQuad(scene, {-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1}, albedo, glm::vec3(0.0f), "floor");
  addQuad(scene, {-1, -1, 1}, {-1, 1, 1}, {1, 1, 1}, {1, -1, 1}, albedo, glm::vec3(1.0f, 2.0f, 3.0f), "ceiling");
  addQuad(scene, {-1, -1, -1}, {-1, 1, -1}, {-1, 1, 1}, {-1, -1, 1}, albedo, glm::vec3(0.0f), "x0");
  addQuad(scene, {1, -1, -1}, {1, -1, 1}, {1, 1, 1}, {1, 1, -1}, albedo, glm::vec3(0.0f), "x1");
  addQuad(scene, {-1, -1, -1}, {-1, -1, 1}, {1, -1, 1}, {1, -1, -1}, albedo, glm::vec3(0.0f), "y0");
  addQuad(scene, {-1, 1, -1}, {1, 1, -1}, {1, 1, 1}, {-1, 1, 1}, albedo, glm::vec3(0.0f), "y1");
  scene.finalize();
  ProgressiveOptions options;
  options.emitterClusterTexels = 6;
  options.maxShots = 1;
  options.residualFraction = 0.0;
  const Solved s = solve(scene, 96, options);
  REQUIRE(s.result.shotPowers.size() == 1);
  // Irradiance E_r = π ΔL_r / ρ; the incident power Σ E_r A_r, as mean RGB like the shot's power.
  double received = 0.0;
  for (std::size_t t = 0; t < s.patches.texelCount(); ++t) {
    if (!s.patches.valid[t]) continue;
    const glm::vec3 delta = s.result.lightmap.radiance[t] - s.patches.emission[t];
    received += kPi * double(delta.r + delta.g + delta.b) / 3.0 / double(a) * double(s.patches.area[t]);
  }
  const double shot = s.result.shotPowers[0];
  std::printf("one shot in a closed box: shooter power %.6g, received %.6g (ratio %.4f), %zu visibility triangles\n",
              shot, received, received / shot, s.result.visibilityTriangles);
  CHECK(received / shot == Approx(1.0).epsilon(0.02));
}

TEST_CASE("progressive: checkpoints track a falling residual, and a callback that rebinds buffers changes nothing",
          "[lightmap][progressive]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "furnace.json");
  ProgressiveOptions options;
  options.residualFraction = 0.0;
  options.maxShots = 120;
  const Solved plain = solve(scene, 32, options);
  options.checkpointShots = 25;
  std::vector<double> residuals;
  gpu::Buffer other(1024, nullptr, 0);
  AtlasOptions atlasOptions;
  atlasOptions.targetSize = 32;
  const ProgressiveResult checked =
      solveProgressive(scene, plain.atlas, plain.patches, options,
                       [&](const ProgressiveCheckpoint& checkpoint, std::span<const glm::vec3>) {
                         residuals.push_back(checkpoint.residualFraction);
                         for (GLuint binding = 0; binding < 9; ++binding)
                           glBindBufferBase(GL_SHADER_STORAGE_BUFFER, binding, other.id());
                       });
  REQUIRE(checked.shots == 120);
  REQUIRE(residuals.size() == 5);  // after 25, 50, 75, 100 shots and at the end
  for (std::size_t i = 1; i < residuals.size(); ++i) CHECK(residuals[i] < residuals[i - 1]);
  // Each shot moves Φ_c out of the residual and at most ρ·Φ_c back in, so the residual falls.
  for (std::size_t k = 1; k < checked.shotResiduals.size(); ++k)
    CHECK(checked.shotResiduals[k] < checked.shotResiduals[k - 1]);
  double worst = 0.0;
  for (std::size_t t = 0; t < plain.patches.texelCount(); ++t)
    for (int c = 0; c < 3; ++c)
      worst = std::max(worst, double(std::abs(checked.lightmap.radiance[t][c] - plain.result.lightmap.radiance[t][c])));
  CHECK(worst < 1e-5);
}

}  // namespace ibrr::lightmap
