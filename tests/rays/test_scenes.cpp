#include "test_scenes.hpp"

#include <cmath>
#include <numbers>

namespace ibrr::rays::test {

void addQuad(scene::Scene& scene, glm::vec3 v0, glm::vec3 v1, glm::vec3 v2, glm::vec3 v3, glm::vec3 albedo,
             glm::vec3 emission, const char* name) {
  scene::Material material;
  material.name = name;
  material.albedo = albedo;
  material.emission = emission;
  scene.materials.push_back(material);
  scene::TriangleMesh mesh;
  mesh.name = name;
  mesh.positions = {v0, v1, v2, v3};
  mesh.triangles = {glm::uvec3(0, 1, 2), glm::uvec3(0, 2, 3)};
  const auto materialIndex = std::uint32_t(scene.materials.size() - 1);
  mesh.triangleMaterials = {materialIndex, materialIndex};
  scene.meshes.push_back(mesh);
  scene::MeshInstance instance;
  instance.mesh = std::uint32_t(scene.meshes.size() - 1);
  scene.instances.push_back(instance);
}

void addOrientedQuad(scene::Scene& scene, glm::vec3 v0, glm::vec3 v1, glm::vec3 v2, glm::vec3 v3, glm::vec3 towards,
                     glm::vec3 albedo, glm::vec3 emission, const char* name) {
  const glm::vec3 n = glm::cross(v1 - v0, v2 - v0);
  if (glm::dot(n, towards) < 0.0f)
    addQuad(scene, v3, v2, v1, v0, albedo, emission, name);
  else
    addQuad(scene, v0, v1, v2, v3, albedo, emission, name);
}

scene::Scene makeFurnace(float albedo, glm::vec3 emission) {
  scene::Scene scene;
  const glm::vec3 a(albedo);
  const glm::vec3 c(0.0f);
  const float s = 1.0f;
  auto face = [&](glm::vec3 v0, glm::vec3 v1, glm::vec3 v2, glm::vec3 v3) {
    addOrientedQuad(scene, v0, v1, v2, v3, c - (v0 + v2) * 0.5f, a, emission, "furnace");
  };
  face({-s, -s, -s}, {s, -s, -s}, {s, -s, s}, {-s, -s, s});   // floor
  face({-s, s, -s}, {s, s, -s}, {s, s, s}, {-s, s, s});       // ceiling
  face({-s, -s, -s}, {-s, s, -s}, {-s, s, s}, {-s, -s, s});   // x = −1
  face({s, -s, -s}, {s, s, -s}, {s, s, s}, {s, -s, s});       // x = +1
  face({-s, -s, -s}, {s, -s, -s}, {s, s, -s}, {-s, s, -s});   // z = −1
  face({-s, -s, s}, {s, -s, s}, {s, s, s}, {-s, s, s});       // z = +1
  scene::Camera camera;
  camera.name = "inside";
  camera.eye = glm::vec3(0.1f, -0.2f, 0.05f);
  camera.target = camera.eye + glm::vec3(0.3f, 0.2f, 1.0f);
  camera.verticalFovDegrees = 90.0f;
  scene.cameras.push_back(camera);
  scene.finalize();
  return scene;
}

scene::Scene makePlaneUnderDeltaLight(bool spot) {
  scene::Scene scene;
  addQuad(scene, {-20, -20, 0}, {20, -20, 0}, {20, 20, 0}, {-20, 20, 0}, glm::vec3(0.5f));
  if (spot) {
    scene::SpotLight light;
    light.position = {0, 0, 1};
    light.direction = {0, 0, -1};
    light.intensity = glm::vec3(3.0f);
    light.cosInner = 0.6f;
    light.cosOuter = 0.5f;
    scene.spotLights.push_back(light);
  } else {
    scene::PointLight light;
    light.position = {0, 0, 1};
    light.intensity = glm::vec3(3.0f);
    scene.pointLights.push_back(light);
  }
  scene.finalize();
  return scene;
}

scene::Scene makePlaneUnderLight(const PlaneUnderLight& setup) {
  scene::Scene scene;
  const float h = 20.0f;
  addQuad(scene, {-h, -h, 0.0f}, {h, -h, 0.0f}, {h, h, 0.0f}, {-h, h, 0.0f}, setup.albedo, glm::vec3(0.0f), "plane");
  // Counter-clockwise seen from below, so the light faces −z.
  addQuad(scene, {setup.x0, setup.y0, setup.height}, {setup.x0, setup.y1, setup.height},
          {setup.x1, setup.y1, setup.height}, {setup.x1, setup.y0, setup.height}, glm::vec3(0.0f), setup.radiance,
          "light");
  scene::Camera camera;
  camera.name = "above";
  camera.eye = glm::vec3(0.0f, -3.0f, 0.5f);
  camera.target = glm::vec3(0.0f, 0.0f, 0.0f);
  camera.verticalFovDegrees = 40.0f;
  scene.cameras.push_back(camera);
  scene.finalize();
  return scene;
}

double formFactor(const PlaneUnderLight& setup, double x, double y) {
  const double c = setup.height;
  // Corner term: the form factor to a rectangle a × b with one corner straight above the point
  // (Howell C-11), F = 1/(2π)·[A/√(1+A²)·atan(B/√(1+A²)) + B/√(1+B²)·atan(A/√(1+B²))], A = a/c,
  // B = b/c. It is odd in a and in b, so signed corners add up any rectangle.
  auto corner = [c](double a, double b) {
    const double A = a / c, B = b / c;
    const double sa = std::sqrt(1.0 + A * A), sb = std::sqrt(1.0 + B * B);
    return (A / sa * std::atan(B / sa) + B / sb * std::atan(A / sb)) / (2.0 * std::numbers::pi);
  };
  return corner(setup.x1 - x, setup.y1 - y) - corner(setup.x0 - x, setup.y1 - y) - corner(setup.x1 - x, setup.y0 - y) +
         corner(setup.x0 - x, setup.y0 - y);
}

scene::Scene makeCornellBox() {
  scene::Scene scene;
  const glm::vec3 white(0.725f, 0.71f, 0.68f), red(0.63f, 0.065f, 0.05f), green(0.14f, 0.45f, 0.091f);
  const glm::vec3 inside(278.0f, 274.0f, 280.0f);
  auto wall = [&](glm::vec3 v0, glm::vec3 v1, glm::vec3 v2, glm::vec3 v3, glm::vec3 albedo, const char* name) {
    addOrientedQuad(scene, v0, v1, v2, v3, inside - 0.25f * (v0 + v1 + v2 + v3), albedo, glm::vec3(0.0f), name);
  };
  wall({552.8f, 0, 0}, {0, 0, 0}, {0, 0, 559.2f}, {549.6f, 0, 559.2f}, white, "floor");
  wall({556.0f, 548.8f, 0}, {556.0f, 548.8f, 559.2f}, {0, 548.8f, 559.2f}, {0, 548.8f, 0}, white, "ceiling");
  wall({549.6f, 0, 559.2f}, {0, 0, 559.2f}, {0, 548.8f, 559.2f}, {556.0f, 548.8f, 559.2f}, white, "back");
  wall({0, 0, 559.2f}, {0, 0, 0}, {0, 548.8f, 0}, {0, 548.8f, 559.2f}, green, "right");
  wall({552.8f, 0, 0}, {549.6f, 0, 559.2f}, {556.0f, 548.8f, 559.2f}, {556.0f, 548.8f, 0}, red, "left");
  addOrientedQuad(scene, {343.0f, 548.7f, 227.0f}, {343.0f, 548.7f, 332.0f}, {213.0f, 548.7f, 332.0f},
                  {213.0f, 548.7f, 227.0f}, {0, -1, 0}, glm::vec3(0.78f), glm::vec3(17.0f, 12.0f, 4.0f), "light");
  auto block = [&](const glm::vec3 (&top)[4], float height) {
    glm::vec3 centre(0.0f);
    for (const glm::vec3& p : top) centre += 0.25f * p;
    centre.y = 0.5f * height;
    addOrientedQuad(scene, top[0], top[1], top[2], top[3], {0, 1, 0}, white, glm::vec3(0.0f), "block");
    for (int i = 0; i < 4; ++i) {
      const glm::vec3 a = top[i], b = top[(i + 1) % 4];
      const glm::vec3 a0(a.x, 0, a.z), b0(b.x, 0, b.z);
      addOrientedQuad(scene, a0, a, b, b0, 0.25f * (a0 + a + b + b0) - centre, white, glm::vec3(0.0f), "block");
    }
  };
  const glm::vec3 shortTop[4] = {{130, 165, 65}, {82, 165, 225}, {240, 165, 272}, {290, 165, 114}};
  const glm::vec3 tallTop[4] = {{423, 330, 247}, {265, 330, 296}, {314, 330, 456}, {472, 330, 406}};
  block(shortTop, 165.0f);
  block(tallTop, 330.0f);
  scene::Camera camera;
  camera.name = "cornell";
  camera.eye = glm::vec3(278.0f, 273.0f, -800.0f);
  camera.target = glm::vec3(278.0f, 273.0f, 0.0f);
  camera.verticalFovDegrees = 39.3077f;
  scene.cameras.push_back(camera);
  scene.finalize();
  return scene;
}

}  // namespace ibrr::rays::test
