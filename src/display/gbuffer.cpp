#include "display/gbuffer.hpp"

#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "gpu/supersample.hpp"
#include "shaders/interface.glsl"

#include <algorithm>

namespace ibrr::display {

namespace {
constexpr GLint kUniformEye = IBRR_U_GBUFFER_EYE;  // gbuffer.frag: u_eye
}

DepthRange depthRangeFor(const scene::Scene& scene, const scene::Camera& camera) {
  const scene::Bounds& bounds = scene.bounds();
  const float diagonal = std::max(bounds.diagonal(), 1e-6f);
  // Far: the farthest bounds corner along the view axis; near: a small fraction of the scene so
  // that a 24-bit depth buffer keeps its precision, clamped to the nearest geometry distance.
  const glm::vec3 forward = glm::normalize(camera.target - camera.eye);
  float farthest = 0.0f;
  for (int corner = 0; corner < 8; ++corner) {
    const glm::vec3 p((corner & 1) ? bounds.max.x : bounds.min.x, (corner & 2) ? bounds.max.y : bounds.min.y,
                      (corner & 4) ? bounds.max.z : bounds.min.z);
    farthest = std::max(farthest, glm::dot(p - camera.eye, forward));
  }
  const float farPlane = std::max(farthest * 1.01f, diagonal * 1e-3f);
  return {std::max(diagonal * 1e-4f, farPlane * 1e-5f), farPlane};
}

glm::mat4 cameraViewProjection(const scene::Scene& scene, const scene::Camera& camera, int width, int height) {
  const DepthRange range = depthRangeFor(scene, camera);
  return camera.projection(float(width) / float(height), range.nearPlane, range.farPlane) * camera.view();
}

GBuffer::GBuffer(int width, int height)
    : m_width(width),
      m_height(height),
      m_depth(GL_DEPTH_COMPONENT32F, width, height),
      m_framebuffer(gpu::Framebuffer::create()),
      m_program(gpu::loadProgram({"scene.vert", "gbuffer.frag"})) {
  const GLenum attachments[] = {GL_COLOR_ATTACHMENT0, GL_COLOR_ATTACHMENT1, GL_COLOR_ATTACHMENT2, GL_COLOR_ATTACHMENT3};
  for (int i = 0; i < 4; ++i) {
    m_targets[i] = gpu::Texture(GL_RGBA32F, width, height);
    glNamedFramebufferTexture(m_framebuffer.id(), attachments[i], m_targets[i].id(), 0);
  }
  glNamedFramebufferRenderbuffer(m_framebuffer.id(), GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, m_depth.id());
  glNamedFramebufferDrawBuffers(m_framebuffer.id(), 4, attachments);
  m_framebuffer.checkComplete("G-buffer", width, height);
}

void GBuffer::render(const gpu::SceneRenderer& renderer, const scene::Scene& scene, const scene::Camera& camera,
                     int supersample) {
  gpu::DebugGroup group("G-buffer");
  const glm::mat4 viewProjection = cameraViewProjection(scene, camera, m_width, m_height);
  glBindFramebuffer(GL_FRAMEBUFFER, m_framebuffer.id());
  glDisable(GL_CULL_FACE);
  glDisable(GL_BLEND);
  const float zero[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) glClearNamedFramebufferfv(m_framebuffer.id(), GL_COLOR, i, zero);
  const gpu::ReversedDepthPass reversedDepth(m_framebuffer.id());
  m_program.use();
  glProgramUniform3fv(m_program.id(), kUniformEye, 1, &camera.eye.x);
  gpu::drawSupersampleTiles(m_program.id(), viewProjection, m_width, m_height, supersample,
                            [&](const glm::mat4& tileViewProjection) { renderer.draw(tileViewProjection); });
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  gpu::checkGlError("the G-buffer pass");
}

std::vector<glm::vec4> GBuffer::readRaw(GBufferChannel channel) const {
  return gpu::readTextureTopFirst(m_targets[int(channel)].id(), m_width, m_height);
}

Image GBuffer::read(GBufferChannel channel) const {
  const std::vector<glm::vec4> texels = readRaw(channel);
  Image image(m_width, m_height);
  for (std::size_t i = 0; i < texels.size(); ++i) image.pixels[i] = glm::vec3(texels[i]);
  return image;
}

std::vector<std::uint8_t> GBuffer::coverage() const {
  const std::vector<glm::vec4> texels = readRaw(GBufferChannel::Position);
  std::vector<std::uint8_t> mask(texels.size());
  for (std::size_t i = 0; i < texels.size(); ++i) mask[i] = texels[i].w > 0.5f ? 1 : 0;
  return mask;
}

}  // namespace ibrr::display
