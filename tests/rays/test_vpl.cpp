// VPL light paths: power conservation (furnace: a^k per bounce), determinism across thread counts,
// the direct light of the bounce-0 VPLs against the closed-form form factor.
#include "rays/vpl.hpp"
#include "test_scenes.hpp"
#include "util/error.hpp"

#include <catch2/catch.hpp>
#include <glm/gtc/constants.hpp>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstring>

using namespace ibrr;
using namespace ibrr::rays;

TEST_CASE("furnace: VPL power per bounce follows a^k within 2%", "[rays][vpl][furnace]") {
  const float albedo = 0.5f;
  const glm::vec3 emission(1.0f, 0.5f, 0.25f);
  const scene::Scene scene = test::makeFurnace(albedo, emission);
  const EmbreeScene embree(scene);
  VplOptions options;
  options.pathCount = 1u << 18;
  options.seed = 7;
  const VplSet set = generateVpls(embree, options);

  // Φ = π·E·A over the 6 faces of area 4.
  const glm::dvec3 emitted = glm::dvec3(emission) * (glm::pi<double>() * 24.0);
  CHECK(set.emittedPower.r == Approx(emitted.r).epsilon(1e-5));
  REQUIRE(set.countPerBounce.size() > 8);
  CHECK(set.countPerBounce[0] == options.pathCount);
  for (int c = 0; c < 3; ++c) CHECK(set.powerPerBounce[0][c] == Approx(emitted[c]).epsilon(1e-4));
  // Closed box: every particle hits, so bounce 1 has one VPL per path.
  CHECK(set.countPerBounce[1] == options.pathCount);
  glm::dvec3 total(0.0);
  for (std::size_t k = 0; k < set.powerPerBounce.size(); ++k) {
    total += set.powerPerBounce[k];
    if (k > 6) continue;
    const double expected = std::pow(double(albedo), double(k));
    for (int c = 0; c < 3; ++c) {
      INFO("bounce " << k << " channel " << c << ": " << set.countPerBounce[k] << " VPLs, power ratio "
                     << set.powerPerBounce[k][c] / emitted[c] << " (expected " << expected << ")");
      CHECK(set.powerPerBounce[k][c] / emitted[c] == Approx(expected).epsilon(0.02));
    }
  }
  // All bounces together: Σ a^k = 1/(1 − a).
  CHECK(total.g / emitted.g == Approx(1.0 / (1.0 - albedo)).epsilon(0.01));
  // VPLs lie on the box and face into it.
  for (std::size_t i = 0; i < set.vpls.size(); i += 97) {
    const Vpl& vpl = set.vpls[i];
    CHECK(glm::length(vpl.normal) == Approx(1.0f).epsilon(1e-4));
    CHECK(std::max({std::abs(vpl.position.x), std::abs(vpl.position.y), std::abs(vpl.position.z)}) ==
          Approx(1.0f).margin(1e-3));
    CHECK(glm::dot(vpl.normal, -vpl.position) > 0.0f);
  }
}

TEST_CASE("the same seed gives the same VPLs on one thread and on all", "[rays][vpl]") {
  const scene::Scene scene = test::makeCornellBox();
  const EmbreeScene embree(scene);
  VplOptions options;
  options.pathCount = 5000;
  options.seed = 3;
  const VplSet all = generateVpls(embree, options);
  VplSet one;
  tbb::task_arena arena(1);
  arena.execute([&] { one = generateVpls(embree, options); });
  REQUIRE(all.vpls.size() == one.vpls.size());
  bool identical = true;
  for (std::size_t i = 0; i < all.vpls.size(); ++i) {
    identical = identical && all.vpls[i].position == one.vpls[i].position && all.vpls[i].power == one.vpls[i].power &&
                all.vpls[i].normal == one.vpls[i].normal && all.vpls[i].bounce == one.vpls[i].bounce;
  }
  CHECK(identical);
  options.seed = 4;
  const VplSet other = generateVpls(embree, options);
  CHECK((other.vpls.size() != all.vpls.size() || other.vpls[10].position != all.vpls[10].position));
}

TEST_CASE("Cornell box: VPLs per bounce conserve the light's power", "[rays][vpl]") {
  const scene::Scene scene = test::makeCornellBox();
  const EmbreeScene embree(scene);
  VplOptions options;
  options.pathCount = 1u << 16;
  const VplSet set = generateVpls(embree, options);
  // Φ = π·(17,12,4)·0.0130·0.105 m² ... in mm²: 130 × 105.
  const glm::dvec3 emitted = glm::dvec3(17.0, 12.0, 4.0) * (glm::pi<double>() * 130.0 * 105.0);
  for (int c = 0; c < 3; ++c) CHECK(set.powerPerBounce[0][c] == Approx(emitted[c]).epsilon(1e-4));
  // The light faces down; the open front (z = 0) takes roughly a fifth of its cosine lobe.
  CHECK(set.countPerBounce[1] > 0.75 * options.pathCount);
  CHECK(set.countPerBounce[1] < 0.90 * options.pathCount);
  for (std::size_t k = 1; k < set.powerPerBounce.size(); ++k) CHECK(set.powerPerBounce[k].r < set.powerPerBounce[k - 1].r);
  const scene::Bounds& bounds = scene.bounds();
  for (const Vpl& vpl : set.vpls) {
    REQUIRE(glm::all(glm::greaterThanEqual(vpl.position, bounds.min - 1e-2f)));
    REQUIRE(glm::all(glm::lessThanEqual(vpl.position, bounds.max + 1e-2f)));
  }
}

TEST_CASE("bounce-0 VPLs reproduce the irradiance of a rectangle light within 1%", "[rays][vpl][analytic]") {
  const test::PlaneUnderLight setup;
  const scene::Scene scene = test::makePlaneUnderLight(setup);
  const EmbreeScene embree(scene);
  VplOptions options;
  options.pathCount = 1u << 16;
  options.maxBounces = 1;
  const VplSet set = generateVpls(embree, options);
  for (const glm::vec2 p : {glm::vec2(0.0f), glm::vec2(0.3f, 0.1f), glm::vec2(-0.7f, 0.4f), glm::vec2(1.5f, -1.0f)}) {
    glm::dvec3 irradiance(0.0);
    for (const Vpl& vpl : set.vpls)
      if (vpl.bounce == 0) irradiance += glm::dvec3(vplIrradiance(vpl, scene, glm::vec3(p, 0.0f), {0, 0, 1}));
    // E = L·π·F for a Lambertian emitter of radiance L.
    const double expected = setup.radiance.r * glm::pi<double>() * test::formFactor(setup, p.x, p.y);
    INFO("point " << p.x << "," << p.y << ": E " << irradiance.r << " expected " << expected);
    CHECK(irradiance.r == Approx(expected).epsilon(0.01));
  }
}

TEST_CASE("a point light's VPL carries 4πI and lights as I·cosθ/r²", "[rays][vpl]") {
  scene::Scene scene;
  test::addQuad(scene, {-5, -5, 0}, {5, -5, 0}, {5, 5, 0}, {-5, 5, 0}, glm::vec3(0.5f));
  scene::PointLight light;
  light.position = {0, 0, 2};
  light.intensity = glm::vec3(3.0f);
  scene.pointLights.push_back(light);
  scene.finalize();
  const EmbreeScene embree(scene);
  VplOptions options;
  options.pathCount = 4096;
  const VplSet set = generateVpls(embree, options);
  CHECK(set.powerPerBounce[0].r == Approx(4.0 * glm::pi<double>() * 3.0).epsilon(1e-5));
  glm::dvec3 e(0.0);
  for (const Vpl& vpl : set.vpls)
    if (vpl.bounce == 0) e += glm::dvec3(vplIrradiance(vpl, scene, {1, 0, 0}, {0, 0, 1}));
  const double r2 = 5.0, cosTheta = 2.0 / std::sqrt(5.0);
  CHECK(e.r == Approx(3.0 * cosTheta / r2).epsilon(1e-4));
  // The 10×10 plane 2 below covers 4·atan(25/(2·sqrt(54)))/(4π) = 33.1% of the sphere.
  CHECK(double(set.countPerBounce[1]) / options.pathCount == Approx(0.331).margin(0.02));
}

TEST_CASE("VPL generation refuses a scene without light", "[rays][vpl][errors]") {
  scene::Scene scene;
  test::addQuad(scene, {-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}, glm::vec3(0.5f));
  scene.finalize();
  const EmbreeScene embree(scene);
  try {
    (void)generateVpls(embree, VplOptions{});
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK_THAT(error.what(), Catch::Contains("no light") && Catch::Contains("emission"));
  }
  VplOptions none;
  none.pathCount = 0;
  CHECK_THROWS_AS(generateVpls(embree, none), Error);
}
