#pragma once
// Primary rays of a scene camera (a pinhole with a vertical field of view), in image coordinates
// with x to the right and y down from the top row, the same framing as Camera::view() and
// Camera::projection() give the rasterizer.
#include "rays/embree_scene.hpp"
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <vector>

namespace ibrr::rays {

class PinholeCamera {
public:
  PinholeCamera(const scene::Camera& camera, int width, int height);
  // A ray through the continuous image position (x, y) ∈ [0, width] × [0, height]; pixel (i, j)
  // covers [i, i+1] × [j, j+1]. The direction is unit length.
  [[nodiscard]] Ray generate(glm::vec2 imagePosition) const;
  // The inverse: the image position of a world point; false when it is not in front of the eye.
  [[nodiscard]] bool project(const glm::vec3& point, glm::vec2& imagePosition) const;

private:
  glm::vec3 m_eye, m_right, m_up, m_forward;
  float m_tanHalfHeight, m_tanHalfWidth;
  int m_width, m_height;
};

// One byte per pixel (row 0 at the top): 1 where the pixel should be compared, 0 where it shows
// an emitter (metrics exclude emitters): any of 4×4 sub-pixel primary rays sees the front of an
// emitter, or the pixel square overlaps the projection of an emitter triangle facing the camera
// and borders a pixel the rays found (an edge that covers a sliver of a pixel, between the rays,
// still puts a radiance of 17 into a reference pixel's box filter).
std::vector<std::uint8_t> maskOutEmitters(const EmbreeScene& embree, const scene::Camera& camera, int width,
                                          int height);

// One byte per pixel (row 0 at the top): 1 where the surface the pixel's centre sees is in the
// direct light's shadow, 0 where it is lit: in shadow when less than half of the direct
// irradiance it would receive without occluders arrives, or none would (lit only by reflected
// light). Both irradiances are estimated with the same `samples` stratified points on the lights
// (chosen in proportion to their power, as the path tracer's next-event estimation; a point or
// spot light is its position). Pixels that see nothing or a light are 0. Throws ibrr::Error when
// the scene has no light.
std::vector<std::uint8_t> directShadowMask(const EmbreeScene& embree, const scene::Camera& camera, int width,
                                           int height, int samples = 64);

}  // namespace ibrr::rays
