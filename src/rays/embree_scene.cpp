#include "rays/embree_scene.hpp"

#include "util/error.hpp"

#include <embree3/rtcore.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

namespace ibrr::rays {

namespace {

// Streams are issued in chunks so the RTCRayHit scratch stays in cache and on the stack's side.
constexpr std::size_t kStreamChunk = 256;

void embreeErrorCallback(void* userPtr, RTCError code, const char* message) {
  auto* text = static_cast<std::string*>(userPtr);
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (text->empty()) *text = "Embree error " + std::to_string(int(code)) + ": " + (message ? message : "");
}

RTCRay toRtcRay(const Ray& ray) {
  RTCRay r{};
  r.org_x = ray.origin.x;
  r.org_y = ray.origin.y;
  r.org_z = ray.origin.z;
  r.tnear = ray.tNear;
  r.dir_x = ray.direction.x;
  r.dir_y = ray.direction.y;
  r.dir_z = ray.direction.z;
  r.time = 0.0f;
  r.tfar = ray.tFar;
  r.mask = 0xffffffffU;
  r.id = 0;
  r.flags = 0;
  return r;
}

RTCRayHit toRtcRayHit(const Ray& ray) {
  RTCRayHit rh{};
  rh.ray = toRtcRay(ray);
  rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
  rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
  return rh;
}

Hit fromRtcHit(const RTCRayHit& rh) {
  Hit hit;
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return hit;
  hit.t = rh.ray.tfar;
  hit.u = rh.hit.u;
  hit.v = rh.hit.v;
  // Top-level geometries are attached with the scene's instance index as their ID, both the
  // flattened meshes and the Embree instances (whose child scene has a single geometry 0).
  hit.instance = rh.hit.instID[0] != RTC_INVALID_GEOMETRY_ID ? rh.hit.instID[0] : rh.hit.geomID;
  hit.triangle = rh.hit.primID;
  return hit;
}

// x wrapped into [0, size).
int wrapIndex(int x, int size) {
  x %= size;
  return x < 0 ? x + size : x;
}

// Bilinear lookup with wrapping. Texture coordinates follow OpenGL/OBJ: v = 0 is the bottom row,
// while the texels are stored with row 0 at the top.
glm::vec3 sampleTexture(const scene::Texture& texture, glm::vec2 uv) {
  if (texture.width <= 0 || texture.height <= 0 || texture.texels.empty()) return glm::vec3(1.0f);
  const float x = uv.x * float(texture.width) - 0.5f;
  const float y = (1.0f - uv.y) * float(texture.height) - 0.5f;
  const float fx = std::floor(x), fy = std::floor(y);
  const float ax = x - fx, ay = y - fy;
  // Wrapped once, not at each of the four texels (a division each).
  const int x0 = wrapIndex(int(fx), texture.width), y0 = wrapIndex(int(fy), texture.height);
  const int x1 = x0 + 1 == texture.width ? 0 : x0 + 1, y1 = y0 + 1 == texture.height ? 0 : y0 + 1;
  auto texel = [&](int i, int j) {
    return texture.texels[std::size_t(j) * std::size_t(texture.width) + std::size_t(i)];
  };
  const glm::vec3 top = glm::mix(texel(x0, y0), texel(x1, y0), ax);
  const glm::vec3 bottom = glm::mix(texel(x0, y1), texel(x1, y1), ax);
  return glm::mix(top, bottom, ay);
}

}  // namespace

struct EmbreeScene::Impl {
  RTCDevice device = nullptr;
  RTCScene scene = nullptr;
  std::vector<RTCScene> meshScenes;  // per mesh shared by several instances, else null
  std::vector<glm::mat3> normalToWorld;  // per instance: inverse transpose of the linear part
  std::string error;

  ~Impl() {
    for (RTCScene child : meshScenes)
      if (child) rtcReleaseScene(child);
    if (scene) rtcReleaseScene(scene);
    if (device) rtcReleaseDevice(device);
  }
};

namespace {

RTCGeometry newTriangleGeometry(RTCDevice device, const scene::TriangleMesh& mesh, const glm::mat4* toWorld) {
  RTCGeometry geometry = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
  auto* vertices = static_cast<float*>(rtcSetNewGeometryBuffer(geometry, RTC_BUFFER_TYPE_VERTEX, 0,
                                                               RTC_FORMAT_FLOAT3, 3 * sizeof(float),
                                                               mesh.positions.size()));
  auto* indices = static_cast<std::uint32_t*>(rtcSetNewGeometryBuffer(
      geometry, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(std::uint32_t), mesh.triangles.size()));
  if (!vertices || !indices) {
    rtcReleaseGeometry(geometry);
    return nullptr;
  }
  for (std::size_t i = 0; i < mesh.positions.size(); ++i) {
    const glm::vec3 p = toWorld ? glm::vec3(*toWorld * glm::vec4(mesh.positions[i], 1.0f)) : mesh.positions[i];
    vertices[3 * i + 0] = p.x;
    vertices[3 * i + 1] = p.y;
    vertices[3 * i + 2] = p.z;
  }
  for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
    indices[3 * t + 0] = mesh.triangles[t].x;
    indices[3 * t + 1] = mesh.triangles[t].y;
    indices[3 * t + 2] = mesh.triangles[t].z;
  }
  rtcCommitGeometry(geometry);
  return geometry;
}

}  // namespace

EmbreeScene::EmbreeScene(const scene::Scene& scene) : m_scene(scene), m_impl(std::make_unique<Impl>()) {
  const auto start = std::chrono::steady_clock::now();
  const std::string where = scene.sourcePath.empty() ? std::string("the scene") : scene.sourcePath.string();
  m_triangleCount = scene.triangleCount();
  if (m_triangleCount == 0) throw Error(where + " has no triangles to trace; give it at least one mesh");

  Impl& impl = *m_impl;
  impl.device = rtcNewDevice(nullptr);
  if (!impl.device) throw Error("Embree could not create a device (error " + std::to_string(int(rtcGetDeviceError(nullptr))) + ")");
  rtcSetDeviceErrorFunction(impl.device, embreeErrorCallback, &impl.error);

  std::vector<int> instanceCount(scene.meshes.size(), 0);
  for (const scene::MeshInstance& instance : scene.instances) {
    if (instance.mesh >= scene.meshes.size())
      throw Error(where + ": an instance names mesh " + std::to_string(instance.mesh) + " which does not exist");
    ++instanceCount[instance.mesh];
  }
  impl.meshScenes.assign(scene.meshes.size(), nullptr);
  impl.scene = rtcNewScene(impl.device);
  rtcSetSceneBuildQuality(impl.scene, RTC_BUILD_QUALITY_MEDIUM);

  for (std::uint32_t i = 0; i < scene.instances.size(); ++i) {
    const scene::MeshInstance& instance = scene.instances[i];
    const scene::TriangleMesh& mesh = scene.meshes[instance.mesh];
    impl.normalToWorld.push_back(glm::transpose(glm::inverse(glm::mat3(instance.objectToWorld))));
    if (mesh.triangles.empty()) continue;
    for (const glm::uvec3& tri : mesh.triangles) {
      if (tri.x >= mesh.positions.size() || tri.y >= mesh.positions.size() || tri.z >= mesh.positions.size())
        throw Error(where + ": mesh '" + mesh.name + "' has a triangle with a vertex index out of range");
    }
    RTCGeometry geometry = nullptr;
    if (instanceCount[instance.mesh] == 1) {
      geometry = newTriangleGeometry(impl.device, mesh, &instance.objectToWorld);
    } else {
      RTCScene& child = impl.meshScenes[instance.mesh];
      if (!child) {
        child = rtcNewScene(impl.device);
        RTCGeometry triangles = newTriangleGeometry(impl.device, mesh, nullptr);
        if (!triangles) throw Error("Embree: " + impl.error);
        rtcAttachGeometryByID(child, triangles, 0);
        rtcReleaseGeometry(triangles);
        rtcCommitScene(child);
        ++m_instancedMeshes;
      }
      geometry = rtcNewGeometry(impl.device, RTC_GEOMETRY_TYPE_INSTANCE);
      rtcSetGeometryInstancedScene(geometry, child);
      rtcSetGeometryTransform(geometry, 0, RTC_FORMAT_FLOAT4X4_COLUMN_MAJOR, &instance.objectToWorld[0][0]);
      rtcCommitGeometry(geometry);
    }
    if (!geometry) throw Error("Embree: " + impl.error);
    rtcAttachGeometryByID(impl.scene, geometry, i);
    rtcReleaseGeometry(geometry);
  }
  rtcCommitScene(impl.scene);
  if (!impl.error.empty()) throw Error("building the Embree scene for " + where + " failed: " + impl.error);

  // Offsets in float: a few ulps of the largest coordinate plus a tiny fraction of the size.
  const scene::Bounds& bounds = scene.bounds();
  const float magnitude = bounds.isEmpty() ? 1.0f
                                           : std::max(glm::length(glm::max(glm::abs(bounds.min), glm::abs(bounds.max))),
                                                      bounds.diagonal());
  m_epsilon = std::max(1e-5f * magnitude, 1e-7f);
  m_buildSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

EmbreeScene::~EmbreeScene() = default;

Hit EmbreeScene::intersect(const Ray& ray) const {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRayHit rh = toRtcRayHit(ray);
  rtcIntersect1(m_impl->scene, &context, &rh);
  return fromRtcHit(rh);
}

bool EmbreeScene::occluded(const Ray& ray) const {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRay r = toRtcRay(ray);
  rtcOccluded1(m_impl->scene, &context, &r);
  return r.tfar < 0.0f;  // Embree sets tfar to −∞ on a hit
}

bool EmbreeScene::visible(const glm::vec3& from, const glm::vec3& to) const {
  const glm::vec3 d = to - from;
  const float distance = glm::length(d);
  if (!(distance > 0.0f)) return false;
  Ray segment;
  segment.origin = from;
  segment.direction = d / distance;
  segment.tFar = distance * (1.0f - 1e-5f);
  return !occluded(segment);
}

bool EmbreeScene::visibleLight(const glm::vec3& from, const glm::vec3& onLight, const glm::vec3& lightNormal) const {
  const glm::vec3 d = onLight - from;
  const float distance = glm::length(d);
  if (!(distance > 0.0f)) return false;
  const bool pointLight = lightNormal == glm::vec3(0.0f);
  Ray ray;
  ray.origin = from;
  ray.direction = d / distance;
  // A point light is reached at t = distance; an emitter's own surface must be found, so the ray runs a little past.
  ray.tFar = pointLight ? distance : distance + 4.0f * m_epsilon;
  if (pointLight) return !occluded(ray);
  const Hit hit = intersect(ray);
  if (!hit.valid()) return true;  // the sample's own triangle missed by rounding at a grazing angle
  const glm::vec3 at = ray.origin + hit.t * ray.direction;
  if (std::fabs(glm::dot(at - onLight, lightNormal)) > m_epsilon) return false;  // before the light's plane
  const scene::TriangleMesh& mesh = m_scene.meshes[m_scene.instances[hit.instance].mesh];
  const std::uint32_t material = hit.triangle < mesh.triangleMaterials.size() ? mesh.triangleMaterials[hit.triangle] : 0;
  return glm::any(glm::greaterThan(m_scene.materials[material].emission, glm::vec3(0.0f)));
}

void EmbreeScene::intersect(std::span<const Ray> rays, std::span<Hit> hits, bool coherent) const {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  context.flags = coherent ? RTC_INTERSECT_CONTEXT_FLAG_COHERENT : RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT;
  RTCRayHit scratch[kStreamChunk];
  for (std::size_t begin = 0; begin < rays.size(); begin += kStreamChunk) {
    const std::size_t count = std::min(kStreamChunk, rays.size() - begin);
    for (std::size_t i = 0; i < count; ++i) scratch[i] = toRtcRayHit(rays[begin + i]);
    rtcIntersect1M(m_impl->scene, &context, scratch, unsigned(count), sizeof(RTCRayHit));
    for (std::size_t i = 0; i < count; ++i) hits[begin + i] = fromRtcHit(scratch[i]);
  }
}

void EmbreeScene::occluded(std::span<const Ray> rays, std::span<std::uint8_t> blocked, bool coherent) const {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  context.flags = coherent ? RTC_INTERSECT_CONTEXT_FLAG_COHERENT : RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT;
  RTCRay scratch[kStreamChunk];
  for (std::size_t begin = 0; begin < rays.size(); begin += kStreamChunk) {
    const std::size_t count = std::min(kStreamChunk, rays.size() - begin);
    for (std::size_t i = 0; i < count; ++i) scratch[i] = toRtcRay(rays[begin + i]);
    rtcOccluded1M(m_impl->scene, &context, scratch, unsigned(count), sizeof(RTCRay));
    for (std::size_t i = 0; i < count; ++i) blocked[begin + i] = scratch[i].tfar < 0.0f ? 1 : 0;
  }
}

SurfacePoint EmbreeScene::surface(const Ray& ray, const Hit& hit) const {
  SurfacePoint point;
  point.instance = hit.instance;
  point.triangle = hit.triangle;
  const scene::MeshInstance& instance = m_scene.instances[hit.instance];
  const scene::TriangleMesh& mesh = m_scene.meshes[instance.mesh];
  const glm::uvec3 tri = mesh.triangles[hit.triangle];
  const float b0 = 1.0f - hit.u - hit.v;

  // Position and geometric normal from the world-space vertices (exact for any affine transform,
  // mirrored ones included, and the same construction Scene::finalize() uses for emitters).
  const glm::mat4& toWorld = instance.objectToWorld;
  const glm::vec3 p0 = glm::vec3(toWorld * glm::vec4(mesh.positions[tri.x], 1.0f));
  const glm::vec3 p1 = glm::vec3(toWorld * glm::vec4(mesh.positions[tri.y], 1.0f));
  const glm::vec3 p2 = glm::vec3(toWorld * glm::vec4(mesh.positions[tri.z], 1.0f));
  point.position = b0 * p0 + hit.u * p1 + hit.v * p2;
  const glm::vec3 cross = glm::cross(p1 - p0, p2 - p0);
  const float length = glm::length(cross);
  point.geometricNormal = length > 0.0f ? cross / length : -glm::normalize(ray.direction);
  point.frontFacing = glm::dot(point.geometricNormal, ray.direction) < 0.0f;

  point.shadingNormal = point.geometricNormal;
  if (mesh.normals.size() == mesh.positions.size()) {
    const glm::vec3 n = b0 * mesh.normals[tri.x] + hit.u * mesh.normals[tri.y] + hit.v * mesh.normals[tri.z];
    const glm::vec3 world = m_impl->normalToWorld[hit.instance] * n;
    const float worldLength = glm::length(world);
    if (worldLength > 0.0f) {
      point.shadingNormal = world / worldLength;
      // Keep the shading normal on the side of the winding's normal.
      if (glm::dot(point.shadingNormal, point.geometricNormal) < 0.0f) point.shadingNormal = -point.shadingNormal;
    }
  }

  point.material = hit.triangle < mesh.triangleMaterials.size() ? mesh.triangleMaterials[hit.triangle] : 0;
  const scene::Material& material = m_scene.materials[point.material];
  point.albedo = material.albedo;
  point.emission = material.emission;
  if (material.albedoTexture >= 0 && std::size_t(material.albedoTexture) < m_scene.textures.size() &&
      mesh.texcoords.size() == mesh.positions.size()) {
    const glm::vec2 uv = b0 * mesh.texcoords[tri.x] + hit.u * mesh.texcoords[tri.y] + hit.v * mesh.texcoords[tri.z];
    point.albedo *= sampleTexture(m_scene.textures[std::size_t(material.albedoTexture)], uv);
  }
  point.albedo = glm::clamp(point.albedo, glm::vec3(0.0f), glm::vec3(1.0f));
  return point;
}

}  // namespace ibrr::rays
