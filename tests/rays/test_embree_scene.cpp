// Embree scene: hits against known geometry, instancing, occlusion, streams equal single rays.
#include "rays/embree_scene.hpp"
#include "rays/pinhole.hpp"
#include "rays/sampler.hpp"
#include "rays/warp.hpp"
#include "test_scenes.hpp"
#include "util/error.hpp"

#include <catch2/catch.hpp>
#include <glm/gtc/matrix_transform.hpp>

using namespace ibrr;
using namespace ibrr::rays;

TEST_CASE("a ray hits a quad at the known distance, point and normal", "[rays][embree]") {
  scene::Scene scene;
  test::addQuad(scene, {-1, -1, 2}, {1, -1, 2}, {1, 1, 2}, {-1, 1, 2}, glm::vec3(0.5f));  // normal +z
  scene.finalize();
  const EmbreeScene embree(scene);
  CHECK(embree.triangleCount() == 2);
  CHECK(embree.buildSeconds() >= 0.0);

  Ray ray;
  ray.origin = {0.25f, 0.5f, 0.0f};
  ray.direction = {0.0f, 0.0f, 1.0f};
  const Hit hit = embree.intersect(ray);
  REQUIRE(hit.valid());
  CHECK(hit.t == Approx(2.0f).epsilon(1e-6));
  const SurfacePoint point = embree.surface(ray, hit);
  CHECK(point.position.x == Approx(0.25f).margin(1e-6));
  CHECK(point.position.y == Approx(0.5f).margin(1e-6));
  CHECK(point.position.z == Approx(2.0f).margin(1e-6));
  CHECK(point.geometricNormal.z == Approx(1.0f));
  CHECK_FALSE(point.frontFacing);  // arrives from below, the front faces +z
  CHECK(point.albedo.g == Approx(0.5f));

  ray.tFar = 1.9f;
  CHECK_FALSE(embree.intersect(ray).valid());
  CHECK_FALSE(embree.occluded(ray));
  ray.tFar = 2.1f;
  CHECK(embree.occluded(ray));
  ray.origin = {1.5f, 0.0f, 0.0f};
  CHECK_FALSE(embree.intersect(ray).valid());
}

TEST_CASE("a mesh shared by two instances keeps each instance's transform", "[rays][embree]") {
  scene::Scene scene;
  test::addQuad(scene, {-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}, glm::vec3(0.5f));
  scene::MeshInstance second;
  second.mesh = 0;
  // Moved to x = 10 and turned so its normal points along +x, scaled by 2.
  second.objectToWorld = glm::translate(glm::mat4(1.0f), glm::vec3(10, 0, 0)) *
                         glm::rotate(glm::mat4(1.0f), glm::radians(90.0f), glm::vec3(0, 1, 0)) *
                         glm::scale(glm::mat4(1.0f), glm::vec3(2.0f));
  scene.instances.push_back(second);
  scene.finalize();
  const EmbreeScene embree(scene);
  CHECK(embree.triangleCount() == 4);
  CHECK(embree.instancedMeshCount() == 1);

  Ray ray;
  ray.origin = {0.0f, 0.0f, -5.0f};
  ray.direction = {0.0f, 0.0f, 1.0f};
  Hit hit = embree.intersect(ray);
  REQUIRE(hit.valid());
  CHECK(hit.instance == 0);
  CHECK(hit.t == Approx(5.0f));

  ray.origin = {20.0f, 1.5f, 1.5f};  // inside the scaled copy (half size 2), outside the original
  ray.direction = {-1.0f, 0.0f, 0.0f};
  hit = embree.intersect(ray);
  REQUIRE(hit.valid());
  CHECK(hit.instance == 1);
  CHECK(hit.t == Approx(10.0f));
  const SurfacePoint point = embree.surface(ray, hit);
  CHECK(point.position.x == Approx(10.0f).margin(1e-5));
  CHECK(std::abs(point.geometricNormal.x) == Approx(1.0f));
  CHECK(point.frontFacing == (point.geometricNormal.x > 0.0f));
}

TEST_CASE("ray streams give the same answers as single rays", "[rays][embree]") {
  const scene::Scene scene = test::makeCornellBox();
  const EmbreeScene embree(scene);
  CHECK(embree.triangleCount() == 32);
  std::vector<Ray> rays(1000);
  for (std::uint32_t i = 0; i < rays.size(); ++i) {
    rays[i].origin = glm::vec3(278.0f, 274.0f, 280.0f) + glm::vec3(sobolPair(i, 3, 0) - 0.5f, 0.0f) * 100.0f;
    rays[i].direction = squareToUniformSphere(sobolPair(i, 3, 1));
    rays[i].tFar = (i % 2) ? 200.0f : kInfinity;
  }
  std::vector<Hit> hits(rays.size());
  std::vector<std::uint8_t> blocked(rays.size());
  embree.intersect(rays, hits);
  embree.occluded(rays, blocked);
  int misses = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const Hit single = embree.intersect(rays[i]);
    REQUIRE(single.valid() == hits[i].valid());
    if (!single.valid()) {
      if (rays[i].tFar == kInfinity) ++misses;
      continue;
    }
    CHECK(single.instance == hits[i].instance);
    CHECK(single.triangle == hits[i].triangle);
    CHECK(single.t == hits[i].t);
    CHECK(bool(blocked[i]) == embree.occluded(rays[i]));
    CHECK(bool(blocked[i]) == (single.t < rays[i].tFar));
  }
  // The box is open at z = 0 only: from near its centre that side covers 16% of the sphere
  // (4·atan(ab/(d·sqrt(a²+b²+d²))) with a = 278, b = 274, d = 280), so ≈ 82 of the 500 unbounded rays leave.
  CHECK(misses > 50);
  CHECK(misses < 120);
}

TEST_CASE("a scene without triangles is refused with a message", "[rays][embree]") {
  scene::Scene scene;
  scene.finalize();
  CHECK_THROWS_AS(EmbreeScene(scene), Error);
}

TEST_CASE("the direct shadow mask marks the umbra of an occluder and leaves lit points out", "[rays][embree]") {
  // A 40 × 40 plane z = 0 under a 0.5 × 0.4 light at z = 1 facing down, and a black slab at
  // z = 0.5 over x ∈ [0.5, 1.5]: from (2, 0, 0) every light point is seen through the slab
  // (x = (2 + l_x)/2 ∈ [0.875, 1.125] at z = 0.5), from (−2, 0, 0) none is.
  scene::Scene scene;
  const float h = 20.0f;
  test::addQuad(scene, {-h, -h, 0.0f}, {h, -h, 0.0f}, {h, h, 0.0f}, {-h, h, 0.0f}, glm::vec3(0.5f), glm::vec3(0.0f),
                "plane");
  test::addQuad(scene, {-0.25f, -0.2f, 1.0f}, {-0.25f, 0.2f, 1.0f}, {0.25f, 0.2f, 1.0f}, {0.25f, -0.2f, 1.0f},
                glm::vec3(0.0f), glm::vec3(10.0f), "light");
  test::addQuad(scene, {0.5f, -1.0f, 0.5f}, {1.5f, -1.0f, 0.5f}, {1.5f, 1.0f, 0.5f}, {0.5f, 1.0f, 0.5f},
                glm::vec3(0.0f), glm::vec3(0.0f), "slab");
  scene::Camera camera;  // straight down from z = 5, 60° (half-width 5·tan 30° = 2.887 at the plane)
  camera.name = "down";
  camera.eye = glm::vec3(0.0f, 0.0f, 5.0f);
  camera.target = glm::vec3(0.0f);
  camera.up = glm::vec3(0.0f, 1.0f, 0.0f);
  camera.verticalFovDegrees = 60.0f;
  scene.cameras.push_back(camera);
  scene.finalize();
  const EmbreeScene embree(scene);
  constexpr int kSize = 64;
  const std::vector<std::uint8_t> shadow = directShadowMask(embree, scene.camera("down"), kSize, kSize);
  REQUIRE(shadow.size() == std::size_t(kSize * kSize));
  // Pixel of a plane point (x, 0, 0): x_pixel = (x / 2.887 + 1) / 2 · 64.
  const auto pixelOf = [&](float x) {
    const float ndc = x / (5.0f * std::tan(glm::radians(30.0f)));
    return int((ndc + 1.0f) * 0.5f * float(kSize));
  };
  const auto at = [&](int px) { return shadow[std::size_t(kSize / 2) * kSize + std::size_t(px)]; };
  // glm::lookAt looking down −z with up +y: right = forward × up = (0,0,−1) × (0,1,0) = (1, 0, 0).
  CHECK(at(pixelOf(2.0f)) == 1);   // the umbra
  CHECK(at(pixelOf(-2.0f)) == 0);  // lit
  CHECK(at(pixelOf(1.0f)) == 0);   // the slab's top (hit at x = 0.9, z = 0.5), facing the light
}

TEST_CASE("the emitter mask takes a pixel that an emitter's edge covers only a sliver of", "[rays][embree]") {
  // Camera at z = 5 looking down −z with a 90° field (64 × 64: image x = (X/5 + 1) · 32). An
  // emitter quad on z = 0 from X = −4.5 to X = −3.4297, whose right edge lies at image
  // x = 10.05: pixel 9 is covered, pixel 10 by a twentieth (between its 4 × 4 rays at 10.125,
  // 10.375, …), pixel 11 not at all. A grey plane at z = −1 behind.
  scene::Scene scene;
  test::addQuad(scene, {-20, -20, -1}, {20, -20, -1}, {20, 20, -1}, {-20, 20, -1}, glm::vec3(0.5f), glm::vec3(0.0f),
                "back");
  const float right = (10.05f / 32.0f - 1.0f) * 5.0f;
  test::addQuad(scene, {-4.5f, -1, 0}, {right, -1, 0}, {right, 1, 0}, {-4.5f, 1, 0}, glm::vec3(0.0f), glm::vec3(17.0f),
                "light");
  scene::Camera camera;
  camera.name = "front";
  camera.eye = glm::vec3(0.0f, 0.0f, 5.0f);
  camera.target = glm::vec3(0.0f);
  camera.verticalFovDegrees = 90.0f;
  scene.cameras.push_back(camera);
  scene.finalize();
  const EmbreeScene embree(scene);
  const std::vector<std::uint8_t> mask = maskOutEmitters(embree, scene.camera("front"), 64, 64);
  const std::size_t row = 32 * 64;
  CHECK(mask[row + 9] == 0);
  CHECK(mask[row + 10] == 0);  // the sliver
  CHECK(mask[row + 11] == 1);
  CHECK(mask[row + 40] == 1);
  std::size_t masked = 0;
  for (const std::uint8_t m : mask) masked += m == 0 ? 1 : 0;
  CHECK(masked < 64 * 64 / 4);
}

TEST_CASE("a shadow ray to a light ends on the light sample itself: a lamp inside other geometry is hidden",
          "[rays][embree]") {
  // A lamp at y = 5 facing down, half of it (x > 0) a hair inside a stone slab whose underside is at y = 5 − δ,
  // δ below both of the old shadow ray's gaps (the end moved ε off the lamp, the last 1e-5 of the length).
  scene::Scene scene;
  test::addQuad(scene, {-1, 5, -1}, {1, 5, -1}, {1, 5, 1}, {-1, 5, 1}, glm::vec3(0.0f), glm::vec3(10.0f), "lamp");
  test::addQuad(scene, {-10, 0, -10}, {-10, 0, 10}, {10, 0, 10}, {10, 0, -10}, glm::vec3(0.5f), glm::vec3(0.0f),
                "floor");
  const float delta = 2e-5f;
  test::addQuad(scene, {0, 5 - delta, -2}, {2, 5 - delta, -2}, {2, 5 - delta, 2}, {0, 5 - delta, 2}, glm::vec3(0.5f),
                glm::vec3(0.0f), "stone");
  scene.finalize();
  const EmbreeScene embree(scene);
  REQUIRE(delta < embree.epsilon());
  const glm::vec3 down(0, -1, 0);

  const glm::vec3 floorPoint(0.5f, 1e-3f, 0.0f);
  const glm::vec3 inside(0.5f, 5.0f, 0.2f), outside(-0.5f, 5.0f, 0.2f);
  CHECK(embree.visible(floorPoint, inside + embree.epsilon() * down));  // the old ray let it through
  CHECK_FALSE(embree.visibleLight(floorPoint, inside, down));
  CHECK(embree.visibleLight(floorPoint, outside, down));

  // Every sample of the free half is visible, from overhead down to grazing angles (cos θ at the lamp ≈ 0.01),
  // and every sample of the half in the stone is hidden, from floor points on either side.
  int wronglyHidden = 0, wronglyShown = 0;
  for (int i = 0; i < 400; ++i) {
    const float u = (float(i % 20) + 0.5f) / 20.0f, v = (float(i / 20) + 0.5f) / 20.0f;
    const glm::vec3 free(-1.0f + 0.999f * u, 5.0f, -1.0f + 2.0f * v), buried(0.001f + 0.999f * u, 5.0f, -1.0f + 2.0f * v);
    for (const glm::vec3& from : {glm::vec3(-0.5f, 1e-3f, 0.0f), glm::vec3(-9.0f, 4.9f, 0.0f), floorPoint}) {
      if (!embree.visibleLight(from, free, down)) ++wronglyHidden;
      if (embree.visibleLight(from, buried, down)) ++wronglyShown;
    }
  }
  CHECK(wronglyHidden == 0);
  CHECK(wronglyShown == 0);

  // A point light (no normal): any hit before it blocks, nothing beyond it does.
  CHECK(embree.visibleLight(floorPoint, glm::vec3(0.5f, 4.0f, 0.0f), glm::vec3(0.0f)));
  CHECK_FALSE(embree.visibleLight(floorPoint, glm::vec3(0.5f, 5.5f, 0.0f), glm::vec3(0.0f)));
  CHECK_FALSE(embree.visibleLight(floorPoint, floorPoint, down));  // zero length
}
