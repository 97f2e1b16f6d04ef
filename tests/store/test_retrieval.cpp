// Retrieval against the analytic point-light radiosity I cos θx cos θi / (π r²) on analytic scenes.

#include "store_test_scenes.hpp"

#include "ibrr/error.hpp"
#include "ibrr/ldc.hpp"
#include "ibrr/octahedral.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>

using namespace ibrr;
using namespace ibrr::test;

namespace {

struct ErrorReport {
  int points = 0;
  int misses = 0;         // retrieval said "no match"
  int failures = 0;       // outside tolerance
  float worstRel = 0.0f;  // max |x − y| / (y + absTol) over matched points
  std::string firstFailure;
};

// Compares retrieval with the analytic sum at every point: |x − y| ≤ relTol·y + absTol per channel.
ErrorReport compare(const LayeredDepthCube& store, const AnalyticScene& scene, const std::vector<PointLight>& lights,
                    const std::vector<SurfacePoint>& points, RetrievalFilter filter, float relTol, float absTol) {
  ErrorReport rep;
  for (const SurfacePoint& sp : points) {
    const glm::vec3 expected = analyticSum(scene, lights, sp.position, sp.normal);
    ++rep.points;
    const auto got = store.radiosity(sp.position, sp.normal, filter);
    if (!got) {
      ++rep.misses;
      continue;
    }
    for (int c = 0; c < 3; ++c) {
      const float err = std::fabs((*got)[c] - expected[c]);
      rep.worstRel = std::max(rep.worstRel, err / (expected[c] + absTol));
      if (err > relTol * expected[c] + absTol) {
        if (rep.failures++ == 0) {
          char buf[256];
          std::snprintf(buf, sizeof(buf), "p=(%.3f %.3f %.3f) n=(%.0f %.0f %.0f) got %.5f expected %.5f", sp.position.x,
                        sp.position.y, sp.position.z, sp.normal.x, sp.normal.y, sp.normal.z, (*got)[c], expected[c]);
          rep.firstFailure = buf;
        }
      }
    }
  }
  return rep;
}

}  // namespace

TEST_CASE("plane: retrieval matches the analytic point-light radiosity", "[store][retrieval]") {
  AnalyticScene scene;
  scene.addQuad({{0, 0, 0}, {0, 0, 4}, {4, 0, 0}});  // 4 × 4 m floor at y = 0, normal +y
  const std::vector<PointLight> lights{{{2.0f, 1.5f, 2.0f}, {0, -1, 0}, {10.0f, 5.0f, 2.0f}}};
  const auto points = gridOnQuad(scene.quads()[0], 40, 0.1f);
  for (SplatKernel kernel : {SplatKernel::Box, SplatKernel::Gaussian}) {
    const LayeredDepthCube store = build(scene, lights, 128, 256, kernel);
    // Pixel 3.2 cm; |∇ ln B| ≤ 1.2 /m here, about 4 % per pixel. A box-splatted layer holds the mean of the
    // samples whose (1.5× enlarged) footprints cover its centre, off-centre by up to ~1/4 pixel depending on
    // how the hemicube grid falls on the LDI grid: ≈ 1 % bias. The Gaussian splat weights them by distance,
    // which removes most of it; nearest retrieval adds up to half a pixel of displacement (2 %).
    // Gaussian + bilinear: each layer holds the area-weighted mean over its (kernel-blurred) pixel, and
    // interpolating pixel means of this curved field differs from the point value by up to 0.4 % (was 0.3 %
    // when the far, larger samples weighed as much as near ones): 0.5 %.
    const bool box = kernel == SplatKernel::Box;
    const struct {
      RetrievalFilter filter;
      float relTol;
    } cases[] = {{RetrievalFilter::Nearest, box ? 0.03f : 0.025f},
                 {RetrievalFilter::Bilinear, box ? 0.015f : 0.005f},
                 {RetrievalFilter::Average, 0.025f}};
    for (const auto& c : cases) {
      const ErrorReport rep = compare(store, scene, lights, points, c.filter, c.relTol, 1e-4f);
      INFO("kernel " << static_cast<int>(kernel) << " filter " << static_cast<int>(c.filter) << " worst rel "
                     << rep.worstRel << " " << rep.firstFailure);
      CHECK(rep.misses == 0);
      CHECK(rep.failures == 0);
    }
  }
}

TEST_CASE("box room: retrieval matches the analytic sum of three VPLs on all six walls", "[store][retrieval]") {
  const AnalyticScene scene = boxRoom();
  const auto lights = boxRoomLights();
  const LayeredDepthCube store = build(scene, lights, 128, 256);
  std::vector<SurfacePoint> points;
  // Inset 0.1 m (2.5 pixels of 4 cm) from the room's edges.
  for (const auto& q : scene.quads())
    for (const SurfacePoint& sp : gridOnQuad(q, 24, 0.1f)) points.push_back(sp);
  // Near a VPL (r < 0.6 m) the 1/r² field changes by > 15 % per pixel: judged separately below.
  std::vector<SurfacePoint> farPoints;
  for (const SurfacePoint& sp : points) {
    bool far = true;
    for (const PointLight& l : lights) far = far && glm::length(l.position - sp.position) > 0.6f;
    if (far) farPoints.push_back(sp);
  }
  REQUIRE(farPoints.size() > 2500);
  const ErrorReport nearest = compare(store, scene, lights, farPoints, RetrievalFilter::Nearest, 0.04f, 0.01f);
  INFO("nearest worst " << nearest.worstRel << " " << nearest.firstFailure);
  CHECK(nearest.misses == 0);
  CHECK(nearest.failures == 0);
  const ErrorReport bilinear = compare(store, scene, lights, farPoints, RetrievalFilter::Bilinear, 0.015f, 0.01f);
  INFO("bilinear worst " << bilinear.worstRel << " " << bilinear.firstFailure);
  CHECK(bilinear.misses == 0);
  CHECK(bilinear.failures == 0);
  // Every visible point has a layer, even the near ones.
  const ErrorReport all = compare(store, scene, lights, points, RetrievalFilter::Nearest, 1e9f, 0.0f);
  CHECK(all.misses == 0);
}

TEST_CASE("thin wall: the two sides never mix", "[store][retrieval]") {
  AnalyticScene scene;
  scene.addRoom({0, 0, 0}, {4, 3, 4});
  // A 2 mm partition at x = 2, far thinner than ε_d (one 3.2 cm pixel): only the normal test separates it.
  const int sideA = scene.addQuad({{1.999f, 0, 0}, {0, 0, 4}, {0, 3, 0}});                      // faces −x
  const int sideB = scene.addQuad({{2.001f, 0, 0}, {0, 3, 0}, {0, 0, 4}});                      // faces +x
  const std::vector<PointLight> lights{{{1.0f, 2.9f, 2.0f}, {0, -1, 0}, {10.0f, 0.0f, 0.0f}},   // red, side A
                                       {{3.0f, 2.9f, 2.0f}, {0, -1, 0}, {0.0f, 10.0f, 0.0f}}};  // green, side B
  const LayeredDepthCube store = build(scene, lights, 128, 256);
  for (int side : {sideA, sideB}) {
    const auto points = gridOnQuad(scene.quads()[static_cast<std::size_t>(side)], 20, 0.1f);
    const int lit = side == sideA ? 0 : 1;
    const int dark = 1 - lit;
    for (RetrievalFilter filter : {RetrievalFilter::Nearest, RetrievalFilter::Bilinear, RetrievalFilter::Average}) {
      int misses = 0, mixed = 0;
      for (const SurfacePoint& sp : points) {
        const auto got = store.radiosity(sp.position, sp.normal, filter);
        if (!got) {
          ++misses;
          continue;
        }
        if ((*got)[dark] != 0.0f || !((*got)[lit] > 0.0f)) ++mixed;  // exactly zero from the other side
      }
      CHECK(misses == 0);
      CHECK(mixed == 0);
    }
    const ErrorReport rep = compare(store, scene, lights, points, RetrievalFilter::Bilinear, 0.015f, 1e-3f);
    INFO("side " << side << " worst " << rep.worstRel << " " << rep.firstFailure);
    CHECK(rep.failures == 0);
  }
  // The x-LDI pixels over the partition hold four layers: both room walls and both sides.
  const LdcFrame& frame = store.frame();
  const glm::vec2 pix = frame.toPixel(0, glm::vec3(2.0f, 1.5f, 2.0f));
  CHECK(store.pixelLayers(frame.globalPixel(0, static_cast<int>(pix.x), static_cast<int>(pix.y))).size() == 4);
}

TEST_CASE("small cube on a floor keeps its own layers", "[store][retrieval]") {
  AnalyticScene scene;
  scene.addRoom({0, 0, 0}, {4, 3, 4});
  const glm::vec3 cubeLo(1.9f, 0.0f, 1.9f), cubeHi(2.1f, 0.2f, 2.1f);  // 20 cm cube, about 6 pixels
  scene.addBox(cubeLo, cubeHi);
  const std::vector<PointLight> lights{{{2.0f, 2.9f, 2.0f}, {0, -1, 0}, {30.0f, 30.0f, 30.0f}}};
  const LayeredDepthCube store = build(scene, lights, 128, 256);
  const float pixel = store.frame().pixelSize();
  const glm::vec3 up(0, 1, 0);
  // Cube top, inset 1 pixel: the cube's analytic value (brighter than the floor, being 20 cm nearer).
  int topPoints = 0;
  for (float x = cubeLo.x + pixel; x <= cubeHi.x - pixel; x += 0.02f)
    for (float z = cubeLo.z + pixel; z <= cubeHi.z - pixel; z += 0.02f) {
      const glm::vec3 p(x, cubeHi.y, z);
      const glm::vec3 expected = synthetic::analyticRadiosity(scene, lights[0], p, up);
      const auto got = store.radiosity(p, up, RetrievalFilter::Bilinear);
      REQUIRE(got);
      CHECK((*got).x == Approx(expected.x).epsilon(0.01));
      ++topPoints;
    }
  CHECK(topPoints >= 9);
  // Floor ring from 2 to 4 pixels around the cube: the floor's value, not the top's (which is 16 % higher).
  int floorPoints = 0;
  for (float x = cubeLo.x - 4 * pixel; x <= cubeHi.x + 4 * pixel; x += 0.01f)
    for (float z = cubeLo.z - 4 * pixel; z <= cubeHi.z + 4 * pixel; z += 0.01f) {
      const float dx = std::max({cubeLo.x - x, x - cubeHi.x, 0.0f});
      const float dz = std::max({cubeLo.z - z, z - cubeHi.z, 0.0f});
      if (std::max(dx, dz) < 2 * pixel) continue;
      const glm::vec3 p(x, 0.0f, z);
      const glm::vec3 expected = synthetic::analyticRadiosity(scene, lights[0], p, up);
      REQUIRE(expected.x > 0.0f);
      const auto got = store.radiosity(p, up, RetrievalFilter::Nearest);
      REQUIRE(got);
      CHECK((*got).x == Approx(expected.x).epsilon(0.02));
      ++floorPoints;
    }
  CHECK(floorPoints > 100);
  // Under the cube the floor is never seen: no layer matches there, and retrieval says so.
  CHECK_FALSE(store.radiosity({2.0f, 0.0f, 2.0f}, up).has_value());
  CHECK_FALSE(store.radiosity({2.0f, 0.0f, 2.0f}, up, RetrievalFilter::Bilinear).has_value());
  // Along the cube's border the y-LDI pixels hold both the floor and the top, as separate +y layers, and no
  // +y layer anywhere has a plane between the two (which a merge of floor and top samples would produce).
  int twoLayerPixels = 0, mergedPlanes = 0;
  const LdcFrame& frame = store.frame();
  for (int j = 0; j < frame.resolution(); ++j)
    for (int i = 0; i < frame.resolution(); ++i) {
      int up_layers = 0;
      for (const PackedLayer& l : store.pixelLayers(frame.globalPixel(1, i, j)))
        if (octDecode(l.normal).y > 0.9f) {
          ++up_layers;
          if (std::fabs(l.d) > 1e-3f && std::fabs(l.d - cubeHi.y) > 1e-3f) ++mergedPlanes;
        }
      if (up_layers >= 2) ++twoLayerPixels;
    }
  CHECK(twoLayerPixels >= 4);
  CHECK(mergedPlanes == 0);
}

TEST_CASE("grazing-angle surfaces show no holes after splatting", "[store][retrieval]") {
  AnalyticScene scene;
  scene.addQuad({{0, 0, 0}, {0, 0, 2}, {6, 0, 0}});  // 6 × 2 m floor, normal +y
  // A light 25 cm above the floor looking along it: at 3 m the floor is seen at 85° from its normal, and one
  // hemicube row covers 0.5 m (7 pixels) of floor.
  const std::vector<PointLight> lights{{{0.05f, 0.25f, 1.0f}, {1, 0, 0}, {1.0f, 1.0f, 1.0f}}};
  LdcParams params;
  params.bounds = scene.bounds();
  params.resolution = 128;  // pixel 4.8 cm
  auto samples = renderAll(scene, lights, 128);
  // Every y-LDI pixel centre on the floor between 0.5 and 3 m from the light, 0.4 m from the sides.
  std::vector<SurfacePoint> points;
  {
    const LdcFrame frame(resolveParams(params));
    for (int j = 0; j < frame.resolution(); ++j)
      for (int i = 0; i < frame.resolution(); ++i) {
        const glm::vec2 c = frame.pixelCentre(1, i, j);  // (z, x)
        if (c.y > 0.5f && c.y < 3.0f && c.x > 0.4f && c.x < 1.6f) points.push_back({{c.y, 0, c.x}, {0, 1, 0}});
      }
  }
  REQUIRE(points.size() > 500);
  for (SplatKernel kernel : {SplatKernel::Box, SplatKernel::Gaussian}) {
    LdcBuilder builder(params, kernel);
    builder.insert(samples[0].view());
    const LayeredDepthCube store = builder.finalize();
    // Radiosity falls ~1/x³ here: 25 % per pixel near 0.5 m, so the value is checked loosely (20 %).
    const ErrorReport rep = compare(store, scene, lights, points, RetrievalFilter::Nearest, 0.2f, 0.0f);
    INFO("kernel " << static_cast<int>(kernel) << " worst " << rep.worstRel << " " << rep.firstFailure);
    CHECK(rep.misses == 0);
    CHECK(rep.failures == 0);
  }
  // The scenario is a real test: without footprints (own pixel only) the same samples leave holes.
  std::fill(samples[0].footprints.begin(), samples[0].footprints.end(), 0.0f);
  LdcBuilder pointOnly(params);
  pointOnly.insert(samples[0].view());
  const ErrorReport holes = compare(pointOnly.finalize(), scene, lights, points, RetrievalFilter::Nearest, 1e9f, 0.0f);
  CHECK(holes.misses > 50);
}

TEST_CASE("one hemicube counts once, whatever its resolution, and hemicubes add", "[store][retrieval]") {
  const AnalyticScene scene = boxRoom();
  const std::vector<PointLight> lights{boxRoomLights()[0]};
  const LayeredDepthCube low = build(scene, lights, 128, 128);
  const LayeredDepthCube high = build(scene, lights, 128, 256);  // 4× the samples per LDI pixel
  const auto points = gridOnQuad(scene.quads()[2], 30, 0.1f);    // the floor
  int compared = 0;
  for (const SurfacePoint& sp : points) {
    const auto a = low.radiosity(sp.position, sp.normal, RetrievalFilter::Bilinear);
    const auto b = high.radiosity(sp.position, sp.normal, RetrievalFilter::Bilinear);
    REQUIRE(a);
    REQUIRE(b);
    CHECK((*b).x == Approx((*a).x).epsilon(0.02));  // same radiosity (not 4×), to 2 %
    ++compared;
  }
  CHECK(compared == 900);
  // The same hemicube inserted twice: exactly twice the radiosity and count 2 on every layer.
  LdcParams params;
  params.bounds = scene.bounds();
  params.resolution = 128;
  LdcBuilder twice(params);
  const auto samples = renderAll(scene, lights, 128);
  twice.insert(samples[0].view());
  twice.insert(samples[0].view());
  const LayeredDepthCube doubled = twice.finalize();
  REQUIRE(doubled.layers().size() == low.layers().size());
  for (std::size_t k = 0; k < low.layers().size(); ++k) {
    CHECK(doubled.layers()[k].count == 2);
    CHECK(doubled.layers()[k].r == 2.0f * low.layers()[k].r);  // x + x is exact in floating point
  }
}

TEST_CASE("queries that match nothing say so", "[store][retrieval]") {
  const AnalyticScene scene = boxRoom();
  const LayeredDepthCube store = build(scene, {boxRoomLights()[0]}, 32, 64);
  const glm::vec3 up(0, 1, 0);
  CHECK(store.radiosity({2.0f, 0.0f, 2.5f}, up).has_value());         // the floor
  CHECK_FALSE(store.radiosity({2.0f, 1.5f, 2.5f}, up).has_value());   // mid-air: no plane within ε
  CHECK_FALSE(store.radiosity({2.0f, 0.0f, 2.5f}, -up).has_value());  // the floor's back side
  CHECK_FALSE(store.radiosity({50.0f, 0.0f, 2.5f}, up).has_value());  // outside the cube
  CHECK_FALSE(store.radiosity({2.0f, 0.0f, 2.5f}, glm::vec3(0.0f)).has_value());
  CHECK_FALSE(store.radiosity({NAN, 0.0f, 2.5f}, up).has_value());
  CHECK_FALSE(LayeredDepthCube().radiosity({2.0f, 0.0f, 2.5f}, up).has_value());
}

TEST_CASE("a broken invariant is an internal error naming its condition and place, in every build type",
          "[store][check]") {
  AnalyticScene scene;
  scene.addQuad({{0, 0, 0}, {0, 0, 4}, {4, 0, 0}});
  const std::vector<PointLight> lights{{{2.0f, 1.5f, 2.0f}, {0, -1, 0}, {10.0f, 5.0f, 2.0f}}};
  const LayeredDepthCube store = build(scene, lights, 16, 32, SplatKernel::Box);
  const auto pixels = std::uint32_t(store.frame().pixelCount());
  CHECK(store.pixelLayers(pixels - 1).size() <= store.layers().size());
  // pixelLayers' caller promises a pixel of the store (IBRR_CHECK, ibrr/error.hpp).
  CHECK_THROWS_AS((void)store.pixelLayers(pixels), InternalError);
  CHECK_THROWS_WITH((void)store.pixelLayers(pixels), Catch::StartsWith("internal error at ") &&
                                                         Catch::Contains("ibrr/ldc.cpp:") &&
                                                         Catch::Contains("globalPixel < m_frame.pixelCount()") &&
                                                         Catch::Contains("please report it"));
}
