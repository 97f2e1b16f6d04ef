#pragma once
// The scene: meshes with materials, emitters, analytic lights and named cameras, as loaded from a
// JSON manifest (manifest.hpp) or a bare mesh file, or built in code by tests.
//
// Units: positions are in the scene's own length unit (the Cornell box uses millimetres). Colours
// are linear RGB. Emission is a *radiance* (W·sr⁻¹·m⁻² per channel, in scene units), emitted from
// the front face only (the side the counter-clockwise winding's normal points to); the exitance of
// an emitter is π·L and its power π·L·A. Albedo ρ is the Lambertian reflectance in [0, 1].
#include <glm/glm.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace ibrr::scene {

// The largest coordinate (and any manifest number) a scene may hold, world units. Positions, normals and
// the store work in float (largest 3.4e38): within ±1e9, even a fourth power, such as the squared length of
// the cross product of two edges, stays below 1e37, so areas, Embree's rays and the LDC frame stay finite.
// (1e9 mm is 1,000 km.)
inline constexpr float kMaxCoordinate = 1e9f;

// An RGB image in linear floating point, e.g. a diffuse texture converted from sRGB.
struct Texture {
  std::string path;
  int width = 0;
  int height = 0;
  std::vector<glm::vec3> texels;  // row-major, row 0 at the top (as the file stores it)
};

struct Material {
  std::string name;
  glm::vec3 albedo{0.8f};    // diffuse reflectance ρ in [0, 1]
  glm::vec3 emission{0.0f};  // emitted radiance L_e (front side only)
  int albedoTexture = -1;    // index into Scene::textures, multiplies albedo; -1 = none

  [[nodiscard]] bool isEmissive() const { return glm::any(glm::greaterThan(emission, glm::vec3(0.0f))); }
};

// Triangles in the mesh's object space, one material per triangle.
struct TriangleMesh {
  std::string name;                              // file name or manifest name, for messages
  std::vector<glm::vec3> positions;              // per vertex
  std::vector<glm::vec3> normals;                // per vertex, unit length (smooth or flat as the file gives)
  std::vector<glm::vec2> texcoords;              // per vertex, or empty
  std::vector<glm::uvec3> triangles;             // vertex indices
  std::vector<std::uint32_t> triangleMaterials;  // per triangle, index into Scene::materials
};

// A mesh placed in the world. Instances keep their transform so ray queries can instance too.
struct MeshInstance {
  std::uint32_t mesh = 0;         // index into Scene::meshes
  glm::mat4 objectToWorld{1.0f};  // affine
};

// A point light: radiant intensity I (W/sr per channel) in every direction.
struct PointLight {
  std::string name;
  glm::vec3 position{0.0f};
  glm::vec3 intensity{0.0f};
};

// A spot light: intensity I along `direction`, full inside cosInner, smoothly falling to zero at
// cosOuter (smoothstep on the cosine).
struct SpotLight {
  std::string name;
  glm::vec3 position{0.0f};
  glm::vec3 direction{0.0f, -1.0f, 0.0f};  // unit
  glm::vec3 intensity{0.0f};
  float cosInner = 0.9f;
  float cosOuter = 0.8f;
};

// A world-space emissive triangle, derived from the meshes by Scene::finalize().
struct EmissiveTriangle {
  glm::vec3 v0, v1, v2;
  glm::vec3 normal;       // unit geometric normal of the emitting (front) side
  glm::vec3 radiance;     // L_e
  float area = 0.0f;      // world units²
  glm::vec3 power{0.0f};  // Φ = π·L_e·A per channel
  std::uint32_t instance = 0;
  std::uint32_t triangle = 0;  // index in the instance's mesh
};

struct Camera {
  std::string name;
  glm::vec3 eye{0.0f};
  glm::vec3 target{0.0f, 0.0f, 1.0f};
  glm::vec3 up{0.0f, 1.0f, 0.0f};
  float verticalFovDegrees = 45.0f;

  [[nodiscard]] glm::mat4 view() const;
  // Clip space with reversed depth in [0, 1] (1 at the near plane, 0 at the far one), for passes drawn inside a
  // gpu::ReversedDepthPass; near/far chosen by the caller (e.g. from the scene bounds).
  [[nodiscard]] glm::mat4 projection(float aspect, float nearPlane, float farPlane) const;
};

struct Bounds {
  glm::vec3 min{std::numeric_limits<float>::max()};
  glm::vec3 max{-std::numeric_limits<float>::max()};
  void extend(const glm::vec3& p) {
    min = glm::min(min, p);
    max = glm::max(max, p);
  }
  [[nodiscard]] bool isEmpty() const { return min.x > max.x; }
  [[nodiscard]] glm::vec3 extent() const { return isEmpty() ? glm::vec3(0.0f) : max - min; }
  [[nodiscard]] glm::vec3 center() const { return 0.5f * (min + max); }
  [[nodiscard]] float diagonal() const { return glm::length(extent()); }
};

struct ImageSize {
  int width = 512;
  int height = 512;
};

class Scene {
public:
  std::filesystem::path sourcePath;  // manifest or mesh file it came from; empty if built in code
  std::vector<TriangleMesh> meshes;
  std::vector<MeshInstance> instances;
  std::vector<Material> materials;
  std::vector<Texture> textures;
  std::vector<PointLight> pointLights;
  std::vector<SpotLight> spotLights;
  std::vector<Camera> cameras;  // at least one after finalize() (a default framing the bounds)
  ImageSize defaultImageSize;

  // Derives the world bounds and the emissive triangles, and adds a default camera if there is
  // none. Call after changing meshes, instances or materials.
  void finalize();

  [[nodiscard]] const Bounds& bounds() const { return m_bounds; }
  [[nodiscard]] const std::vector<EmissiveTriangle>& emitters() const { return m_emitters; }
  [[nodiscard]] std::size_t triangleCount() const;  // over all instances
  [[nodiscard]] double surfaceArea() const;         // Σ of every instance's triangles' world areas, units²
  [[nodiscard]] glm::vec3 emittedPower() const;     // Σ emitter power + 4π·I of point lights (spots: cone estimate)
  [[nodiscard]] bool hasLights() const { return !m_emitters.empty() || !pointLights.empty() || !spotLights.empty(); }
  // The named camera, or the first one when name is empty. Throws ibrr::Error naming the cameras
  // that exist when no camera has that name.
  [[nodiscard]] const Camera& camera(const std::string& name) const;
  // A 64-bit fingerprint of the geometry and materials: stores and caches baked for one scene
  // refuse to load for another.
  [[nodiscard]] std::uint64_t fingerprint() const;

private:
  Bounds m_bounds;
  std::vector<EmissiveTriangle> m_emitters;
};

}  // namespace ibrr::scene
