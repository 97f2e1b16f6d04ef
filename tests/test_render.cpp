// G-buffer views of the Cornell box against a CPU ray caster and the box's known layout.
#include "display/gbuffer.hpp"
#include "app/methods.hpp"
#include "display/render_methods.hpp"
#include "gpu/shader.hpp"
#include "gpu/supersample.hpp"
#include "rays/test_scenes.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"
#include "util/supersample.hpp"

#include <catch2/catch.hpp>

#include <glm/gtc/epsilon.hpp>

using namespace ibrr;

namespace {
const display::RenderSettings kNoSettings;

// Mean of a rectangle of pixels (fractions of the image size).
glm::vec3 meanOver(const Image& image, float x0, float x1, float y0, float y1) {
  glm::vec3 sum(0.0f);
  int count = 0;
  for (int y = int(y0 * image.height); y < int(y1 * image.height); ++y)
    for (int x = int(x0 * image.width); x < int(x1 * image.width); ++x, ++count) sum += image.at(x, y);
  return sum / float(std::max(count, 1));
}
}  // namespace

TEST_CASE("albedo render of the Cornell camera: red wall left, green wall right, matching a CPU ray cast",
          "[gpu][render]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const scene::Camera& camera = scene.camera("cornell");
  const int size = 128;
  const Image image =
      app::findRenderMethod("albedo").render({scene, camera, size, size, kNoSettings}).image;
  // Given the scene's geometry already on the GPU (as the viewer and ibrr compare share theirs), the method
  // uploads nothing and draws the same picture.
  const gpu::SceneRenderer geometry(scene);
  const std::uint64_t uploads = gpu::SceneRenderer::uploads();
  CHECK(app::findRenderMethod("albedo").render({scene, camera, size, size, kNoSettings, &geometry}).image.pixels ==
        image.pixels);
  CHECK(gpu::SceneRenderer::uploads() == uploads);
  const glm::vec3 red(0.63f, 0.065f, 0.05f), green(0.14f, 0.45f, 0.091f), white(0.725f, 0.71f, 0.68f);
  // Pixel checks: a patch on each side wall at mid height, the back wall and the floor.
  CHECK(glm::all(glm::epsilonEqual(meanOver(image, 0.04f, 0.08f, 0.45f, 0.55f), red, 1e-3f)));
  CHECK(glm::all(glm::epsilonEqual(meanOver(image, 0.92f, 0.96f, 0.45f, 0.55f), green, 1e-3f)));
  CHECK(glm::all(glm::epsilonEqual(meanOver(image, 0.45f, 0.55f, 0.3f, 0.4f), white, 1e-3f)));
  // The whole picture against the ray caster: pixels may differ only along silhouettes, where
  // rasterisation and ray casting may pick different triangles (≤ 3% of pixels).
  const Image expected = test::rayCast(scene, camera, size, size, test::CastProperty::Albedo);
  const test::ImageComparison comparison =
      test::compareImages(image, expected, 1e-3f, 0.03, test::outputDir("cornell_albedo"), "cornell_albedo");
  INFO(comparison.report);
  CHECK(comparison.passed);
}

TEST_CASE("emission view shows the light's radiance and nothing else", "[gpu][render]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Image image =
      app::findRenderMethod("emission").render({scene, scene.camera(""), 96, 96, kNoSettings}).image;
  int lightPixels = 0;
  for (const glm::vec3& pixel : image.pixels) {
    if (pixel == glm::vec3(0.0f)) continue;
    CHECK(pixel == glm::vec3(17.0f, 12.0f, 4.0f));
    ++lightPixels;
  }
  // The light seen from below: a small trapezoid near the top (about 1.5% of the picture).
  CHECK(lightPixels > int(0.005 * image.pixels.size()));
  CHECK(lightPixels < int(0.03 * image.pixels.size()));
  const Image expected = test::rayCast(scene, scene.camera(""), 96, 96, test::CastProperty::Emission);
  // Only the light's outline may differ (its perimeter is ~60 of 9216 pixels).
  const test::ImageComparison comparison =
      test::compareImages(image, expected, 1e-3f, 0.01, test::outputDir("cornell_emission"), "cornell_emission");
  INFO(comparison.report);
  CHECK(comparison.passed);
}

TEST_CASE("normal view: floor up, back wall towards the camera, red wall towards -x", "[gpu][render]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Image image =
      app::findRenderMethod("normal").render({scene, scene.camera(""), 96, 96, kNoSettings}).image;
  auto decoded = [](const glm::vec3& encoded) { return 2.0f * encoded - 1.0f; };
  CHECK(glm::all(glm::epsilonEqual(decoded(meanOver(image, 0.45f, 0.55f, 0.93f, 0.97f)), glm::vec3(0, 1, 0), 1e-3f)));
  CHECK(glm::all(glm::epsilonEqual(decoded(meanOver(image, 0.45f, 0.55f, 0.3f, 0.4f)), glm::vec3(0, 0, -1), 1e-3f)));
  const glm::vec3 redWall = decoded(meanOver(image, 0.04f, 0.08f, 0.45f, 0.55f));
  CHECK(redWall.x < -0.99f);
}

TEST_CASE("supersampling by N takes N² samples a pixel on a rotated grid: an edge 0.3 of a pixel in covers 3 of 4",
          "[gpu][render]") {
  test::glContext();
  // A white quad at z = −1 seen by a 90° camera at the origin, 8×8 pixels: its left edge at x = 0.075 lies 0.3 of
  // a pixel into column 4 (column c spans x ∈ [−1 + c/4, −1 + (c + 1)/4]).
  scene::Scene scene;
  rays::test::addQuad(scene, {0.075f, -5, -1}, {5, -5, -1}, {5, 5, -1}, {0.075f, 5, -1}, glm::vec3(1.0f));
  scene.finalize();
  scene::Camera camera;
  camera.eye = glm::vec3(0.0f);
  camera.target = glm::vec3(0, 0, -1);
  camera.verticalFovDegrees = 90.0f;
  const int size = 8;
  // The samples' x in column 4 (pixels): 4.5 at N = 1; 4 + {1, 3, 5, 7}/8 at N = 2 (the ordered 2×2 grid would
  // put two at 4.25 and two at 4.75, 0.5 covered); 4 + (k + ½)/16 at N = 4. Those right of 4.3 see the quad.
  const std::pair<int, float> expected[] = {{1, 1.0f}, {2, 0.75f}, {4, 11.0f / 16.0f}};
  for (const auto& [n, edgeColumn] : expected) {
    display::RenderOutput output = app::findRenderMethod("albedo").render(
        {scene, camera, size * n, size * n, kNoSettings, nullptr, n});
    const Image image = resolveSupersampled(output.image, n);
    INFO("N = " << n);
    for (int y = 0; y < size; ++y) {
      for (int x = 0; x < 4; ++x) CHECK(image.at(x, y) == glm::vec3(0.0f));
      CHECK(image.at(4, y) == glm::vec3(edgeColumn));
      for (int x = 5; x < size; ++x) CHECK(image.at(x, y) == glm::vec3(1.0f));
    }
  }
}

TEST_CASE("a supersampled frame's tiles filter the albedo textures over a sample's share of the pixel",
          "[gpu][render]") {
  test::glContext();
  const gpu::Program program = gpu::loadProgram({"scene.vert", "gbuffer.frag"});
  // Each of a tile's samples stands for 1/N of a pixel a side: the texture level drops by log2 N while the tiles
  // are drawn (a frame drawn at N times the size would have it so), and is back at 0 afterwards.
  for (int n : {1, 2, 4}) {
    std::vector<float> biases;
    gpu::drawSupersampleTiles(program.id(), glm::mat4(1.0f), 8 * n, 8 * n, n, [&](const glm::mat4&) {
      float bias = 1.0f;
      glGetUniformfv(program.id(), IBRR_U_TEXTURE_LOD_BIAS, &bias);
      biases.push_back(bias);
    });
    INFO("N = " << n);
    CHECK(biases == std::vector<float>(std::size_t(n * n), -std::log2(float(n))));
    float after = 1.0f;
    glGetUniformfv(program.id(), IBRR_U_TEXTURE_LOD_BIAS, &after);
    CHECK(after == 0.0f);
  }
}

TEST_CASE("the render-method table refuses unknown names with the list", "[render]") {
  CHECK(app::findRenderMethod("albedo").name == "albedo");
  CHECK_THROWS_WITH(app::findRenderMethod("albdeo"), Catch::Contains("ibrr, keller, albedo, normal, emission"));
}
