#pragma once
// Ray queries against a scene with Embree 3: closest hit and occlusion, one ray at a time or as a
// stream (rtcIntersect1M / rtcOccluded1M, which pays for coherent batches such as camera rays).
//
// A mesh placed by exactly one instance is put into the top-level BVH with its vertices in world
// space (fastest traversal); a mesh shared by several instances is built once and placed by Embree
// instances that keep their objectToWorld transforms. Either way a hit names the scene's instance
// and the triangle's index in that instance's mesh.
//
// The object is immutable after construction and every query is thread-safe.
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <span>

namespace ibrr::rays {

inline constexpr float kInfinity = std::numeric_limits<float>::infinity();
inline constexpr std::uint32_t kNoHit = 0xffffffffU;

struct Ray {
  glm::vec3 origin{0.0f};
  glm::vec3 direction{0.0f, 0.0f, 1.0f};  // need not be unit; t is in units of |direction|
  float tNear = 0.0f;
  float tFar = kInfinity;
};

struct Hit {
  float t = kInfinity;
  float u = 0.0f, v = 0.0f;  // barycentrics of vertices 1 and 2 (vertex 0 has 1 − u − v)
  std::uint32_t instance = kNoHit;
  std::uint32_t triangle = kNoHit;  // index in the instance's mesh
  [[nodiscard]] bool valid() const { return instance != kNoHit; }
};

// What a hit means for light transport, in world space.
struct SurfacePoint {
  glm::vec3 position{0.0f};
  glm::vec3 geometricNormal{0.0f};  // unit, the winding's front side (counter-clockwise)
  glm::vec3 shadingNormal{0.0f};    // unit, interpolated, on the same side as geometricNormal
  bool frontFacing = false;         // the ray arrived on the front side (dot(Ng, direction) < 0)
  glm::vec3 albedo{0.0f};           // ρ, material albedo × texture
  glm::vec3 emission{0.0f};         // L_e of the material, emitted from the front side only
  std::uint32_t material = 0;
  std::uint32_t instance = kNoHit;
  std::uint32_t triangle = kNoHit;
};

class EmbreeScene {
public:
  // Builds the BVH. Throws ibrr::Error if the scene has no triangles or Embree fails. The scene
  // must outlive this object (its meshes and materials are read at every hit).
  explicit EmbreeScene(const scene::Scene& scene);
  ~EmbreeScene();
  EmbreeScene(const EmbreeScene&) = delete;
  EmbreeScene& operator=(const EmbreeScene&) = delete;

  [[nodiscard]] Hit intersect(const Ray& ray) const;
  // True if anything lies on the ray within (tNear, tFar).
  [[nodiscard]] bool occluded(const Ray& ray) const;
  // True if nothing lies on the segment from `from` to `to`, its last 1e-5 of the length left out (the
  // shadow ray of next-event estimation: `from` offset off its surface, `to` off the light's); false for a
  // segment of zero length.
  [[nodiscard]] bool visible(const glm::vec3& from, const glm::vec3& to) const;
  // True if nothing blocks the shadow ray from `from` (offset off its own surface) to the light sample `onLight`,
  // right up to the sample: no stretch before the light is left out, so a lamp that pierces other geometry is
  // hidden wherever it lies inside it. For an emitter (lightNormal its unit normal) the first hit must be an
  // emissive surface in the sample's plane (the emitter itself, or the other triangle of its quad); for a point or
  // spot light (lightNormal zero) any hit before the light blocks it. False for a segment of zero length.
  [[nodiscard]] bool visibleLight(const glm::vec3& from, const glm::vec3& onLight, const glm::vec3& lightNormal) const;
  // Streams; `coherent` tells Embree the rays start near each other and point alike.
  void intersect(std::span<const Ray> rays, std::span<Hit> hits, bool coherent = false) const;
  void occluded(std::span<const Ray> rays, std::span<std::uint8_t> blocked, bool coherent = false) const;

  [[nodiscard]] SurfacePoint surface(const Ray& ray, const Hit& hit) const;

  // A distance, in scene units, to offset ray origins from surfaces and shorten shadow rays by,
  // so that a ray does not hit the surface it leaves (≈ 1e-5 of the scene's size and position).
  [[nodiscard]] float epsilon() const { return m_epsilon; }
  // Origin offset off a surface towards the side `direction` leaves into.
  [[nodiscard]] glm::vec3 offsetOrigin(const SurfacePoint& point, const glm::vec3& direction) const {
    const float side = glm::dot(point.geometricNormal, direction) >= 0.0f ? 1.0f : -1.0f;
    return point.position + (side * m_epsilon) * point.geometricNormal;
  }

  [[nodiscard]] const scene::Scene& scene() const { return m_scene; }
  [[nodiscard]] std::size_t triangleCount() const { return m_triangleCount; }
  [[nodiscard]] double buildSeconds() const { return m_buildSeconds; }
  [[nodiscard]] std::size_t instancedMeshCount() const { return m_instancedMeshes; }

private:
  struct Impl;
  const scene::Scene& m_scene;
  std::unique_ptr<Impl> m_impl;
  std::size_t m_triangleCount = 0;
  std::size_t m_instancedMeshes = 0;
  double m_buildSeconds = 0.0;
  float m_epsilon = 1e-4f;
};

}  // namespace ibrr::rays
