#include "gpu/hemicube.hpp"

#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "ibrr/hemicube_samples.hpp"
#include "util/error.hpp"
#include "util/stopwatch.hpp"
#include "shaders/interface.glsl"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>

namespace ibrr::gpu {
namespace {

constexpr int kMaxFaces = 6;  // a full cube's; a hemicube has 5

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
      m_depthTarget(GL_DEPTH_COMPONENT32F, maxResolution, 6 * maxResolution, m_slots),
      m_program(loadProgram({"hemicube.vert", "hemicube.frag"})) {
  if (maxResolution < 2 || maxResolution % 2 != 0 || maxResolution > 4096)
    throw Error("hemicube resolution " + std::to_string(maxResolution) + " must be even and in [2, 4096]");
  GLint maxLayers = 0, maxViewports = 0;
  glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &maxLayers);
  glGetIntegerv(GL_MAX_VIEWPORTS, &maxViewports);  // at least 16 in GL 4.5
  IBRR_CHECK(slots >= 1 && slots <= maxLayers, "a hemicube atlas has between one slot and GL's array layers");
  m_maxBatchLayouts = std::max(maxViewports / kMaxFaces, 1);
  const float diagonal = std::max(scene.bounds().diagonal(), 1e-6f);
  // Geometry closer than the near plane is clipped: 1e-4 of the scene (0.1 mm in the Cornell box).
  m_nearPlane = 1e-4f * diagonal;
  m_farPlane = 2.0f * diagonal;
  m_surfaceOffset = 1e-4f * diagonal;
  const GLenum attachments[] = {GL_COLOR_ATTACHMENT0, GL_COLOR_ATTACHMENT1};
  m_batchFramebuffer = Framebuffer::create();
  const GLuint batch = m_batchFramebuffer.id();
  glNamedFramebufferTexture(batch, GL_COLOR_ATTACHMENT0, m_positionTarget.id(), 0);
  glNamedFramebufferTexture(batch, GL_COLOR_ATTACHMENT1, m_normalTarget.id(), 0);
  glNamedFramebufferTexture(batch, GL_DEPTH_ATTACHMENT, m_depthTarget.id(), 0);
  glNamedFramebufferDrawBuffers(batch, 2, attachments);
  m_batchFramebuffer.checkComplete("hemicube batch");
  for (int slot = 0; slot < m_slots; ++slot) {
    const GLuint framebuffer = m_framebuffers.emplace_back(Framebuffer::create()).id();
    glNamedFramebufferTextureLayer(framebuffer, GL_COLOR_ATTACHMENT0, m_positionTarget.id(), 0, slot);
    glNamedFramebufferTextureLayer(framebuffer, GL_COLOR_ATTACHMENT1, m_normalTarget.id(), 0, slot);
    glNamedFramebufferDrawBuffers(framebuffer, 2, attachments);
    m_framebuffers.back().checkComplete("hemicube");
  }
  m_slotRound.assign(std::size_t(m_slots), 0);
  m_slotQueued.assign(std::size_t(m_slots), false);
  // Created with their (zero) content, never cleared before an upload (src/bake/gpu_insertion.cpp, filledBuffer).
  const std::vector<FaceDraw> faces(std::size_t(m_slots) * kMaxFaces, FaceDraw{});
  const std::vector<SourceDraw> sources(std::size_t(m_slots), SourceDraw{});
  m_faceBuffer = Buffer(GLsizeiptr(faces.size() * sizeof(FaceDraw)), faces.data(), GL_DYNAMIC_STORAGE_BIT);
  m_sourceBuffer = Buffer(GLsizeiptr(sources.size() * sizeof(SourceDraw)), sources.data(), GL_DYNAMIC_STORAGE_BIT);
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
  draw(source, resolution, capture);
  submit(true);
  readBack(capture);
}

int HemicubeRenderer::batchViewports(int resolution, bool fullCube) {
  const BatchLayout layout{resolution, fullCube};
  auto known = std::find(m_batchLayouts.begin(), m_batchLayouts.end(), layout);
  if (known == m_batchLayouts.end()) {
    if (int(m_batchLayouts.size()) == m_maxBatchLayouts) submit();
    m_batchLayouts.push_back(layout);
    known = m_batchLayouts.end() - 1;
  }
  return kMaxFaces * int(known - m_batchLayouts.begin());
}

void HemicubeRenderer::draw(const HemicubeSource& source, int resolution, HemicubeCapture& capture, int slot) {
  if (resolution < 2 || resolution % 2 != 0 || resolution > m_maxResolution)
    throw Error("hemicube resolution " + std::to_string(resolution) + " must be even and at most " +
                std::to_string(m_maxResolution));
  IBRR_CHECK(slot >= 0 && slot < m_slots, "a hemicube slot within the atlas");
  const Stopwatch queueTime;
  if (m_slotQueued[std::size_t(slot)]) submit();  // the slot's clears below must come after its queued draw
  const bool fullCube = source.profile == EmissionProfile::IsotropicPoint;
  const int firstViewport = batchViewports(resolution, fullCube);
  const glm::vec3 axis = fullCube ? glm::vec3(0.0f, 1.0f, 0.0f) : glm::normalize(source.axis);
  capture.source = source;
  capture.resolution = resolution;
  // Surface VPLs sit on their surface: move the eye off it so the surface itself is not seen.
  capture.centre =
      source.position + (source.profile == EmissionProfile::LambertianSurface ? m_surfaceOffset : 0.0f) * axis;
  capture.faces = hemicubeFaces(axis, resolution, fullCube);
  capture.atlasLayer = slot;
  // The colour targets carry coverage marks (see the header): cleared only when the slot may hold this mark, with
  // an unscissored clear, which llvmpipe does per tile. The pass clears the depth.
  glDisable(GL_SCISSOR_TEST);
  capture.coverage = nextCoverage(slot);
  const auto hemicube = static_cast<std::int32_t>(m_sources.size());
  m_sources.push_back({glm::vec4(capture.centre, capture.coverage), glm::vec4(axis, 0.0f),
                       glm::vec2(source.spotCosInner, source.spotCosOuter), int(source.profile), 0});
  const float n = m_nearPlane;
  for (std::size_t f = 0; f < capture.faces.size(); ++f) {
    HemicubeFace& face = capture.faces[f];
    // A 90° frustum; a half face keeps the part above the tangent plane (bottom = 0).
    const glm::mat4 projection = glm::frustum(-n, n, face.half ? 0.0f : -n, n, n, m_farPlane);
    const glm::mat4 view = glm::lookAt(capture.centre, capture.centre + face.forward, face.up);
    face.viewProjection = projection * view;
    m_faces.push_back({face.viewProjection, hemicube, slot, firstViewport + int(f), 0});
    m_faceViewProjections.push_back(face.viewProjection);
  }
  m_slotQueued[std::size_t(slot)] = true;
  m_renderSeconds += queueTime.seconds();
}

void HemicubeRenderer::submit(bool waitForGpu) {
  const Stopwatch renderTime;
  if (!m_faces.empty()) {
    DebugGroup group("hemicubes");
    glNamedBufferSubData(m_faceBuffer.id(), 0, GLsizeiptr(m_faces.size() * sizeof(FaceDraw)), m_faces.data());
    glNamedBufferSubData(m_sourceBuffer.id(), 0, GLsizeiptr(m_sources.size() * sizeof(SourceDraw)),
                         m_sources.data());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_HEMICUBE_FACES, m_faceBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_HEMICUBE_SOURCES, m_sourceBuffer.id());
    // The viewports (and scissors) of each layout's faces: face f of the k-th at index 6k + f.
    std::vector<float> viewports;
    std::vector<GLint> scissors;
    for (std::size_t k = 0; k < m_batchLayouts.size(); ++k) {
      const BatchLayout& layout = m_batchLayouts[k];
      viewports.resize(4 * kMaxFaces * k);  // a hemicube's five faces leave the sixth viewport unused
      scissors.resize(4 * kMaxFaces * k);
      for (const HemicubeFace& face : hemicubeFaces(glm::vec3(0.0f, 1.0f, 0.0f), layout.resolution, layout.fullCube)) {
        viewports.insert(viewports.end(), {0.0f, float(face.firstRow), float(layout.resolution), float(face.rows)});
        scissors.insert(scissors.end(), {0, face.firstRow, layout.resolution, face.rows});
      }
    }
    glViewportArrayv(0, GLsizei(viewports.size() / 4), viewports.data());
    glScissorArrayv(0, GLsizei(scissors.size() / 4), scissors.data());
    glBindFramebuffer(GL_FRAMEBUFFER, m_batchFramebuffer.id());
    glDisable(GL_SCISSOR_TEST);  // the depth of every slot, unscissored
    glClearNamedFramebufferfi(m_batchFramebuffer.id(), GL_DEPTH_STENCIL, 0, 1.0f, 0);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDisable(GL_CULL_FACE);
    glDisable(GL_BLEND);
    glEnable(GL_SCISSOR_TEST);
    m_program.use();
    if (!waitForGpu) m_passTime.begin();
    m_trianglesSubmitted += m_renderer.drawViews(m_faceViewProjections);
    if (!waitForGpu) m_passTime.end();
    glDisable(GL_SCISSOR_TEST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    ++m_passes;
    m_faces.clear();
    m_faceViewProjections.clear();
    m_sources.clear();
    m_batchLayouts.clear();
    std::fill(m_slotQueued.begin(), m_slotQueued.end(), false);
  }
  if (waitForGpu) glFinish();
  m_renderSeconds += renderTime.seconds();
}

void HemicubeRenderer::readBack(HemicubeCapture& capture) {
  submit();
  const Stopwatch readTime;
  const int resolution = capture.resolution;
  const int rows = capture.atlasRows();
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
