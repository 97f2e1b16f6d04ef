#pragma once
// The camera G-buffer: world position, normal, albedo and emission per pixel, rendered on the GPU
// into RGBA32F targets and read back for CPU-side use (views, metrics, CPU reconstruction).
#include "gpu/resources.hpp"
#include "gpu/scene_renderer.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"

namespace ibrr::display {

enum class GBufferChannel { Position = 0, Normal = 1, Albedo = 2, Emission = 3 };

// Near and far planes (scene units) that enclose the scene bounds as seen from the camera.
struct DepthRange {
  float nearPlane;
  float farPlane;
};
DepthRange depthRangeFor(const scene::Scene& scene, const scene::Camera& camera);
// The camera's view-projection for a width × height view of the scene, reversed depth (scene::Camera::projection)
// over depthRangeFor's range: every camera pass (the G-buffer, the lightmap display) draws with it.
glm::mat4 cameraViewProjection(const scene::Scene& scene, const scene::Camera& camera, int width, int height);

class GBuffer {
public:
  GBuffer(int width, int height);

  // Renders the scene from the camera. The shading normal faces the camera; background pixels have
  // position.w = 0 and zero everywhere else. supersample N > 1: the buffer is N×N tiles of the view, each moved
  // by its sub-pixel offset (util/supersample.hpp).
  void render(const gpu::SceneRenderer& renderer, const scene::Scene& scene, const scene::Camera& camera,
              int supersample = 1);

  // Reads one target back as an image (row 0 at the top). Position/normal/albedo/emission .rgb.
  [[nodiscard]] Image read(GBufferChannel channel) const;
  // Covered-pixel mask (1 where geometry was drawn), row 0 at the top.
  [[nodiscard]] std::vector<std::uint8_t> coverage() const;
  // One target as read back, RGBA, row 0 at the top (position.w is the coverage).
  [[nodiscard]] std::vector<glm::vec4> readRaw(GBufferChannel channel) const;

  [[nodiscard]] GLuint texture(GBufferChannel channel) const { return m_targets[int(channel)].id(); }
  [[nodiscard]] int width() const { return m_width; }
  [[nodiscard]] int height() const { return m_height; }

private:
  int m_width;
  int m_height;
  gpu::Texture m_targets[4];
  gpu::Renderbuffer m_depth;
  gpu::Framebuffer m_framebuffer;
  gpu::Program m_program;
};

}  // namespace ibrr::display
