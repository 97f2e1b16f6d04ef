#include "rays/pinhole.hpp"

#include <tbb/parallel_for.h>

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
  return mask;
}

}  // namespace ibrr::rays
