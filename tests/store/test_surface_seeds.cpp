// Geometry seeds (ibrr/surface_seeds.hpp): every LDI pixel a surface crosses gets a layer before any VPL, and
// seeding adds no radiosity.
#include "store_test_scenes.hpp"

#include "ibrr/surface_seeds.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <tuple>

using namespace ibrr;
using ibrr::test::addQuadTriangles;
using ibrr::test::AnalyticScene;
using ibrr::test::PointLight;

TEST_CASE("seeds cover exactly the LDI pixels each axis-aligned face overlaps", "[seeds]") {
  // A box whose faces project onto whole pixels of an R = 16 cube over [0, 16]³ (margin 0: pixel = 1 unit).
  LdcParams params;
  params.bounds = {glm::vec3(0.0f), glm::vec3(16.0f)};
  params.resolution = 16;
  params.margin = 0.0f;
  const LdcFrame frame(resolveParams(params));
  REQUIRE(frame.pixelSize() == 1.0f);
  AnalyticScene box;
  box.addBox(glm::vec3(2.0f, 3.0f, 4.0f), glm::vec3(10.0f, 7.5f, 9.0f));  // y spans 3..7.5: half a pixel
  std::vector<SeedTriangle> triangles;
  for (const auto& q : box.quads()) addQuadTriangles(q, triangles);
  HemicubeSamples seeds;
  appendSurfaceSeeds(frame, triangles, seeds);

  // Expected: a face ⟂ axis a covers pixels [lo_u, hi_u) × [lo_v, hi_v) of LDI a, rounded outwards; the two
  // triangles of a face both overlap pixels along its diagonal, so count distinct (face, pixel) pairs.
  std::set<std::tuple<int, int, int, int>> seen;  // (ldi, side, i, j)
  for (std::size_t k = 0; k < seeds.size(); ++k) {
    const glm::vec3 n = seeds.normals[k];
    const int ldi = dominantAxis(n);
    const glm::vec2 pixel = frame.toPixel(ldi, seeds.positions[k]);
    CHECK(std::fabs(std::fabs(n[ldi]) - 1.0f) < 1e-6f);
    CHECK(seeds.values[k] == glm::vec3(0.0f));
    seen.insert({ldi, n[ldi] > 0.0f ? 1 : 0, int(pixel.x), int(pixel.y)});
  }
  const glm::vec3 lo(2.0f, 3.0f, 4.0f), hi(10.0f, 7.5f, 9.0f);
  std::size_t expected = 0;
  for (int ldi = 0; ldi < 3; ++ldi) {
    const int u = ldiAxisU(ldi), v = ldiAxisV(ldi);
    const int iCount = int(std::ceil(hi[u])) - int(std::floor(lo[u]));
    const int jCount = int(std::ceil(hi[v])) - int(std::floor(lo[v]));
    expected += 2u * std::size_t(iCount * jCount);
    for (int side = 0; side < 2; ++side)
      for (int j = int(std::floor(lo[v])); j < int(std::ceil(hi[v])); ++j)
        for (int i = int(std::floor(lo[u])); i < int(std::ceil(hi[u])); ++i) CHECK(seen.count({ldi, side, i, j}) == 1);
  }
  CHECK(seen.size() == expected);
  // Seeds lie on the box's faces.
  for (std::size_t k = 0; k < seeds.size(); ++k) {
    const glm::vec3 p = seeds.positions[k];
    const glm::vec3 distanceOutside = glm::max(lo - p, p - hi);
    CHECK(glm::all(glm::lessThanEqual(distanceOutside, glm::vec3(1e-4f))));
  }
}

TEST_CASE("a thin tilted triangle smaller than a pixel still gets a seed", "[seeds]") {
  LdcParams params;
  params.bounds = {glm::vec3(0.0f), glm::vec3(8.0f)};
  params.resolution = 8;
  params.margin = 0.0f;
  const LdcFrame frame(resolveParams(params));
  const glm::vec3 n = glm::normalize(glm::vec3(0.2f, 1.0f, 0.1f));
  const SeedTriangle sliver{{glm::vec3(3.1f, 4.0f, 3.2f), glm::vec3(3.4f, 3.95f, 3.25f), glm::vec3(3.2f, 3.96f, 3.3f)},
                            {n, n, n}};
  HemicubeSamples seeds;
  appendSurfaceSeeds(frame, std::span(&sliver, 1), seeds);
  REQUIRE(seeds.size() == 1);
  CHECK(dominantAxis(seeds.normals[0]) == 1);
}

TEST_CASE("a seeded store has a zero-radiosity layer where no VPL looked and the same radiosity elsewhere", "[seeds]") {
  // A room with a box; one VPL under the ceiling. The box's faces and the floor get light; the box's bottom
  // (facing the floor, touching nothing) is never seen by the VPL.
  AnalyticScene room;
  room.addRoom(glm::vec3(0.0f), glm::vec3(4.0f, 3.0f, 4.0f));
  room.addBox(glm::vec3(1.5f, 0.5f, 1.5f), glm::vec3(2.5f, 1.2f, 2.5f));  // floats above the floor
  const std::vector<PointLight> lights{{glm::vec3(2.0f, 2.9f, 2.0f), glm::vec3(0.0f, -1.0f, 0.0f), glm::vec3(5.0f)}};

  LdcParams params;
  params.bounds = room.bounds();
  params.resolution = 64;
  LdcBuilder plain(params), seeded(params);
  const auto samples = test::renderAll(room, lights, 128);
  plain.insert(test::views(samples));

  std::vector<SeedTriangle> triangles;
  for (const auto& q : room.quads()) addQuadTriangles(q, triangles);
  HemicubeSamples seeds;
  appendSurfaceSeeds(seeded.frame(), triangles, seeds);
  seeded.seedLayers(seeds.view());
  CHECK(seeded.stats().seedSamples == seeds.size());
  CHECK(seeded.stats().hemicubes == 0);
  seeded.insert(test::views(samples));
  CHECK(seeded.stats().hemicubes == 1);
  const LayeredDepthCube a = plain.finalize(), b = seeded.finalize();
  CHECK(b.vplCount() == 1);
  CHECK(b.layers().size() > a.layers().size());

  // The box's bottom face (y = 0.5, facing down): no layer without seeds, radiosity 0 with them.
  const glm::vec3 bottom(2.0f, 0.5f, 2.0f), down(0.0f, -1.0f, 0.0f);
  CHECK_FALSE(a.radiosity(bottom, down, RetrievalFilter::Nearest).has_value());
  const auto seededBottom = b.radiosity(bottom, down, RetrievalFilter::Nearest);
  REQUIRE(seededBottom.has_value());
  CHECK(*seededBottom == glm::vec3(0.0f));

  // Lit points: the same radiosity from both stores at the own pixel (the same samples match the same layers).
  // (Bilinear lookups differ near shadow edges, where the seeded store blends in the shadowed pixels' zeros
  // that the plain store lacks.)
  int compared = 0;
  for (float x = 0.3f; x < 4.0f; x += 0.37f)
    for (float z = 0.3f; z < 4.0f; z += 0.41f) {
      const glm::vec3 p(x, 0.0f, z), up(0.0f, 1.0f, 0.0f);
      const auto va = a.radiosity(p, up, RetrievalFilter::Nearest);
      const auto vb = b.radiosity(p, up, RetrievalFilter::Nearest);
      REQUIRE(vb.has_value());
      if (!va) continue;
      ++compared;
      CHECK(glm::length(*va - *vb) <= 1e-5f * std::max(1.0f, glm::length(*va)));
    }
  CHECK(compared > 50);
}
