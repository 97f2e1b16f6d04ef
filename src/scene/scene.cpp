#include "scene/scene.hpp"

#include "util/error.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <cstring>

namespace ibrr::scene {

glm::mat4 Camera::view() const { return glm::lookAt(eye, target, up); }

glm::mat4 Camera::projection(float aspect, float nearPlane, float farPlane) const {
  // perspectiveRH_ZO maps its first plane to depth 0 and its second to 1: given (far, near), depth is 1 at the
  // near plane and 0 at the far one. x, y and w are those of the usual projection.
  return glm::perspectiveRH_ZO(glm::radians(verticalFovDegrees), aspect, farPlane, nearPlane);
}

void Scene::finalize() {
  m_bounds = Bounds{};
  m_emitters.clear();
  for (std::uint32_t instanceIndex = 0; instanceIndex < instances.size(); ++instanceIndex) {
    const MeshInstance& instance = instances[instanceIndex];
    const TriangleMesh& mesh = meshes.at(instance.mesh);
    for (const glm::vec3& p : mesh.positions) m_bounds.extend(glm::vec3(instance.objectToWorld * glm::vec4(p, 1.0f)));
    for (std::uint32_t t = 0; t < mesh.triangles.size(); ++t) {
      const Material& material = materials.at(mesh.triangleMaterials.at(t));
      if (!material.isEmissive()) continue;
      EmissiveTriangle emitter;
      const glm::uvec3& tri = mesh.triangles[t];
      emitter.v0 = glm::vec3(instance.objectToWorld * glm::vec4(mesh.positions[tri.x], 1.0f));
      emitter.v1 = glm::vec3(instance.objectToWorld * glm::vec4(mesh.positions[tri.y], 1.0f));
      emitter.v2 = glm::vec3(instance.objectToWorld * glm::vec4(mesh.positions[tri.z], 1.0f));
      const glm::vec3 cross = glm::cross(emitter.v1 - emitter.v0, emitter.v2 - emitter.v0);
      const float twiceArea = glm::length(cross);
      if (!(twiceArea > 0.0f)) continue;
      emitter.normal = cross / twiceArea;
      emitter.area = 0.5f * twiceArea;
      emitter.radiance = material.emission;
      // Lambertian emitter: exitance M = π·L, power Φ = M·A (front side only).
      emitter.power = glm::pi<float>() * material.emission * emitter.area;
      emitter.instance = instanceIndex;
      emitter.triangle = t;
      m_emitters.push_back(emitter);
    }
  }
  if (cameras.empty()) {
    // Frame the bounds from the -z side, as the Cornell camera does.
    Camera framing;
    framing.name = "default";
    framing.verticalFovDegrees = 45.0f;
    const glm::vec3 center = m_bounds.isEmpty() ? glm::vec3(0.0f) : m_bounds.center();
    const float radius = std::max(0.5f * m_bounds.diagonal(), 1e-3f);
    const float distance = radius / std::tan(glm::radians(0.5f * framing.verticalFovDegrees));
    framing.target = center;
    framing.eye = center - glm::vec3(0.0f, 0.0f, distance);
    cameras.push_back(framing);
  }
}

std::size_t Scene::triangleCount() const {
  std::size_t count = 0;
  for (const MeshInstance& instance : instances) count += meshes.at(instance.mesh).triangles.size();
  return count;
}

double Scene::surfaceArea() const {
  double area = 0.0;
  for (const MeshInstance& instance : instances) {
    const TriangleMesh& mesh = meshes[instance.mesh];
    for (const glm::uvec3& t : mesh.triangles) {
      glm::dvec3 p[3];
      for (int k = 0; k < 3; ++k) p[k] = glm::dvec3(instance.objectToWorld * glm::vec4(mesh.positions[t[k]], 1.0f));
      area += 0.5 * glm::length(glm::cross(p[1] - p[0], p[2] - p[0]));
    }
  }
  return area;
}

glm::vec3 Scene::emittedPower() const {
  glm::vec3 power(0.0f);
  for (const EmissiveTriangle& emitter : m_emitters) power += emitter.power;
  // A point light radiates I in all directions: Φ = 4π·I.
  for (const PointLight& light : pointLights) power += 4.0f * glm::pi<float>() * light.intensity;
  // A spot light: Φ = 2π·I·∫ profile(cosθ) dcosθ; the smoothstep ramp between cosOuter and
  // cosInner integrates to half its width.
  for (const SpotLight& light : spotLights) {
    const float coneIntegral = (1.0f - light.cosInner) + 0.5f * (light.cosInner - light.cosOuter);
    power += 2.0f * glm::pi<float>() * light.intensity * coneIntegral;
  }
  return power;
}

const Camera& Scene::camera(const std::string& name) const {
  if (cameras.empty()) throw Error("scene has no camera (call finalize())");
  if (name.empty()) return cameras.front();
  std::string known;
  for (const Camera& candidate : cameras) {
    if (candidate.name == name) return candidate;
    known += (known.empty() ? "" : ", ") + candidate.name;
  }
  throw Error("no camera named '" + name + "' in " + (sourcePath.empty() ? "the scene" : sourcePath.string()) +
              "; cameras: " + known);
}

namespace {

// FNV-1a, 64 bit: enough to tell scenes apart, not a cryptographic hash.
struct Fnv1a {
  std::uint64_t state = 1469598103934665603ull;
  void add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) state = (state ^ bytes[i]) * 1099511628211ull;
  }
  template <class T>
  void addVector(const std::vector<T>& values) {
    const std::uint64_t count = values.size();
    add(&count, sizeof count);
    if (!values.empty()) add(values.data(), values.size() * sizeof(T));
  }
};

}  // namespace

std::uint64_t Scene::fingerprint() const {
  Fnv1a hash;
  for (const MeshInstance& instance : instances) {
    const TriangleMesh& mesh = meshes.at(instance.mesh);
    hash.add(&instance.objectToWorld, sizeof instance.objectToWorld);
    hash.addVector(mesh.positions);
    hash.addVector(mesh.triangles);
    hash.addVector(mesh.triangleMaterials);
  }
  for (const Material& material : materials) {
    hash.add(&material.albedo, sizeof material.albedo);
    hash.add(&material.emission, sizeof material.emission);
    hash.add(&material.albedoTexture, sizeof material.albedoTexture);
  }
  for (const PointLight& light : pointLights) {
    hash.add(&light.position, sizeof light.position);
    hash.add(&light.intensity, sizeof light.intensity);
  }
  for (const SpotLight& light : spotLights) {
    hash.add(&light.position, sizeof light.position);
    hash.add(&light.direction, sizeof light.direction);
    hash.add(&light.intensity, sizeof light.intensity);
    hash.add(&light.cosInner, sizeof light.cosInner);
    hash.add(&light.cosOuter, sizeof light.cosOuter);
  }
  return hash.state;
}

}  // namespace ibrr::scene
