// The lightmap atlas and patch list: texel centres inside their triangles, charts that never share
// a texel and keep their padding, determinism, Σ area = surface area, texels on the surface with
// the triangle's normal, and thin triangles that still get texels.
#include "../rays/test_scenes.hpp"
#include "lightmap/atlas.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <tbb/global_control.h>
#include <catch2/catch.hpp>
#include <glm/gtc/constants.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>

using namespace ibrr;
using namespace ibrr::lightmap;

namespace {

// Barycentric coordinates of p in the UV triangle (a, b, c); NaN-free for non-degenerate ones.
glm::dvec3 barycentrics(glm::dvec2 p, glm::dvec2 a, glm::dvec2 b, glm::dvec2 c) {
  const double d = (b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y);
  const double l1 = ((p.x - a.x) * (c.y - a.y) - (c.x - a.x) * (p.y - a.y)) / d;
  const double l2 = ((b.x - a.x) * (p.y - a.y) - (p.x - a.x) * (b.y - a.y)) / d;
  return {1.0 - l1 - l2, l1, l2};
}

// Distance from p to the world triangle (a, b, c) (brute force: plane, else the nearest edge).
double distanceToTriangle(glm::dvec3 p, glm::dvec3 a, glm::dvec3 b, glm::dvec3 c) {
  const glm::dvec3 n = glm::normalize(glm::cross(b - a, c - a));
  const glm::dvec3 q = p - n * glm::dot(p - a, n);
  auto inside = [&](glm::dvec3 u, glm::dvec3 v) { return glm::dot(glm::cross(v - u, q - u), n) >= 0.0; };
  if (inside(a, b) && inside(b, c) && inside(c, a)) return glm::length(p - q);
  auto segment = [&](glm::dvec3 u, glm::dvec3 v) {
    const double t = glm::clamp(glm::dot(p - u, v - u) / glm::dot(v - u, v - u), 0.0, 1.0);
    return glm::length(p - (u + t * (v - u)));
  };
  return std::min({segment(a, b), segment(b, c), segment(c, a)});
}

const scene::Scene& cornell() {
  static const scene::Scene scene = scene::loadScene(scene::resolveScenePath("cornell"));
  return scene;
}

// Checks every atlas and patch-list invariant; returns the number of valid texels.
std::size_t checkAtlasAndPatches(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                 int padding) {
  REQUIRE(atlas.triangleCount() == scene.triangleCount());
  REQUIRE(patches.texelCount() == std::size_t(atlas.width) * atlas.height);
  // Footprints: inside the atlas, pairwise disjoint, with `padding` free texels between them.
  std::vector<std::int64_t> owner(patches.texelCount(), -1);
  for (std::uint32_t c = 0; c < atlas.chartCount; ++c) {
    const auto& f = atlas.chartFootprints[c];
    REQUIRE((f.x >= padding && f.y >= padding && f.x + f.width + padding <= atlas.width &&
             f.y + f.height + padding <= atlas.height));
    for (int y = f.y; y < f.y + f.height; ++y)
      for (int x = f.x; x < f.x + f.width; ++x) {
        REQUIRE(owner[std::size_t(y) * atlas.width + x] == -1);
        owner[std::size_t(y) * atlas.width + x] = c;
      }
  }
  for (std::uint32_t c = 0; c < atlas.chartCount; ++c) {
    const auto& f = atlas.chartFootprints[c];
    for (int y = f.y - padding; y < f.y + f.height + padding; ++y)
      for (int x = f.x - padding; x < f.x + f.width + padding; ++x) {
        const std::int64_t o = owner[std::size_t(y) * atlas.width + x];
        REQUIRE((o == -1 || o == std::int64_t(c)));
      }
  }
  // Every triangle's UVs lie in its chart's footprint.
  for (std::size_t t = 0; t < atlas.triangleCount(); ++t) {
    const auto& f = atlas.chartFootprints[atlas.triangleChart[t]];
    for (int k = 0; k < 3; ++k) {
      const glm::vec2 uv = atlas.vertices[3 * t + k].lightmapUv;
      REQUIRE((uv.x >= f.x - 1e-3f && uv.x <= f.x + f.width + 1e-3f && uv.y >= f.y - 1e-3f &&
               uv.y <= f.y + f.height + 1e-3f));
    }
  }
  // Valid texels: centre inside the owning triangle (or, for conservative texels, the texel square
  // touching it), inside the owning chart's footprint, position on the triangle, its normal.
  std::size_t validCount = 0, conservativeCount = 0;
  double worstDistance = 0.0, worstCentre = 0.0;
  for (int y = 0; y < atlas.height; ++y)
    for (int x = 0; x < atlas.width; ++x) {
      const std::size_t i = std::size_t(y) * atlas.width + x;
      if (!patches.valid[i]) {
        REQUIRE(patches.triangle[i] == PatchList::kNoTriangle);
        continue;
      }
      ++validCount;
      const std::uint32_t t = patches.triangle[i];
      REQUIRE(t < atlas.triangleCount());
      REQUIRE(owner[i] == std::int64_t(atlas.triangleChart[t]));
      const LightmapVertex* v = &atlas.vertices[3 * t];
      const glm::dvec2 a(v[0].lightmapUv), b(v[1].lightmapUv), c(v[2].lightmapUv);
      if (patches.centreCovered[i]) {
        // Inside: the distance from the centre to the UV triangle (texels) is at most the
        // rasteriser's sub-texel snapping of vertices (llvmpipe: 1/256 texel).
        const glm::dvec3 l = barycentrics({x + 0.5, y + 0.5}, a, b, c);
        if (std::min({l.x, l.y, l.z}) < 0.0)
          worstCentre = std::max(worstCentre, distanceToTriangle(glm::dvec3(x + 0.5, y + 0.5, 0.0), glm::dvec3(a, 0.0),
                                                                 glm::dvec3(b, 0.0), glm::dvec3(c, 0.0)));
      } else {
        ++conservativeCount;
        // The texel square overlaps the triangle: its centre is within half a diagonal of it.
        REQUIRE(distanceToTriangle(glm::dvec3(x + 0.5, y + 0.5, 0.0), glm::dvec3(a, 0.0), glm::dvec3(b, 0.0),
                                   glm::dvec3(c, 0.0)) <= 0.5 * std::sqrt(2.0) + 1e-9);
      }
      const double distance = distanceToTriangle(glm::dvec3(patches.position[i]), glm::dvec3(v[0].position),
                                                 glm::dvec3(v[1].position), glm::dvec3(v[2].position));
      worstDistance = std::max(worstDistance, distance);
      const glm::dvec3 n = glm::normalize(
          glm::cross(glm::dvec3(v[1].position - v[0].position), glm::dvec3(v[2].position - v[0].position)));
      REQUIRE(glm::dot(glm::dvec3(patches.normal[i]), n) > 0.99999);
      REQUIRE(patches.area[i] > 0.0f);
    }
  CHECK(worstCentre <= 1.0 / 128.0);  // texel units
  // On the surface: 1e-5 of the scene's size, the float precision of the positions.
  CHECK(worstDistance <= 1e-5 * scene.bounds().diagonal());
  INFO("valid " << validCount << ", conservative " << conservativeCount);
  return validCount;
}

double validArea(const PatchList& patches) {
  double sum = 0.0;
  for (std::size_t i = 0; i < patches.texelCount(); ++i)
    if (patches.valid[i]) sum += patches.area[i];
  return sum;
}

}  // namespace

TEST_CASE("atlas of the Cornell box: texel centres in their triangles, padded charts, exact area", "[atlas]") {
  test::glContext();
  const scene::Scene& scene = cornell();
  for (int padding : {1, 2, 4}) {
    AtlasOptions options;
    options.targetSize = 128;
    options.paddingTexels = padding;
    const LightmapAtlas atlas = buildAtlas(scene, options);
    CHECK(atlas.width <= 128);
    CHECK(atlas.height <= 128);
    // The box's 32 triangles are 16 flat quads (5 walls, the light, the blocks' 10 visible faces):
    // far fewer charts than triangles.
    CHECK(atlas.chartCount < scene.triangleCount() / 2 + 2);
    const PatchList patches = rasterizePatches(scene, atlas);
    const std::size_t valid = checkAtlasAndPatches(scene, atlas, patches, padding);
    CHECK(valid > 0);
    // Σ area over valid texels = the surface area: each chart's exact area is shared among its
    // texels, so only rounding remains: each texel's area is a float (relative 6e-8), summed in
    // double; 1e-6 relative leaves room for systematic rounding over a million texels.
    CHECK(validArea(patches) == Approx(scene.surfaceArea()).epsilon(1e-6));
    // A full interior texel stands for (1/density)² of surface, within the projection's few %.
    const double nominal = 1.0 / (double(atlas.texelsPerUnit) * atlas.texelsPerUnit);
    for (std::size_t i = 0; i < patches.texelCount(); ++i)
      if (patches.valid[i]) {
        REQUIRE(patches.area[i] > 0.5 * nominal);
        REQUIRE(patches.area[i] < 2.0 * nominal);
      }
  }
}

TEST_CASE("atlas: the same scene gives the same atlas and patches on any thread count", "[atlas]") {
  test::glContext();
  const scene::Scene& scene = cornell();
  AtlasOptions options;
  options.texelsPerUnit = 0.1f;  // texels per millimetre
  const LightmapAtlas first = buildAtlas(scene, options);
  const PatchList firstPatches = rasterizePatches(scene, first);
  LightmapAtlas second;
  PatchList secondPatches;
  {
    const tbb::global_control oneThread(tbb::global_control::max_allowed_parallelism, 1);
    second = buildAtlas(scene, options);
    secondPatches = rasterizePatches(scene, second);
  }
  REQUIRE(first.width == second.width);
  REQUIRE(first.height == second.height);
  REQUIRE(first.vertices.size() == second.vertices.size());
  CHECK(std::memcmp(first.vertices.data(), second.vertices.data(), first.vertices.size() * sizeof(LightmapVertex)) ==
        0);
  CHECK(first.triangleChart == second.triangleChart);
  CHECK(firstPatches.triangle == secondPatches.triangle);
  CHECK(std::memcmp(firstPatches.position.data(), secondPatches.position.data(),
                    firstPatches.position.size() * sizeof(glm::vec3)) == 0);
  CHECK(firstPatches.area == secondPatches.area);
  CHECK(first.texelsPerUnit == 0.1f);
}

TEST_CASE("atlas: a sliver thinner than a texel still gets texels on it", "[atlas]") {
  test::glContext();
  scene::Scene scene;
  // A 1×1 floor and, standing on it, a sliver 20 units long and 0.002 wide (a tenth of a texel at
  // 50 texels per unit) in another plane, so it is a chart of its own.
  rays::test::addQuad(scene, {0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}, glm::vec3(0.5f));
  scene::Material material;
  material.albedo = glm::vec3(0.3f);
  scene.materials.push_back(material);
  scene::TriangleMesh sliver;
  sliver.positions = {{0.3f, 0.0f, 0.2f}, {0.302f, 0.0f, 0.2f}, {0.301f, 20.0f, 0.2f}};
  sliver.triangles = {glm::uvec3(0, 1, 2)};
  sliver.triangleMaterials = {1};
  scene.meshes.push_back(sliver);
  scene.instances.push_back({1, glm::mat4(1.0f)});
  scene.finalize();
  AtlasOptions options;
  options.texelsPerUnit = 50.0f;
  const LightmapAtlas atlas = buildAtlas(scene, options);
  REQUIRE(atlas.chartCount == 2);
  const PatchList patches = rasterizePatches(scene, atlas);
  std::size_t sliverTexels = 0;
  for (std::size_t i = 0; i < patches.texelCount(); ++i)
    if (patches.valid[i] && patches.triangle[i] == 2) ++sliverTexels;
  // 20 units at 50 texels per unit: about 1,000 texels along its length.
  CHECK(sliverTexels >= 1000);
  CHECK(sliverTexels <= 2100);
  checkAtlasAndPatches(scene, atlas, patches, options.paddingTexels);
  CHECK(validArea(patches) == Approx(scene.surfaceArea()).epsilon(1e-6));
}

TEST_CASE("atlas: crumbs smaller than a texel join a neighbouring chart without taking its texels", "[atlas]") {
  test::glContext();
  scene::Scene scene;
  // A 1×1 floor (y = 0, facing up) at 20 texels per unit, and on it a separate upright triangle
  // 0.02 across (less than a texel; no shared edge), tilted 60° from the floor.
  rays::test::addQuad(scene, {0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {1, 0, 0}, glm::vec3(0.5f));
  scene::Material material;
  material.albedo = glm::vec3(0.3f);
  scene.materials.push_back(material);
  scene::TriangleMesh crumb;
  crumb.positions = {{0.51f, 0.0f, 0.5f}, {0.51f, 0.0f, 0.52f}, {0.52f, 0.0173f, 0.5f}};  // normal (−0.87, 0.5, 0)
  crumb.triangles = {glm::uvec3(0, 1, 2)};
  crumb.triangleMaterials = {1};
  scene.meshes.push_back(crumb);
  scene.instances.push_back({1, glm::mat4(1.0f)});
  scene.finalize();
  AtlasOptions options;
  options.texelsPerUnit = 20.0f;
  const LightmapAtlas atlas = buildAtlas(scene, options);
  CHECK(atlas.chartCount == 1);  // the crumb joined the floor
  const PatchList patches = rasterizePatches(scene, atlas);
  checkAtlasAndPatches(scene, atlas, patches, options.paddingTexels);
  // Every texel keeps the floor's triangles (the crumb overlaps one in UV), and the crumb's area
  // is shared by the floor's texels: Σ area is still the surface area.
  for (std::size_t i = 0; i < patches.texelCount(); ++i)
    if (patches.valid[i]) REQUIRE(patches.triangle[i] < 2);
  CHECK(validArea(patches) == Approx(scene.surfaceArea()).epsilon(1e-6));
}

TEST_CASE("atlas: a thin strip joins its neighbour only when it lies within half a texel of its plane", "[atlas]") {
  test::glContext();
  // A 1×1 floor (y = 0, facing up) at 10 texels per unit (0.1 per texel), with two strips hinged on
  // its edges at 45° (n·n_floor = 0.71, enough for a thin chart to join): at x = 0 one 0.05 wide,
  // whose far edge rises 0.035 off the floor's plane (within half a texel: it joins), and at x = 1
  // one 0.09 wide, rising 0.064 (beyond: a projection onto the floor would forget that, give it
  // the floor's texels and show the floor's light on it, so it keeps a chart of its own).
  const float nearRise = 0.05f / std::sqrt(2.0f), farRise = 0.09f / std::sqrt(2.0f);
  scene::Scene scene;
  scene::Material material;
  material.albedo = glm::vec3(0.5f);
  scene.materials.push_back(material);
  scene::TriangleMesh mesh;
  mesh.positions = {{0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {1, 0, 0},                                      // floor
                    {1 + farRise, farRise, 1}, {1 + farRise, farRise, 0},                            // far strip
                    {-nearRise, nearRise, 1}, {-nearRise, nearRise, 0}};                             // near strip
  mesh.triangles = {glm::uvec3(0, 1, 2), glm::uvec3(0, 2, 3),   // floor, normal (0, 1, 0)
                    glm::uvec3(3, 2, 4), glm::uvec3(3, 4, 5),   // far strip, normal (−1, 1, 0)/√2
                    glm::uvec3(1, 0, 7), glm::uvec3(1, 7, 6)};  // near strip, normal (1, 1, 0)/√2
  mesh.triangleMaterials.assign(mesh.triangles.size(), 0);
  scene.meshes.push_back(mesh);
  scene.instances.push_back({0, glm::mat4(1.0f)});
  scene.finalize();
  AtlasOptions options;
  options.texelsPerUnit = 10.0f;
  const LightmapAtlas atlas = buildAtlas(scene, options);
  CHECK(atlas.chartCount == 2);
  CHECK(atlas.triangleChart[4] == atlas.triangleChart[0]);  // the near strip joined the floor
  CHECK(atlas.triangleChart[5] == atlas.triangleChart[0]);
  CHECK(atlas.triangleChart[2] != atlas.triangleChart[0]);  // the far strip did not
  CHECK(atlas.triangleChart[3] == atlas.triangleChart[2]);
  const PatchList patches = rasterizePatches(scene, atlas);
  checkAtlasAndPatches(scene, atlas, patches, options.paddingTexels);
  // The far strip's texels lie on the far strip, so they see its light.
  const glm::dvec3 a(1, 0, 0), b(1, 0, 1), c(1 + farRise, farRise, 1), d(1 + farRise, farRise, 0);
  std::size_t stripTexels = 0;
  for (std::size_t i = 0; i < patches.texelCount(); ++i) {
    if (!patches.valid[i] || atlas.triangleChart[patches.triangle[i]] != atlas.triangleChart[2]) continue;
    ++stripTexels;
    const glm::dvec3 p(patches.position[i]);
    CHECK(std::min(distanceToTriangle(p, a, b, c), distanceToTriangle(p, a, c, d)) < 1e-5);
  }
  CHECK(stripTexels >= 10);  // 1 unit long at 10 texels per unit
  CHECK(validArea(patches) == Approx(scene.surfaceArea()).epsilon(1e-6));
}

TEST_CASE("atlas: a light smaller than a texel keeps texels of its own, and its power", "[atlas]") {
  // At a 10-texel target the Cornell light (130 × 105 mm) is smaller than a texel (about 140 mm):
  // a crumb, which must neither vanish into the ceiling's chart nor lend its emission to it.
  test::glContext();
  const scene::Scene& scene = cornell();
  for (int target : {10, 16, 64}) {
    INFO("target size " << target);
    AtlasOptions options;
    options.targetSize = target;
    const LightmapAtlas atlas = buildAtlas(scene, options);
    const PatchList patches = rasterizePatches(scene, atlas);
    // Emitted power of the texels, π · Σ L_e · area, against the scene's emitters, π · L_e · A.
    glm::dvec3 texelPower(0.0);
    for (std::size_t i = 0; i < patches.texelCount(); ++i)
      if (patches.valid[i]) texelPower += glm::pi<double>() * glm::dvec3(patches.emission[i]) * double(patches.area[i]);
    const glm::dvec3 scenePower(scene.emittedPower());
    for (int c = 0; c < 3; ++c) CHECK(texelPower[c] == Approx(scenePower[c]).epsilon(1e-4));
  }
}

TEST_CASE("atlas: charts near a light get F times the density, the rest and the totals unchanged", "[atlas]") {
  // The Cornell box at 20 mm texels: the ceiling holds the light (0.1 mm below it), so it is the
  // one chart within 2 texels of an emitting chart; the walls and blocks are farther.
  test::glContext();
  const scene::Scene& scene = cornell();
  AtlasOptions uniform;
  uniform.texelsPerUnit = 0.05f;
  const LightmapAtlas base = buildAtlas(scene, uniform);
  const PatchList basePatches = rasterizePatches(scene, base);
  const auto texelsPerChart = [](const LightmapAtlas& atlas, const PatchList& patches) {
    std::vector<std::size_t> count(atlas.chartCount, 0);
    for (std::size_t i = 0; i < patches.texelCount(); ++i)
      if (patches.valid[i]) ++count[atlas.triangleChart[patches.triangle[i]]];
    return count;
  };
  const std::vector<std::size_t> baseCounts = texelsPerChart(base, basePatches);
  for (int factor : {2, 3}) {
    INFO("refinement " << factor);
    AtlasOptions refinedOptions = uniform;
    refinedOptions.emitterRefinement = factor;
    const LightmapAtlas refined = buildAtlas(scene, refinedOptions);
    const PatchList patches = rasterizePatches(scene, refined);
    checkAtlasAndPatches(scene, refined, patches, refinedOptions.paddingTexels);
    REQUIRE(refined.chartCount == base.chartCount);  // the same charts, only scaled
    const std::vector<std::size_t> counts = texelsPerChart(refined, patches);
    int refinedCharts = 0;
    for (std::uint32_t c = 0; c < refined.chartCount; ++c) {
      if (counts[c] == baseCounts[c]) continue;
      ++refinedCharts;
      // The ceiling (normal −y, 556 × 559 mm): F² times the texels, within its edge rows.
      CHECK(refined.chartNormals[c].y < -0.99f);
      CHECK(double(counts[c]) == Approx(double(factor * factor) * double(baseCounts[c])).epsilon(0.1));
    }
    CHECK(refinedCharts == 1);
    // Texel areas follow the finer density; Σ area and the light's power stay exact.
    CHECK(validArea(patches) == Approx(scene.surfaceArea()).epsilon(1e-6));
    glm::dvec3 texelPower(0.0);
    for (std::size_t i = 0; i < patches.texelCount(); ++i)
      if (patches.valid[i]) texelPower += glm::pi<double>() * glm::dvec3(patches.emission[i]) * double(patches.area[i]);
    for (int c = 0; c < 3; ++c) CHECK(texelPower[c] == Approx(double(scene.emittedPower()[c])).epsilon(1e-4));
    const double fineTexel = 1.0 / (double(factor) * refined.texelsPerUnit * double(factor) * refined.texelsPerUnit);
    for (std::size_t i = 0; i < patches.texelCount(); ++i)
      if (patches.valid[i] && refined.chartNormals[refined.triangleChart[patches.triangle[i]]].y < -0.99f &&
          patches.emission[i] == glm::vec3(0.0f) && patches.centreCovered[i]) {
        REQUIRE(patches.area[i] > 0.5 * fineTexel);
        REQUIRE(patches.area[i] < 2.0 * fineTexel);
      }
  }
}

TEST_CASE("atlas: bad options are refused naming the option", "[atlas]") {
  const scene::Scene& scene = cornell();
  AtlasOptions options;
  options.paddingTexels = 0;
  CHECK_THROWS_WITH(buildAtlas(scene, options), Catch::Contains("padding"));
  options = {};
  options.texelsPerUnit = -1.0f;
  CHECK_THROWS_WITH(buildAtlas(scene, options), Catch::Contains("texels per unit"));
  options = {};
  options.targetSize = 2;
  CHECK_THROWS_WITH(buildAtlas(scene, options), Catch::Contains("target size"));
  for (int factor : {0, kMaxEmitterRefinement + 1}) {
    options = {};
    options.emitterRefinement = factor;
    CHECK_THROWS_WITH(buildAtlas(scene, options), Catch::Contains("refinement near lights"));
  }
}

// Sibenik and the conference room (../shared/scenes): atlases for real meshes, every invariant.
TEST_CASE("atlas: Sibenik and the conference room", "[atlas][large]") {
  test::glContext();
  for (const char* name : {"sibenik", "conference"}) {
    const auto path = test::sceneDir() / (std::string(name) + ".json");
    if (!std::filesystem::exists(test::sharedScenesDir())) {
      WARN("../shared/scenes is missing: skipped");
      return;
    }
    const scene::Scene scene = scene::loadScene(path);
    AtlasOptions options;
    options.targetSize = 1024;
    const LightmapAtlas atlas = buildAtlas(scene, options);
    const PatchList patches = rasterizePatches(scene, atlas);
    checkAtlasAndPatches(scene, atlas, patches, options.paddingTexels);
    // Charts too small to hold a texel centre get conservative texels and crumbs join a host, so no
    // area is lost (zero-area triangles have none): rounding only, as for the Cornell box.
    CHECK(validArea(patches) == Approx(scene.surfaceArea()).epsilon(1e-6));
  }
}
