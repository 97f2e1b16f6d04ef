// Adaptive subdivision of progressive refinement (GPU Gems 2 §39.3; lightmap/quadtree.hpp) against
// known answers: a split moves no energy (Σ L·A and Σ ΔL·A kept), the display's interpolation
// reproduces a linear field, a sharp shadow gets split leaves along its boundary and none in the
// flat lit region, and the command line; the furnace and the flags: test_solvers.cpp.
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/progressive.hpp"
#include "lightmap/quadtree.hpp"
#include "lightmap_test_support.hpp"
#include "rays/test_scenes.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace ibrr::lightmap {
namespace {

// The atlas of `scene` at 2^depth times the density of a `rootSize`² atlas, and its patch list.
constexpr auto finestAtlas = test::makeFinestAtlasAndPatches;

// Two levels below 32² roots, 2×2 texels a leaf, and a low threshold: leaves split at any step.
QuadtreeOptions eagerQuadtree() {
  QuadtreeOptions options;
  options.depth = 2;
  options.leafElements = 2;
  options.splitThreshold = 0.02;
  return options;
}

// A field that varies across every chart: radiance per element from its position.
glm::vec3 testField(const glm::vec3& p) {
  return glm::vec3(1.0f + 0.003f * p.x, 2.0f + 0.002f * p.y, 0.5f + 0.001f * p.z);
}

// The sharp-shadow scene: a 4 × 4 plane (z = 0, facing +z), a 0.1 × 0.1 light at z = 2 facing down
// and a 0.6 × 0.6 occluder at z = 1 between them. Seen from the light's centre the occluder's shadow
// is the square |x|, |y| ≤ 0.6; the penumbra is 0.1 wide around its edge.
scene::Scene sharpShadowScene() {
  scene::Scene scene;
  using rays::test::addQuad;
  const glm::vec3 grey(0.5f), black(0.0f);
  addQuad(scene, {-2, -2, 0}, {2, -2, 0}, {2, 2, 0}, {-2, 2, 0}, grey, black, "plane");
  addQuad(scene, {-0.3f, -0.3f, 1}, {-0.3f, 0.3f, 1}, {0.3f, 0.3f, 1}, {0.3f, -0.3f, 1}, grey, black, "occluder");
  addQuad(scene, {-0.05f, -0.05f, 2}, {-0.05f, 0.05f, 2}, {0.05f, 0.05f, 2}, {0.05f, -0.05f, 2}, black,
          glm::vec3(20.0f), "light");
  scene.finalize();
  return scene;
}

}  // namespace

TEST_CASE("adaptive: a split moves no energy: Σ L·A and Σ ΔL·A kept within 1e-6", "[lightmap][adaptive]") {
  const scene::Scene scene = rays::test::makeCornellBox();
  const test::AtlasAndPatches a = finestAtlas(scene, 32, 2);
  LightmapQuadtree quadtree(a.atlas, a.patches, eagerQuadtree());
  double area = 0.0;
  for (std::size_t t = 0; t < a.patches.texelCount(); ++t)
    if (a.patches.valid[t]) area += a.patches.area[t];
  for (int round = 0; round < 2; ++round) {
    // A field with a step (a "shadow" at x = 278) so that leaves split, and a residual of another shape.
    const std::vector<QuadtreeElement> before = quadtree.elements();
    std::vector<glm::vec3> radiance(before.size()), residual(before.size());
    double elementArea = 0.0;
    glm::dvec3 power(0.0), unshot(0.0);
    for (std::size_t i = 0; i < before.size(); ++i) {
      radiance[i] = testField(before[i].position) * (before[i].position.x < 278.0f ? 0.2f : 1.0f);
      residual[i] = glm::vec3(0.1f, 0.2f, 0.3f) * (1.0f + 0.001f * before[i].position.y);
      elementArea += before[i].area;
      power += before[i].area * glm::dvec3(radiance[i]);
      unshot += before[i].area * glm::dvec3(residual[i]);
    }
    CHECK(elementArea == Approx(area).epsilon(1e-9));  // the elements partition the surface
    const QuadtreeSplit split = quadtree.split(radiance);
    std::printf("split round %d: %zu leaves split, %zu -> %zu elements (%zu new)\n", round, split.splitLeaves,
                before.size(), split.source.size(), split.newElements.size());
    REQUIRE(split.splitLeaves > 0);
    glm::dvec3 powerAfter(0.0), unshotAfter(0.0);
    for (std::size_t i = 0; i < split.source.size(); ++i) {
      const double childArea = quadtree.elements()[i].area;
      powerAfter += childArea * glm::dvec3(radiance[split.source[i]]);
      unshotAfter += childArea * glm::dvec3(residual[split.source[i]]);
      if (!split.isNew[i]) CHECK(quadtree.elements()[i].side == before[split.source[i]].side);
    }
    for (int c = 0; c < 3; ++c) {
      CHECK(powerAfter[c] == Approx(power[c]).epsilon(1e-6));
      CHECK(unshotAfter[c] == Approx(unshot[c]).epsilon(1e-6));
    }
  }
}

TEST_CASE("adaptive: the display's interpolation reproduces a linear field inside the charts", "[lightmap][adaptive]") {
  const scene::Scene scene = rays::test::makeCornellBox();
  const test::AtlasAndPatches a = finestAtlas(scene, 32, 2);
  LightmapQuadtree quadtree(a.atlas, a.patches, eagerQuadtree());
  {  // Split some leaves so that elements of three sizes meet.
    std::vector<glm::vec3> step(quadtree.elements().size());
    for (std::size_t i = 0; i < step.size(); ++i)
      step[i] = glm::vec3(quadtree.elements()[i].position.y < 300.0f ? 0.1f : 1.0f);
    quadtree.split(step);
    step.resize(quadtree.elements().size());
    for (std::size_t i = 0; i < step.size(); ++i)
      step[i] = glm::vec3(quadtree.elements()[i].position.y < 300.0f ? 0.1f : 1.0f);
    quadtree.split(step);
  }
  std::vector<int> sides;
  for (const QuadtreeElement& e : quadtree.elements()) sides.push_back(e.side);
  std::sort(sides.begin(), sides.end());
  sides.erase(std::unique(sides.begin(), sides.end()), sides.end());
  CHECK(sides == std::vector<int>{1, 2, 4});
  std::vector<glm::vec3> linear(quadtree.elements().size());
  for (std::size_t i = 0; i < linear.size(); ++i) linear[i] = testField(quadtree.elements()[i].position);
  const std::vector<glm::vec3> shown = quadtree.atlasRadiance(linear);
  // Texels whose interpolation cells are all full: 4 element sides inside their chart's footprint.
  double worst = 0.0;
  std::size_t checked = 0;
  for (std::size_t t = 0; t < a.patches.texelCount(); ++t) {
    if (!a.patches.valid[t]) continue;
    const QuadtreeElement& e = quadtree.elements()[quadtree.elementOf(t)];
    const LightmapAtlas::Footprint& f = a.atlas.chartFootprints[quadtree.leaves()[e.leaf].chart];
    const int x = int(t % std::size_t(a.patches.width)), y = int(t / std::size_t(a.patches.width));
    const int margin = 8;  // two root sides
    if (x < f.x + margin || y < f.y + margin || x >= f.x + f.width - margin || y >= f.y + f.height - margin) continue;
    bool interior = true;  // every texel within the margin belongs to the same chart
    for (int dy = -margin; dy <= margin && interior; dy += 2)
      for (int dx = -margin; dx <= margin && interior; dx += 2) {
        const std::size_t n = std::size_t(y + dy) * std::size_t(a.patches.width) + std::size_t(x + dx);
        interior =
            a.patches.valid[n] && quadtree.elementOf(n) != LightmapQuadtree::kNone &&
            quadtree.leaves()[quadtree.elements()[quadtree.elementOf(n)].leaf].chart == quadtree.leaves()[e.leaf].chart;
      }
    if (!interior) continue;
    ++checked;
    const glm::vec3 expected = testField(a.patches.position[t]);
    for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(double(shown[t][c]) / double(expected[c]) - 1.0));
  }
  std::printf("linear field: %zu interior texels, worst relative deviation %.2e\n", checked, worst);
  REQUIRE(checked > 1000);
  CHECK(worst < 1e-4);
}

TEST_CASE("adaptive: a sharp shadow splits leaves along its boundary and none in the flat lit region",
          "[lightmap][adaptive]") {
  const scene::Scene scene = sharpShadowScene();
  const test::AtlasAndPatches a = finestAtlas(scene, 48, 2);
  ProgressiveOptions options;
  options.adaptive.depth = 2;
  options.adaptive.leafElements = 2;
  options.residualFraction = 0.01;
  const ProgressiveResult result = solveProgressive(scene, a.atlas, a.patches, options);
  // Per split leaf on the plane: its texels' distance to the shadow's edge max(|x|, |y|) = 0.6, and
  // whether all of them lie in the flat lit region (farther than 0.5 from the edge, outside).
  const int rootSide = 4;
  std::size_t nearEdge = 0, inFlatLight = 0, planeLeaves = 0, planeSplit = 0;
  for (const QuadtreeLeaf& leaf : result.leaves) {
    double nearest = 1e9;
    bool allFlat = true, onPlane = false;
    for (int y = leaf.y; y < std::min(leaf.y + 2 * leaf.side, a.patches.height); ++y)
      for (int x = leaf.x; x < std::min(leaf.x + 2 * leaf.side, a.patches.width); ++x) {
        const std::size_t t = std::size_t(y) * std::size_t(a.patches.width) + std::size_t(x);
        if (!a.patches.valid[t] || a.patches.position[t].z > 1e-3f) continue;
        onPlane = true;
        const glm::vec3 p = a.patches.position[t];
        const double edge = std::abs(std::max(std::abs(p.x), std::abs(p.y)) - 0.6);
        nearest = std::min(nearest, edge);
        allFlat = allFlat && std::max(std::abs(p.x), std::abs(p.y)) > 1.1;
      }
    if (!onPlane) continue;
    ++planeLeaves;
    if (leaf.side == rootSide) continue;
    ++planeSplit;
    if (nearest < 0.25) ++nearEdge;  // the penumbra (0.05) and two root elements (2 × 0.11) around it
    if (allFlat) ++inFlatLight;
  }
  std::printf(
      "sharp shadow: %zu leaves on the plane, %zu split ones: %zu touch the penumbra, %zu in the flat light; "
      "%zu elements, %zu leaf splits\n",
      planeLeaves, planeSplit, nearEdge, inFlatLight, result.elements, result.leafSplits);
  CHECK(planeSplit > 20);
  CHECK(nearEdge >= planeSplit * 95 / 100);
  CHECK(inFlatLight == 0);
}

TEST_CASE("adaptive: ibrr bake --adaptive writes a lightmap render reads", "[lightmap][adaptive][cli]") {
  test::glContext();
  const std::filesystem::path folder = test::outputDir("adaptive_cli");
  const std::filesystem::path file = folder / "cornell.lightmap";
  const test::CommandResult bake =
      test::runIbrr({"bake", "cornell", "--method", "progressive", "--adaptive", "--atlas", "32", "--max-depth", "1",
                     "--residual", "0.05", "--leaf-borders", "-o", file.string()});
  INFO(bake.err);
  REQUIRE(bake.exitCode == 0);
  CHECK_THAT(bake.out, Catch::Contains("radiosity texels") && Catch::Contains("leaf splits"));
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  LightmapAtlas atlas;
  const Lightmap lightmap = loadLightmap(file, scene, &atlas);
  CHECK(lightmap.settingsJson.find("\"adaptive\"") != std::string::npos);
  const test::CommandResult render = test::runIbrr(
      {"render", "cornell", "--lightmap", file.string(), "--size", "32x32", "-o", (folder / "cornell.exr").string()});
  INFO(render.err);
  CHECK(render.exitCode == 0);
}

}  // namespace ibrr::lightmap
