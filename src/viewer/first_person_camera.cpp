#include "viewer/first_person_camera.hpp"

#include <glm/gtc/constants.hpp>

#include <algorithm>
#include <cmath>

namespace ibrr::viewer {

FirstPersonCamera::FirstPersonCamera(float sceneDiagonal)
    : m_speed(kWalkDiagonalsPerSecond * std::max(sceneDiagonal, 1e-6f)),
      m_minSpeed(1e-4f * m_speed),
      m_maxSpeed(1e3f * m_speed) {}

void FirstPersonCamera::setCamera(const scene::Camera& camera) { m_camera = camera; }

void FirstPersonCamera::move(const glm::vec3& local, float seconds, bool run) {
  if (local == glm::vec3(0.0f) || seconds <= 0.0f) return;
  const glm::vec3 forward = glm::normalize(m_camera.target - m_camera.eye);
  const glm::vec3 right = glm::normalize(glm::cross(forward, m_camera.up));
  const glm::vec3 up = glm::normalize(m_camera.up);
  const glm::vec3 direction = local.x * right + local.y * up + local.z * forward;
  const glm::vec3 step = direction * (m_speed * (run ? kRunFactor : 1.0f) * seconds);
  m_camera.eye += step;
  m_camera.target += step;
  m_camera.name = "walk";
}

void FirstPersonCamera::turn(float dxPixels, float dyPixels) {
  if (dxPixels == 0.0f && dyPixels == 0.0f) return;
  // Spherical angles of the view direction about the up axis: yaw in the plane ⟂ up, pitch from it.
  const glm::vec3 up = glm::normalize(m_camera.up);
  const glm::vec3 offset = m_camera.target - m_camera.eye;
  const float focus = glm::length(offset);
  const glm::vec3 forward = offset / focus;
  // A reference frame in the plane ⟂ up: any axis not parallel to up.
  const glm::vec3 helper = std::abs(up.z) < 0.9f ? glm::vec3(0, 0, 1) : glm::vec3(1, 0, 0);
  const glm::vec3 east = glm::normalize(glm::cross(up, helper));
  const glm::vec3 north = glm::cross(east, up);
  float pitch = std::asin(std::clamp(glm::dot(forward, up), -1.0f, 1.0f));
  float yaw = std::atan2(glm::dot(forward, east), glm::dot(forward, north));
  // Screen right is cross(forward, up), towards decreasing yaw: mouse right turns right.
  yaw -= dxPixels * kRadiansPerPixel;
  pitch = std::clamp(pitch - dyPixels * kRadiansPerPixel, -kMaxPitchRadians, kMaxPitchRadians);
  const glm::vec3 turned = std::cos(pitch) * (std::sin(yaw) * east + std::cos(yaw) * north) + std::sin(pitch) * up;
  m_camera.target = m_camera.eye + focus * turned;
  m_camera.name = "walk";
}

void FirstPersonCamera::scaleSpeed(float wheelSteps) {
  m_speed = std::clamp(m_speed * std::pow(kScrollFactor, wheelSteps), m_minSpeed, m_maxSpeed);
}

}  // namespace ibrr::viewer
