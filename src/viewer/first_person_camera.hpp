#pragma once
// The viewer's first-person camera: WASD moves in the view plane, the mouse turns (yaw about the
// camera's up axis, pitch limited short of the poles), Shift runs, the scroll wheel scales the
// speed. The state is a scene::Camera, so a camera set from the manifest or a script is rendered
// exactly as `ibrr render` renders it: moving translates eye and target together, turning
// rewrites the target one focus distance ahead of the eye.
#include "scene/scene.hpp"

namespace ibrr::viewer {

class FirstPersonCamera {
public:
  // sceneDiagonal: the scene bounds' diagonal (scene units); the walking speed is a fixed
  // fraction of it per second, so a millimetre Cornell box and a metre conference room feel alike.
  explicit FirstPersonCamera(float sceneDiagonal);

  void setCamera(const scene::Camera& camera);
  [[nodiscard]] const scene::Camera& camera() const { return m_camera; }

  // local: the requested direction in the camera frame (x right, y up, z forward), each in
  // [-1, 1]; moves |local| · speed · seconds, times kRunFactor when running.
  void move(const glm::vec3& local, float seconds, bool run);
  // Turns by a mouse motion of (dx, dy) pixels (dy > 0 = down): kRadiansPerPixel each.
  void turn(float dxPixels, float dyPixels);
  // Multiplies the speed by kScrollFactor per wheel step (steps may be fractional or negative).
  void scaleSpeed(float wheelSteps);

  [[nodiscard]] float speed() const { return m_speed; }  // scene units per second, walking

  static constexpr float kWalkDiagonalsPerSecond = 0.2f;  // default speed: a fifth of the diagonal per second
  static constexpr float kRunFactor = 4.0f;
  static constexpr float kScrollFactor = 1.25f;
  static constexpr float kRadiansPerPixel = 0.003f;
  static constexpr float kMaxPitchRadians = 1.55f;  // ≈ 88.8°: keeps forward off the up axis

private:
  scene::Camera m_camera;
  float m_speed;
  float m_minSpeed;
  float m_maxSpeed;
};

}  // namespace ibrr::viewer
