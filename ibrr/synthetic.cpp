#include "ibrr/synthetic.hpp"

#include "ibrr/error.hpp"

#include <glm/gtc/constants.hpp>

#include <algorithm>
#include <cmath>

namespace ibrr::synthetic {

int AnalyticScene::addQuad(const Quad& quad) {
  m_quads.push_back(quad);
  return static_cast<int>(m_quads.size()) - 1;
}

void AnalyticScene::addRoom(const glm::vec3& lo, const glm::vec3& hi) {
  const glm::vec3 e = hi - lo;
  const glm::vec3 x(e.x, 0, 0), y(0, e.y, 0), z(0, 0, e.z);
  // cross(x, y) = +z, cross(y, z) = +x, cross(z, x) = +y; normals point into the room.
  addQuad({lo, y, z});      // x = lo, normal +x
  addQuad({lo + x, z, y});  // x = hi, normal -x
  addQuad({lo, z, x});      // y = lo (floor), normal +y
  addQuad({lo + y, x, z});  // y = hi (ceiling), normal -y
  addQuad({lo, x, y});      // z = lo, normal +z
  addQuad({lo + z, y, x});  // z = hi, normal -z
}

void AnalyticScene::addBox(const glm::vec3& lo, const glm::vec3& hi) {
  const glm::vec3 e = hi - lo;
  const glm::vec3 x(e.x, 0, 0), y(0, e.y, 0), z(0, 0, e.z);
  addQuad({lo, z, y});      // x = lo, normal -x
  addQuad({lo + x, y, z});  // x = hi, normal +x
  addQuad({lo, x, z});      // y = lo, normal -y
  addQuad({lo + y, z, x});  // y = hi, normal +y
  addQuad({lo, y, x});      // z = lo, normal -z
  addQuad({lo + z, x, y});  // z = hi, normal +z
}

std::optional<Hit> AnalyticScene::intersect(const glm::vec3& origin, const glm::vec3& dir, float tMax,
                                            float tMin) const {
  std::optional<Hit> best;
  float bestT = tMax;
  for (std::size_t k = 0; k < m_quads.size(); ++k) {
    const Quad& q = m_quads[k];
    const glm::vec3 n = glm::cross(q.edgeU, q.edgeV);
    const float denom = glm::dot(dir, n);
    if (std::fabs(denom) < 1e-20f) continue;
    const float t = glm::dot(q.origin - origin, n) / denom;
    if (!(t > tMin && t < bestT)) continue;
    const glm::vec3 p = origin + t * dir;
    const glm::vec3 rel = p - q.origin;
    const float a = glm::dot(rel, q.edgeU) / glm::dot(q.edgeU, q.edgeU);
    const float b = glm::dot(rel, q.edgeV) / glm::dot(q.edgeV, q.edgeV);
    if (a < 0.0f || a > 1.0f || b < 0.0f || b > 1.0f) continue;
    bestT = t;
    best = Hit{t, p, glm::normalize(n), static_cast<int>(k), denom < 0.0f};
  }
  return best;
}

Aabb AnalyticScene::bounds() const {
  Aabb box{glm::vec3(1e30f), glm::vec3(-1e30f)};
  for (const Quad& q : m_quads)
    for (const glm::vec3& c : {q.origin, q.origin + q.edgeU, q.origin + q.edgeV, q.origin + q.edgeU + q.edgeV}) {
      box.lo = glm::min(box.lo, c);
      box.hi = glm::max(box.hi, c);
    }
  return box;
}

HemicubeSamples renderHemicube(const AnalyticScene& scene, const PointLight& light, int resolution) {
  IBRR_CHECK(resolution >= 2 && resolution % 2 == 0, "a hemicube resolution must be even and at least 2");
  const glm::vec3 n = glm::normalize(light.normal);
  const glm::vec3 t = std::fabs(n.x) < 0.9f ? glm::normalize(glm::cross(n, glm::vec3(1, 0, 0)))
                                            : glm::normalize(glm::cross(n, glm::vec3(0, 1, 0)));
  const glm::vec3 b = glm::cross(n, t);
  const float pixelSide = 2.0f / static_cast<float>(resolution);
  HemicubeSamples out;
  out.centre = light.position;
  out.reserve(static_cast<std::size_t>(3 * resolution * resolution));
  const float invPi = glm::one_over_pi<float>();
  // Face = (axis, across, up): direction = axis + x·across + y·up over the face's pixel grid.
  auto renderFace = [&](const glm::vec3& axis, const glm::vec3& across, const glm::vec3& up, int rows, float yStart) {
    for (int j = 0; j < rows; ++j) {
      const float y = yStart + (static_cast<float>(j) + 0.5f) * pixelSide;
      for (int i = 0; i < resolution; ++i) {
        const float x = -1.0f + (static_cast<float>(i) + 0.5f) * pixelSide;
        const glm::vec3 dir = glm::normalize(axis + x * across + y * up);
        const auto hit = scene.intersect(light.position, dir);
        if (!hit || !hit->front) continue;
        const float r = hit->t;
        const float cosX = -glm::dot(dir, hit->normal);
        const float cosI = glm::dot(dir, n);
        if (cosX <= 0.0f || cosI <= 0.0f) continue;
        const float solidAngle = hemicubePixelSolidAngle(x, y, pixelSide);
        out.add(hit->position, hit->normal, light.intensity * (cosX * cosI * invPi / (r * r)),
                footprintArea(solidAngle, r, cosX));
      }
    }
  };
  renderFace(n, t, b, resolution, -1.0f);  // top: full face
  // Side faces: only their upper half (towards n) lies in the hemisphere; y = height along n in [0, 1].
  renderFace(t, b, n, resolution / 2, 0.0f);
  renderFace(-t, -b, n, resolution / 2, 0.0f);
  renderFace(b, -t, n, resolution / 2, 0.0f);
  renderFace(-b, t, n, resolution / 2, 0.0f);
  return out;
}

glm::vec3 analyticRadiosity(const AnalyticScene& scene, const PointLight& light, const glm::vec3& p,
                            const glm::vec3& n) {
  const glm::vec3 toLight = light.position - p;
  const float r = glm::length(toLight);
  if (!(r > 0.0f)) return glm::vec3(0.0f);
  const glm::vec3 l = toLight / r;
  const float cosX = glm::dot(n, l);
  const float cosI = -glm::dot(glm::normalize(light.normal), l);
  if (cosX <= 0.0f || cosI <= 0.0f) return glm::vec3(0.0f);
  // Hidden when something lies between the light and p (p's own quad is met at t ≈ r).
  if (scene.intersect(light.position, -l, r * (1.0f - 1e-4f))) return glm::vec3(0.0f);
  return light.intensity * (cosX * cosI / (glm::pi<float>() * r * r));
}

}  // namespace ibrr::synthetic
