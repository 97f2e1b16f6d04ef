// Merge equals building from the union; parallel insertion is deterministic across thread counts and batching.

#include "store_test_scenes.hpp"

#include "ibrr/error.hpp"
#include "ibrr/store_file.hpp"
#include "ibrr/surface_seeds.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <catch2/catch.hpp>

#include <cstring>

using namespace ibrr;
using namespace ibrr::test;

namespace {

// Six VPLs around the room, on every wall.
std::vector<PointLight> sixLights() {
  return {PointLight{{2.0f, 2.99f, 2.5f}, {0, -1, 0}, {20, 20, 20}},
          PointLight{{0.01f, 1.5f, 2.5f}, {1, 0, 0}, {5, 8, 3}},
          PointLight{{3.0f, 0.01f, 1.0f}, {0, 1, 0}, {4, 4, 6}},
          PointLight{{3.99f, 1.0f, 4.0f}, {-1, 0, 0}, {2, 3, 9}},
          PointLight{{1.0f, 2.0f, 0.01f}, {0, 0, 1}, {7, 1, 1}},
          PointLight{{2.5f, 0.5f, 4.99f}, {0, 0, -1}, {1, 6, 2}}};
}

AnalyticScene roomWithCube() {
  AnalyticScene scene = boxRoom();
  scene.addBox({1.0f, 0.0f, 1.0f}, {1.6f, 0.6f, 1.6f});
  return scene;
}

}  // namespace

TEST_CASE("merge(store(A), store(B)) equals store(A u B)", "[store][merge]") {
  const AnalyticScene scene = roomWithCube();
  const auto lights = sixLights();
  const auto samples = renderAll(scene, lights, 96);
  const auto all = views(samples);
  for (SplatKernel kernel : {SplatKernel::Box, SplatKernel::Gaussian}) {
    LdcParams params;
    params.bounds = scene.bounds();
    params.resolution = 64;
    params.sceneFingerprint = 42;
    LdcBuilder whole(params, kernel), partA(params, kernel), partB(params, kernel);
    whole.insert(all);
    partA.insert(std::span(all).first(3));
    partB.insert(std::span(all).subspan(3));
    const LayeredDepthCube expected = whole.finalize();
    const LayeredDepthCube merged = merge(partA.finalize(), partB.finalize());
    CHECK(merged.vplCount() == 6);
    REQUIRE(merged.offsets().size() == expected.offsets().size());
    CHECK(std::equal(merged.offsets().begin(), merged.offsets().end(), expected.offsets().begin()));
    REQUIRE(merged.layers().size() == expected.layers().size());
    int mismatches = 0;
    for (std::size_t k = 0; k < expected.layers().size(); ++k) {
      const PackedLayer& m = merged.layers()[k];
      const PackedLayer& e = expected.layers()[k];
      // Plane and count exactly; radiosity to float rounding of a different summation order.
      const bool same = m.normal == e.normal && m.d == e.d && m.count == e.count &&
                        std::fabs(m.r - e.r) <= 1e-5f * std::fabs(e.r) + 1e-9f &&
                        std::fabs(m.g - e.g) <= 1e-5f * std::fabs(e.g) + 1e-9f &&
                        std::fabs(m.b - e.b) <= 1e-5f * std::fabs(e.b) + 1e-9f;
      if (!same) ++mismatches;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("merge refuses stores with different layouts", "[store][merge]") {
  const AnalyticScene scene = boxRoom();
  LdcParams params;
  params.bounds = scene.bounds();
  params.resolution = 16;
  const LayeredDepthCube a = LdcBuilder(params).finalize();
  params.resolution = 32;
  const LayeredDepthCube b = LdcBuilder(params).finalize();
  params.resolution = 16;
  params.sceneFingerprint = 7;
  const LayeredDepthCube c = LdcBuilder(params).finalize();
  CHECK_THROWS_AS(merge(a, b), Error);
  CHECK_THROWS_AS(merge(a, c), Error);
  CHECK_NOTHROW(merge(a, a));
}

TEST_CASE(
    "the store is byte-identical with 1 thread and with many, however hemicubes are batched, with and without "
    "seeds",
    "[store][determinism]") {
  const AnalyticScene scene = roomWithCube();
  const auto lights = sixLights();
  const auto samples = renderAll(scene, lights, 128);
  const auto all = views(samples);
  // The seeds of every quad but the last (one of the cube's faces), so that its samples open layers.
  std::vector<SeedTriangle> triangles;
  for (std::size_t q = 0; q + 1 < scene.quads().size(); ++q) addQuadTriangles(scene.quads()[q], triangles);
  // Allow 8 threads even on a 2-core machine: oversubscription gives the most varied interleavings.
  tbb::global_control allowEight(tbb::global_control::max_allowed_parallelism, 8);
  for (SplatKernel kernel : {SplatKernel::Box, SplatKernel::Gaussian})
    for (bool seeded : {false, true}) {
      INFO((kernel == SplatKernel::Box ? "box" : "Gaussian") << (seeded ? ", seeded" : ", without seeds"));
      LdcParams params;
      params.bounds = scene.bounds();
      params.resolution = 96;
      std::size_t seedLayers = 0, opened = 0;
      auto bakeWith = [&](int threads, bool oneByOne) {
        std::vector<std::byte> bytes;
        tbb::task_arena arena(threads);
        arena.execute([&] {
          LdcBuilder builder(params, kernel);
          if (seeded) {
            HemicubeSamples seeds;
            appendSurfaceSeeds(builder.frame(), triangles, seeds);
            builder.seedLayers(seeds.view());
            seedLayers = builder.stats().layers;
          }
          if (oneByOne)
            for (const HemicubeSampleView& v : all) builder.insert(v);
          else
            builder.insert(all);
          opened = builder.stats().layers - seedLayers;
          bytes = serializeStore(builder.finalize());
        });
        return bytes;
      };
      const auto one = bakeWith(1, false);
      const auto many = bakeWith(8, false);
      const auto two = bakeWith(2, true);
      CHECK(one.size() > 100000);
      if (seeded) CHECK(opened > 0);  // the ordered pass had layers to open
      CHECK(one == many);
      CHECK(one == two);
    }
}

TEST_CASE("the hemicube pass gives the band pass's store byte for byte, with opened layers and edge reaches",
          "[store][determinism]") {
  const AnalyticScene scene = roomWithCube();
  std::vector<HemicubeSamples> samples = renderAll(scene, sixLights(), 128);
  // An edge reach on every seventh sample, in its plane, up to a few footprints' sides: splats that grow on one
  // side, past their own band's rows more often.
  int reaches = 0;
  for (HemicubeSamples& hemicube : samples) {
    hemicube.edgeReaches.assign(hemicube.size(), glm::vec3(0.0f));
    for (std::size_t k = 0; k < hemicube.size(); k += 7) {
      const glm::vec3 n = glm::normalize(hemicube.normals[k]);
      const glm::vec3 d = glm::vec3(float(k % 5) - 2.0f, float(k % 3) - 1.0f, 1.0f);
      hemicube.edgeReaches[k] = (d - n * glm::dot(d, n)) * (std::sqrt(hemicube.footprints[k]) * float(1 + k % 4));
      ++reaches;
    }
  }
  const auto all = views(samples);
  std::vector<SeedTriangle> triangles;  // every quad but the last (a face of the cube): its samples open layers
  for (std::size_t q = 0; q + 1 < scene.quads().size(); ++q) addQuadTriangles(scene.quads()[q], triangles);
  for (int resolution : {24, 96}) {
    INFO("R = " << resolution);
    LdcParams params;
    params.bounds = scene.bounds();
    params.resolution = resolution;
    struct Result {
      std::vector<std::byte> bytes;
      std::vector<glm::dvec3> sums;
      std::uint64_t opened = 0;
    };
    auto bakeWith = [&](LdcBuilder::ParallelPass pass) {
      LdcBuilder builder(params, SplatKernel::Box);
      HemicubeSamples seeds;
      appendSurfaceSeeds(builder.frame(), triangles, seeds);
      builder.seedLayers(seeds.view());
      const std::uint64_t seeded = builder.stats().layers;
      builder.setParallelPass(pass);
      builder.insert(std::span(all).first(2));  // two calls: the totals of the first go on into the second
      builder.insert(std::span(all).subspan(2));
      Result result{serializeStore(builder.finalize()), builder.layerSums().sums, builder.stats().layers - seeded};
      return result;
    };
    const Result bands = bakeWith(LdcBuilder::ParallelPass::Bands);
    const Result hemicubes = bakeWith(LdcBuilder::ParallelPass::Hemicubes);
    CHECK(reaches > 1000);
    CHECK(bands.opened > 0);  // own-pixel shares that no seeded layer took opened layers in both
    CHECK(bands.opened == hemicubes.opened);
    CHECK(bands.bytes == hemicubes.bytes);
    REQUIRE(bands.sums.size() == hemicubes.sums.size());
    CHECK(std::memcmp(bands.sums.data(), hemicubes.sums.data(), bands.sums.size() * sizeof(glm::dvec3)) == 0);
  }
}
