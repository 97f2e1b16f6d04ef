#include "gpu/hemicube.hpp"

#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "ibrr/hemicube_samples.hpp"
#include "util/error.hpp"
#include "util/stopwatch.hpp"
#include "shaders/interface.glsl"

#include <glm/gtc/matrix_transform.hpp>

namespace ibrr::gpu {
namespace {

constexpr GLint kUniformCentre = IBRR_U_HEMICUBE_CENTRE;    // hemicube.frag u_centre
constexpr GLint kUniformAxis = IBRR_U_HEMICUBE_AXIS;        // u_axis
constexpr GLint kUniformProfile = IBRR_U_HEMICUBE_PROFILE;  // u_profile
constexpr GLint kUniformSpotCos = IBRR_U_HEMICUBE_SPOT_COS; // u_spotCos
constexpr GLint kUniformCoverage = IBRR_U_HEMICUBE_COVERAGE; // u_coverage

// A unit vector perpendicular to n (Frisvad-style branch on the smallest component).
glm::vec3 perpendicular(const glm::vec3& n) {
  const glm::vec3 helper = std::abs(n.x) < 0.9f ? glm::vec3(1.0f, 0.0f, 0.0f) : glm::vec3(0.0f, 1.0f, 0.0f);
  return glm::normalize(glm::cross(n, helper));
}

}  // namespace

std::vector<HemicubeFace> hemicubeFaces(const glm::vec3& axis, int resolution, bool fullCube) {
  const glm::vec3 n = glm::normalize(axis);
  const glm::vec3 t = perpendicular(n);
  const glm::vec3 b = glm::cross(n, t);
  std::vector<HemicubeFace> faces;
  int row = 0;
  auto add = [&](const glm::vec3& forward, const glm::vec3& up, bool half) {
    const int rows = half ? resolution / 2 : resolution;
    faces.push_back({forward, up, row, rows, half});
    row += rows;
  };
  add(n, b, false);
  for (const glm::vec3& side : {t, -t, b, -b}) add(side, n, !fullCube);
  if (fullCube) add(-n, b, false);
  return faces;
}

float atlasPixelSolidAngle(const HemicubeFace& face, int resolution, int x, int row) {
  // Face coordinates on the plane at unit distance: [-1, 1]² for a full face; a half face spans
  // [0, 1] vertically (its rows cover the upper half). Pixel side 2/H either way.
  const float pixelSide = 2.0f / float(resolution);
  const float a = -1.0f + (float(x) + 0.5f) * pixelSide;
  const float b = (face.half ? 0.0f : -1.0f) + (float(row) + 0.5f) * pixelSide;
  return hemicubePixelSolidAngle(a, b, pixelSide);
}

std::uint64_t HemicubeRenderer::slotBytes(int maxResolution) {
  constexpr std::uint64_t kBytesPerTexel = 16 + 16 + 4;  // position, normal and g, depth
  return kBytesPerTexel * 6 * std::uint64_t(maxResolution) * std::uint64_t(maxResolution);
}

HemicubeRenderer::HemicubeRenderer(const SceneRenderer& renderer, const scene::Scene& scene, int maxResolution,
                                   int slots)
    : m_renderer(renderer),
      m_maxResolution(maxResolution),
      m_slots(std::max(slots, 1)),
      m_positionTarget(GL_RGBA32F, maxResolution, 6 * maxResolution, m_slots),
      m_normalTarget(GL_RGBA32F, maxResolution, 6 * maxResolution, m_slots),
      m_depth(GL_DEPTH_COMPONENT32F, maxResolution, 6 * maxResolution),
      m_program(loadProgram({"scene.vert", "hemicube.frag"})) {
  if (maxResolution < 2 || maxResolution % 2 != 0 || maxResolution > 4096)
    throw Error("hemicube resolution " + std::to_string(maxResolution) + " must be even and in [2, 4096]");
  GLint maxLayers = 0;
  glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &maxLayers);
  IBRR_CHECK(slots >= 1 && slots <= maxLayers, "a hemicube atlas has between one slot and GL's array layers");
  const float diagonal = std::max(scene.bounds().diagonal(), 1e-6f);
  // Geometry closer than the near plane is clipped: 1e-4 of the scene (0.1 mm in the Cornell box).
  m_nearPlane = 1e-4f * diagonal;
  m_farPlane = 2.0f * diagonal;
  m_surfaceOffset = 1e-4f * diagonal;
  const GLenum attachments[] = {GL_COLOR_ATTACHMENT0, GL_COLOR_ATTACHMENT1};
  for (int slot = 0; slot < m_slots; ++slot) {
    const GLuint framebuffer = m_framebuffers.emplace_back(Framebuffer::create()).id();
    glNamedFramebufferTextureLayer(framebuffer, GL_COLOR_ATTACHMENT0, m_positionTarget.id(), 0, slot);
    glNamedFramebufferTextureLayer(framebuffer, GL_COLOR_ATTACHMENT1, m_normalTarget.id(), 0, slot);
    glNamedFramebufferRenderbuffer(framebuffer, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, m_depth.id());
    glNamedFramebufferDrawBuffers(framebuffer, 2, attachments);
    m_framebuffers.back().checkComplete("hemicube");
  }
  m_slotRound.assign(std::size_t(m_slots), 0);
}

float HemicubeRenderer::nextCoverage(int slot) {
  if (m_lastCoverage == kCoverageMarks) {
    m_lastCoverage = 0;
    ++m_coverageRound;
  }
  const std::uint32_t mark = ++m_lastCoverage;
  // A slot cleared in this round holds 0 and the marks of its draws since, all below `mark`.
  std::uint32_t& round = m_slotRound[std::size_t(slot)];
  if (round != m_coverageRound) {
    const float zero[4] = {0, 0, 0, 0};
    const GLuint framebuffer = m_framebuffers[std::size_t(slot)].id();
    glClearNamedFramebufferfv(framebuffer, GL_COLOR, 0, zero);
    glClearNamedFramebufferfv(framebuffer, GL_COLOR, 1, zero);
    round = m_coverageRound;
  }
  return float(mark);
}

void HemicubeRenderer::render(const HemicubeSource& source, int resolution, HemicubeCapture& capture) {
  const Stopwatch renderTime;
  draw(source, resolution, capture);
  glFinish();
  m_lastRenderSeconds = renderTime.seconds();
  readBack(capture);
}

void HemicubeRenderer::draw(const HemicubeSource& source, int resolution, HemicubeCapture& capture, int slot) {
  if (resolution < 2 || resolution % 2 != 0 || resolution > m_maxResolution)
    throw Error("hemicube resolution " + std::to_string(resolution) + " must be even and at most " +
                std::to_string(m_maxResolution));
  IBRR_CHECK(slot >= 0 && slot < m_slots, "a hemicube slot within the atlas");
  DebugGroup group("hemicube");
  const Stopwatch renderTime;
  const bool fullCube = source.profile == EmissionProfile::IsotropicPoint;
  const glm::vec3 axis = fullCube ? glm::vec3(0.0f, 1.0f, 0.0f) : glm::normalize(source.axis);
  capture.source = source;
  capture.resolution = resolution;
  // Surface VPLs sit on their surface: move the eye off it so the surface itself is not seen.
  capture.centre =
      source.position + (source.profile == EmissionProfile::LambertianSurface ? m_surfaceOffset : 0.0f) * axis;
  capture.faces = hemicubeFaces(axis, resolution, fullCube);
  capture.atlasLayer = slot;

  const GLuint framebuffer = m_framebuffers[std::size_t(slot)].id();
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_CULL_FACE);
  glDisable(GL_BLEND);
  // Unscissored clears, which llvmpipe does per tile (a scissored clear is a drawn quad); only the depth buffer
  // is cleared for every draw, the colour targets carry coverage marks (see the header).
  glDisable(GL_SCISSOR_TEST);
  capture.coverage = nextCoverage(slot);
  glClearNamedFramebufferfi(framebuffer, GL_DEPTH_STENCIL, 0, 1.0f, 0);
  glEnable(GL_SCISSOR_TEST);
  m_program.use();
  glProgramUniform3fv(m_program.id(), kUniformCentre, 1, &capture.centre.x);
  glProgramUniform3fv(m_program.id(), kUniformAxis, 1, &axis.x);
  glProgramUniform1i(m_program.id(), kUniformProfile, int(source.profile));
  glProgramUniform2f(m_program.id(), kUniformSpotCos, source.spotCosInner, source.spotCosOuter);
  glProgramUniform1f(m_program.id(), kUniformCoverage, capture.coverage);
  m_lastTriangles = 0;
  const float n = m_nearPlane;
  for (HemicubeFace& face : capture.faces) {
    // A 90° frustum; a half face keeps the part above the tangent plane (bottom = 0).
    const glm::mat4 projection = glm::frustum(-n, n, face.half ? 0.0f : -n, n, n, m_farPlane);
    const glm::mat4 view = glm::lookAt(capture.centre, capture.centre + face.forward, face.up);
    face.viewProjection = projection * view;
    glViewport(0, face.firstRow, resolution, face.rows);
    glScissor(0, face.firstRow, resolution, face.rows);
    m_lastTriangles += m_renderer.draw(face.viewProjection, SceneRenderer::Materials::None);
  }
  glDisable(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  m_lastRenderSeconds = renderTime.seconds();
}

void HemicubeRenderer::readBack(HemicubeCapture& capture) {
  const Stopwatch readTime;
  const int resolution = capture.resolution;
  const int rows = capture.faces.back().firstRow + capture.faces.back().rows;
  const std::size_t pixels = std::size_t(resolution) * rows;
  capture.positions.resize(pixels);
  capture.normalsGeometry.resize(pixels);
  const GLsizei bytes = GLsizei(pixels * sizeof(glm::vec4));
  const int layer = capture.atlasLayer;
  glGetTextureSubImage(m_positionTarget.id(), 0, 0, 0, layer, resolution, rows, 1, GL_RGBA, GL_FLOAT, bytes,
                       capture.positions.data());
  glGetTextureSubImage(m_normalTarget.id(), 0, 0, 0, layer, resolution, rows, 1, GL_RGBA, GL_FLOAT, bytes,
                       capture.normalsGeometry.data());
  // What an earlier draw left where this one covered nothing reads as the cleared targets would: all zero.
  for (std::size_t i = 0; i < pixels; ++i) {
    if (capture.positions[i].w == capture.coverage) {
      capture.positions[i].w = 1.0f;
    } else {
      capture.positions[i] = glm::vec4(0.0f);
      capture.normalsGeometry[i] = glm::vec4(0.0f);
    }
  }
  m_lastReadbackSeconds = readTime.seconds();
  checkGlError("the hemicube pass");
}

}  // namespace ibrr::gpu
