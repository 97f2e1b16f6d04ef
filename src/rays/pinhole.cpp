#include "rays/pinhole.hpp"

#include "rays/light_set.hpp"
#include "rays/warp.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

namespace ibrr::rays {

PinholeCamera::PinholeCamera(const scene::Camera& camera, int width, int height)
    : m_eye(camera.eye), m_width(width), m_height(height) {
  m_forward = glm::normalize(camera.target - camera.eye);
  // glm::lookAt's frame: right = forward × up, true up = right × forward.
  m_right = glm::normalize(glm::cross(m_forward, camera.up));
  m_up = glm::cross(m_right, m_forward);
  m_tanHalfHeight = std::tan(0.5f * glm::radians(camera.verticalFovDegrees));
  m_tanHalfWidth = m_tanHalfHeight * float(width) / float(height);
}

Ray PinholeCamera::generate(glm::vec2 imagePosition) const {
  // Normalised device coordinates in [−1, 1], +y up.
  const float ndcX = 2.0f * imagePosition.x / float(m_width) - 1.0f;
  const float ndcY = 1.0f - 2.0f * imagePosition.y / float(m_height);
  Ray ray;
  ray.origin = m_eye;
  ray.direction = glm::normalize(m_forward + (ndcX * m_tanHalfWidth) * m_right + (ndcY * m_tanHalfHeight) * m_up);
  return ray;
}

bool PinholeCamera::project(const glm::vec3& point, glm::vec2& imagePosition) const {
  const glm::vec3 d = point - m_eye;
  const float depth = glm::dot(d, m_forward);
  if (!(depth > 0.0f)) return false;
  const float ndcX = glm::dot(d, m_right) / (depth * m_tanHalfWidth);
  const float ndcY = glm::dot(d, m_up) / (depth * m_tanHalfHeight);
  imagePosition = glm::vec2((ndcX + 1.0f) * 0.5f * float(m_width), (1.0f - ndcY) * 0.5f * float(m_height));
  return true;
}

namespace {

// Whether the pixel square [x, x+1] × [y, y+1] and the triangle abc (image positions) overlap:
// separating axes, the square's two and the triangle's three edge normals.
bool squareOverlapsTriangle(int x, int y, const glm::vec2& a, const glm::vec2& b, const glm::vec2& c) {
  const glm::vec2 lower{float(x), float(y)}, upper{float(x + 1), float(y + 1)};
  const glm::vec2 boxLower = glm::min(a, glm::min(b, c)), boxUpper = glm::max(a, glm::max(b, c));
  if (boxUpper.x <= lower.x || boxLower.x >= upper.x || boxUpper.y <= lower.y || boxLower.y >= upper.y) return false;
  const glm::vec2 corners[4] = {lower, {upper.x, lower.y}, upper, {lower.x, upper.y}};
  const glm::vec2 triangle[3] = {a, b, c};
  for (int e = 0; e < 3; ++e) {
    const glm::vec2 edge = triangle[(e + 1) % 3] - triangle[e];
    const glm::vec2 normal(-edge.y, edge.x);
    const float third = glm::dot(normal, triangle[(e + 2) % 3] - triangle[e]);  // the inside's sign
    bool anyInside = false;
    for (const glm::vec2& corner : corners)
      if (glm::dot(normal, corner - triangle[e]) * third > 0.0f) anyInside = true;
    if (!anyInside) return false;
  }
  return true;
}

}  // namespace

std::vector<std::uint8_t> maskOutEmitters(const EmbreeScene& embree, const scene::Camera& camera, int width,
                                          int height) {
  const PinholeCamera pinhole(camera, width, height);
  std::vector<std::uint8_t> mask(std::size_t(width) * height, 1);
  constexpr int kSub = 4;
  tbb::parallel_for(0, height, [&](int y) {
    for (int x = 0; x < width; ++x) {
      for (int s = 0; s < kSub * kSub; ++s) {
        const glm::vec2 offset((float(s % kSub) + 0.5f) / kSub, (float(s / kSub) + 0.5f) / kSub);
        const Ray ray = pinhole.generate(glm::vec2(float(x), float(y)) + offset);
        const Hit hit = embree.intersect(ray);
        if (!hit.valid()) continue;
        const SurfacePoint point = embree.surface(ray, hit);
        if (point.frontFacing && glm::any(glm::greaterThan(point.emission, glm::vec3(0.0f)))) {
          mask[std::size_t(y) * width + x] = 0;
          break;
        }
      }
    }
  });
  // Slivers: pixels beside one the rays found that the projection of a front-facing emitter
  // triangle overlaps.
  const std::vector<std::uint8_t> found = mask;
  const auto besideFound = [&](int x, int y) {
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int nx = x + dx, ny = y + dy;
        if (nx >= 0 && ny >= 0 && nx < width && ny < height && found[std::size_t(ny) * width + nx] == 0) return true;
      }
    return false;
  };
  for (const scene::EmissiveTriangle& emitter : embree.scene().emitters()) {
    if (glm::dot(emitter.normal, camera.eye - emitter.v0) <= 0.0f) continue;  // seen from behind
    glm::vec2 a, b, c;
    if (!pinhole.project(emitter.v0, a) || !pinhole.project(emitter.v1, b) || !pinhole.project(emitter.v2, c)) continue;
    const glm::vec2 lower = glm::min(a, glm::min(b, c)), upper = glm::max(a, glm::max(b, c));
    const int x0 = std::max(0, int(std::floor(lower.x))), x1 = std::min(width - 1, int(std::floor(upper.x)));
    const int y0 = std::max(0, int(std::floor(lower.y))), y1 = std::min(height - 1, int(std::floor(upper.y)));
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x)
        if (found[std::size_t(y) * width + x] != 0 && besideFound(x, y) && squareOverlapsTriangle(x, y, a, b, c))
          mask[std::size_t(y) * width + x] = 0;
  }
  return mask;
}

std::vector<std::uint8_t> directShadowMask(const EmbreeScene& embree, const scene::Camera& camera, int width,
                                           int height, int samples) {
  const scene::Scene& scene = embree.scene();
  const LightSet lights(scene, "the shadow mask");
  const PinholeCamera pinhole(camera, width, height);
  const int side = std::max(1, int(std::ceil(std::sqrt(double(samples)))));
  std::vector<std::uint8_t> shadow(std::size_t(width) * height, 0);
  tbb::parallel_for(0, height, [&](int y) {
    for (int x = 0; x < width; ++x) {
      const Ray ray = pinhole.generate(glm::vec2(float(x) + 0.5f, float(y) + 0.5f));
      const Hit hit = embree.intersect(ray);
      if (!hit.valid()) continue;
      const SurfacePoint point = embree.surface(ray, hit);
      if (glm::any(glm::greaterThan(point.emission, glm::vec3(0.0f)))) continue;
      const glm::vec3 normal = point.frontFacing ? point.geometricNormal : -point.geometricNormal;
      // Direct irradiance estimates, without and with occlusion: each sample's E = L_e cosθ_s
      // cosθ_l / (r² p) for a point on an emitter (p = the light's choice probability / its area),
      // I cosθ_s / (r² p) for a point or spot light (mean of RGB).
      double unoccluded = 0.0, arriving = 0.0;
      for (int k = 0; k < side * side; ++k) {
        // A fixed stratified pattern per pixel: cell (k % side, k / side) of the unit square for
        // the light choice and, shifted, for the point on it.
        const glm::vec2 u((float(k % side) + 0.5f) / float(side), (float(k / side) + 0.5f) / float(side));
        const glm::vec2 v(std::fmod(u.x + 0.5f / float(side) + 0.37f, 1.0f), std::fmod(u.y + 0.61f, 1.0f));
        float probability = 0.0f;
        const std::uint32_t light = lights.choose(u.x, probability);
        const std::uint32_t local = lights.localIndex(light);
        glm::vec3 target(0.0f), lightNormal(0.0f), emitted(0.0f);
        float density = probability;  // p, per unit area for an emitter
        switch (lights.kind(light)) {
          case LightKind::Triangle: {
            const scene::EmissiveTriangle& emitter = scene.emitters()[local];
            const glm::vec2 b = squareToTriangleBarycentrics(glm::vec2(u.y, v.x));
            target = b.x * emitter.v0 + b.y * emitter.v1 + (1.0f - b.x - b.y) * emitter.v2;
            lightNormal = emitter.normal;
            emitted = emitter.radiance;
            density = probability / emitter.area;
            break;
          }
          case LightKind::Point:
            target = scene.pointLights[local].position;
            emitted = scene.pointLights[local].intensity;
            break;
          case LightKind::Spot: {
            const scene::SpotLight& spot = scene.spotLights[local];
            target = spot.position;
            const glm::vec3 out = glm::normalize(point.position - target);
            emitted = spot.intensity * spotProfile(spot, glm::dot(glm::normalize(spot.direction), out));
            break;
          }
        }
        const glm::vec3 toLight = target - point.position;
        const float distance = glm::length(toLight);
        if (!(distance > 0.0f) || !(density > 0.0f)) continue;
        const glm::vec3 omega = toLight / distance;
        const float cosSurface = glm::dot(normal, omega);
        const float cosLight = lights.kind(light) == LightKind::Triangle ? -glm::dot(lightNormal, omega) : 1.0f;
        if (cosSurface <= 0.0f || cosLight <= 0.0f) continue;
        const double irradiance =
            double(emitted.r + emitted.g + emitted.b) / 3.0 * cosSurface * cosLight / (double(distance) * distance * density);
        unoccluded += irradiance;
        if (embree.visibleLight(embree.offsetOrigin(point, toLight), target, lightNormal))
          arriving += irradiance;
      }
      shadow[std::size_t(y) * width + x] = (unoccluded <= 0.0 || arriving < 0.5 * unoccluded) ? 1 : 0;
    }
  });
  return shadow;
}

}  // namespace ibrr::rays
