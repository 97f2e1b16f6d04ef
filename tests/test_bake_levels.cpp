// The bounces' coarser level (`--indirect-ldc R2`, bake/bake.hpp and ibrr::withIndirectLevel): the store's layers
// read it on their own plane, so a surface closer to another than a coarse pixel does not borrow its light.
#include "bake/bake.hpp"
#include "ibrr/octahedral.hpp"
#include "ibrr/store_file.hpp"
#include "rays/test_scenes.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ibrr;

namespace {

// A closed box [−1, 1]³ split at x = 0 by a thin wall: its face towards −x at x = 0, its face towards +x a
// `gap` further; a point light in the left room only. Nothing in the right room can receive light.
scene::Scene splitBox(float gap) {
  scene::Scene scene;
  const glm::vec3 albedo(0.6f);
  const glm::vec3 centre(0.0f);
  auto face = [&](glm::vec3 v0, glm::vec3 v1, glm::vec3 v2, glm::vec3 v3) {
    rays::test::addOrientedQuad(scene, v0, v1, v2, v3, centre - (v0 + v2) * 0.5f, albedo);
  };
  face({-1, -1, -1}, {1, -1, -1}, {1, -1, 1}, {-1, -1, 1});  // floor
  face({-1, 1, -1}, {1, 1, -1}, {1, 1, 1}, {-1, 1, 1});      // ceiling
  face({-1, -1, -1}, {-1, 1, -1}, {-1, 1, 1}, {-1, -1, 1});  // x = −1
  face({1, -1, -1}, {1, 1, -1}, {1, 1, 1}, {1, -1, 1});      // x = +1
  face({-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1});  // z = −1
  face({-1, -1, 1}, {1, -1, 1}, {1, 1, 1}, {-1, 1, 1});      // z = +1
  rays::test::addOrientedQuad(scene, {0, -1, -1}, {0, 1, -1}, {0, 1, 1}, {0, -1, 1}, {-1, 0, 0}, albedo);
  rays::test::addOrientedQuad(scene, {gap, -1, -1}, {gap, 1, -1}, {gap, 1, 1}, {gap, -1, 1}, {1, 0, 0}, albedo);
  scene::PointLight light;
  light.position = {-0.5f, 0.2f, 0.1f};
  light.intensity = glm::vec3(2.0f);
  scene.pointLights.push_back(light);
  scene.finalize();
  return scene;
}

// The bounces only (the direct light left to rays), on two levels: R = 64 and R2 = 32.
bake::BakeOptions twoLevelBake() {
  bake::BakeOptions options;
  options.paths = 256;
  options.maxBounces = 3;
  options.direct = bake::DirectLight::Rays;
  options.biasCompensation = false;
  options.ldcResolution = 64;
  options.indirectLdcResolution = 32;
  options.hemicubeResolution = 32;
  options.indirectHemicubeResolution = 16;
  options.warp = bake::WarpDevice::Cpu;
  return options;
}

}  // namespace

TEST_CASE("the bounces' coarse level: a thin wall's dark face stays dark, its lit face keeps its light",
          "[ibrr][gpu][levels]") {
  test::glContext();
  bake::BakeOptions options = twoLevelBake();
  const scene::Scene scene = splitBox(0.3f * 2.0f / float(options.ldcResolution));  // 0.3 of a fine pixel
  const bake::BakeResult baked = bake::bakeStore(scene, options);
  CHECK(baked.stats.indirectLdcResolution == 32);
  CHECK(baked.stats.indirectLevelWrites > 0);
  CHECK(baked.stats.indirectLevelWrites == baked.stats.pixelWrites);  // the store's level has no hemicube
  // The wall's two faces share every LDI-x pixel and its coarse pixels too, a fraction of a pixel apart.
  const LdcFrame& frame = baked.store.frame();
  int litFace = 0, darkFace = 0, darkFaceLit = 0;
  double litSum = 0.0;
  for (std::uint32_t pixel = 0; pixel < frame.pixelsPerLdi(); ++pixel)  // LDI x
    for (const PackedLayer& layer : baked.store.pixelLayers(pixel)) {
      const glm::vec3 n = octDecode(layer.normal);
      if (std::fabs(layer.d) > 0.1f * frame.pixelSize() &&
          std::fabs(layer.d - 0.3f * frame.pixelSize()) > 0.1f * frame.pixelSize())
        continue;  // another surface than the wall
      if (n.x < -0.99f) {
        ++litFace;
        litSum += layer.r;
      } else if (n.x > 0.99f) {
        ++darkFace;
        if (layer.r != 0.0f || layer.g != 0.0f || layer.b != 0.0f) ++darkFaceLit;
      }
    }
  INFO(litFace << " layers on the lit face (mean " << litSum / std::max(litFace, 1) << "), " << darkFace
               << " on the dark face, " << darkFaceLit << " of them with light");
  CHECK(litFace > 3000);
  CHECK(darkFace > 3000);
  CHECK(litSum / litFace > 0.01);
  CHECK(darkFaceLit == 0);
}

TEST_CASE("the bounces' level at the store's own R is one level: the store equals the one-level bake's, byte for byte",
          "[ibrr][gpu][levels]") {
  test::glContext();
  const scene::Scene scene = splitBox(0.01f);
  bake::BakeOptions options = twoLevelBake();
  options.indirectLdcResolution = options.ldcResolution;
  const bake::BakeResult same = bake::bakeStore(scene, options);
  options.indirectLdcResolution = 0;
  const bake::BakeResult one = bake::bakeStore(scene, options);
  CHECK(same.stats.indirectLdcResolution == 0);
  CHECK(serializeStore(same.store) == serializeStore(one.store));
}
