#include "viewer/view_renderer.hpp"

#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "metrics/metrics.hpp"
#include "util/error.hpp"
#include "util/stopwatch.hpp"
#include "shaders/interface.glsl"

#include <cmath>
#include <cstdio>

namespace ibrr::viewer {
namespace {

// viewer_display.frag uniforms.
constexpr GLint kUniformViewportOrigin = IBRR_U_PRESENT_VIEWPORT_ORIGIN;
constexpr GLint kUniformViewportSize = IBRR_U_PRESENT_VIEWPORT_SIZE;
constexpr GLint kUniformExposureScale = IBRR_U_PRESENT_EXPOSURE_SCALE;
constexpr GLint kUniformCurve = IBRR_U_PRESENT_CURVE;

// Everything a table method's image depends on, so that it is re-run only when one changes.
std::string viewKey(const DisplayMode& mode, const scene::Camera& camera, int width, int height,
                    const display::ReconstructionOptions& reconstruction, bool cpuReconstruction) {
  char text[512];
  std::snprintf(text, sizeof text, "%s %dx%d %a %a %a %a %a %a %a %a %a %a %d %d %d", mode.name.c_str(), width, height,
                camera.eye.x, camera.eye.y, camera.eye.z, camera.target.x, camera.target.y, camera.target.z,
                camera.up.x, camera.up.y, camera.up.z, camera.verticalFovDegrees, int(reconstruction.filter),
                reconstruction.filterRadius, int(cpuReconstruction));
  return text;
}

double finishAndTake(Stopwatch& stopwatch) {
  glFinish();
  const double milliseconds = stopwatch.milliseconds();
  stopwatch.restart();
  return milliseconds;
}

}  // namespace

std::vector<DisplayMode> displayModes(bool haveStore, bool haveReference,
                                      const std::vector<LoadedLightmap>& lightmaps) {
  std::vector<DisplayMode> modes;
  for (const display::RenderMethod& method : display::renderMethods()) {
    DisplayMode mode{std::string(method.name), std::string(method.summary), ModeKind::TableMethod, &method};
    if (method.needsLightmap) {
      for (const LoadedLightmap& loaded : lightmaps) {
        DisplayMode shown = mode;
        if (lightmaps.size() > 1) shown.name += ":" + loaded.fileName;
        shown.summary += " (" + loaded.fileName + ", " + loaded.lightmap.method + ")";
        shown.kind = ModeKind::Lightmap;
        shown.lightmap = &loaded.lightmap;
        shown.lightmapAtlas = &loaded.atlas;
        modes.push_back(std::move(shown));
      }
      continue;
    }
    if (method.name == "ibrr") {
      if (!haveStore) continue;
      mode.kind = ModeKind::Ibrr;
    } else if (method.name == "albedo" || method.name == "emission") {
      // The table's entries for these read the G-buffer target as is: shown from the persistent one.
      mode.kind = ModeKind::GBufferChannel;
      mode.channel = method.name == "albedo" ? display::GBufferChannel::Albedo : display::GBufferChannel::Emission;
    } else if (method.needsStore && !haveStore) {
      continue;
    }
    modes.push_back(std::move(mode));
  }
  if (haveReference && haveStore)
    modes.push_back({"error", "per-pixel relative error of IBRR against the reference (--reference), false colour",
                     ModeKind::ReferenceError, nullptr});
  return modes;
}

const DisplayMode& findDisplayMode(const std::vector<DisplayMode>& modes, const std::string& name) {
  std::string names;
  for (const DisplayMode& mode : modes) {
    if (mode.name == name) return mode;
    names += (names.empty() ? "" : ", ") + mode.name;
  }
  throw Error("unknown view method '" + name + "'; this run offers: " + names +
              (name == "error" ? " ('error' needs --reference and a store)" : ""));
}

ViewRenderer::ViewRenderer(const scene::Scene& scene, const LayeredDepthCube* store,
                           const display::RenderSettings& tableSettings, const Image* reference)
    : m_scene(scene), m_store(store), m_tableSettings(tableSettings), m_reference(reference), m_sceneRenderer(scene) {
  m_tableSettings.store = store;
  if (store) m_reconstructor.emplace(*store);
}

void ViewRenderer::ensureGBuffer(int width, int height) {
  if (!m_gbuffer || m_gbuffer->width() != width || m_gbuffer->height() != height) {
    m_gbuffer.reset();
    m_gbuffer.emplace(width, height);
  }
}

void ViewRenderer::upload(Image image) {
  if (m_uploaded.width() != image.width || m_uploaded.height() != image.height)
    m_uploaded = gpu::Texture(GL_RGBA32F, image.width, image.height);
  // GL's row 0 is the bottom one; images are top-first.
  std::vector<glm::vec3> bottomFirst(image.pixels.size());
  for (int y = 0; y < image.height; ++y)
    std::copy_n(image.pixels.begin() + std::ptrdiff_t(y) * image.width, image.width,
                bottomFirst.begin() + std::ptrdiff_t(image.height - 1 - y) * image.width);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTextureSubImage2D(m_uploaded.id(), 0, 0, 0, image.width, image.height, GL_RGB, GL_FLOAT, bottomFirst.data());
  m_uploadedImage = std::move(image);
}

bool ViewRenderer::drawLightmap(const scene::Camera& camera, int width, int height, const DisplayMode& mode) {
  const std::string key = viewKey(mode, camera, width, height, {}, false);
  if (key == m_lightmapKey) return false;
  std::unique_ptr<lightmap::LightmapDisplay>& display = m_lightmapDisplays[mode.lightmap];
  if (!display)
    display = std::make_unique<lightmap::LightmapDisplay>(
        m_scene, *mode.lightmapAtlas, lightmap::rasterizePatches(m_scene, *mode.lightmapAtlas), *mode.lightmap);
  if (!m_lightmapView || m_lightmapView->width() != width || m_lightmapView->height() != height) {
    m_lightmapView.reset();
    m_lightmapView.emplace(width, height);
  }
  display->drawView(display::cameraViewProjection(m_scene, camera, width, height), *m_lightmapView);
  m_lightmapKey = key;
  return true;
}

PassTimes ViewRenderer::render(const scene::Camera& camera, int width, int height, const DisplayMode& mode,
                               const display::ReconstructionOptions& reconstruction, bool cpuReconstruction) {
  PassTimes times;
  glFinish();  // charge nothing of the previous frame to this one
  Stopwatch stopwatch;
  switch (mode.kind) {
    case ModeKind::Ibrr:
      ensureGBuffer(width, height);
      m_gbuffer->render(m_sceneRenderer, m_scene, camera);
      times.gbufferMs = finishAndTake(stopwatch);
      if (cpuReconstruction) {
        // Read-back, lookups and upload: all of this path's cost is charged to the reconstruction.
        upload(display::reconstructOnCpu(*m_gbuffer, *m_store, reconstruction).radiance);
        m_uploadedKey.clear();  // the upload replaced any cached table image
        m_source = Source::Uploaded;
      } else {
        m_reconstructor->run(*m_gbuffer, reconstruction);
        m_source = Source::Reconstruction;
      }
      times.reconstructionMs = finishAndTake(stopwatch);
      break;
    case ModeKind::GBufferChannel:
      ensureGBuffer(width, height);
      m_gbuffer->render(m_sceneRenderer, m_scene, camera);
      times.gbufferMs = finishAndTake(stopwatch);
      m_source = Source::GBuffer;
      m_channel = mode.channel;
      break;
    case ModeKind::Lightmap:
      m_source = Source::LightmapView;
      times.rerendered = drawLightmap(camera, width, height, mode);
      times.reconstructionMs = finishAndTake(stopwatch);
      break;
    case ModeKind::TableMethod: {
      const std::string key = viewKey(mode, camera, width, height, reconstruction, cpuReconstruction);
      m_source = Source::Uploaded;
      if (key == m_uploadedKey) {
        times.rerendered = false;
        break;
      }
      display::RenderSettings settings = m_tableSettings;
      settings.reconstruction = reconstruction;
      settings.cpuReconstruction = cpuReconstruction;
      const display::RenderOutput output = mode.method->render({m_scene, camera, width, height, settings, &m_sceneRenderer});
      const double totalMs = finishAndTake(stopwatch);
      times.reconstructionMs = 1e3 * output.reconstructionSeconds;
      times.gbufferMs = std::max(0.0, totalMs - times.reconstructionMs);  // set-up, G-buffer and readback
      upload(output.image);
      m_uploadedKey = key;
      break;
    }
    case ModeKind::ReferenceError: {
      const int refWidth = m_reference->width, refHeight = m_reference->height;
      const std::string key = viewKey(mode, camera, refWidth, refHeight, reconstruction, cpuReconstruction);
      m_source = Source::Uploaded;
      if (key == m_uploadedKey) {
        times.rerendered = false;
        break;
      }
      ensureGBuffer(refWidth, refHeight);
      m_gbuffer->render(m_sceneRenderer, m_scene, camera);
      times.gbufferMs = finishAndTake(stopwatch);
      const display::Reconstruction ibrr = cpuReconstruction
                                               ? display::reconstructOnCpu(*m_gbuffer, *m_store, reconstruction)
                                               : m_reconstructor->reconstruct(*m_gbuffer, reconstruction);
      times.reconstructionMs = finishAndTake(stopwatch);
      upload(metrics::errorHeatmap(ibrr.radiance, *m_reference));
      m_uploadedKey = key;
      break;
    }
  }
  switch (m_source) {
    case Source::Reconstruction:
    case Source::GBuffer:
      m_width = m_gbuffer->width();
      m_height = m_gbuffer->height();
      break;
    case Source::Uploaded:
      m_width = m_uploadedImage.width;
      m_height = m_uploadedImage.height;
      break;
    case Source::LightmapView:
      m_width = m_lightmapView->width();
      m_height = m_lightmapView->height();
      break;
  }
  return times;
}

GLuint ViewRenderer::texture() const {
  switch (m_source) {
    case Source::Reconstruction:
      return m_reconstructor->outputTexture();
    case Source::GBuffer:
      return m_gbuffer->texture(m_channel);
    case Source::Uploaded:
      return m_uploaded.id();
    case Source::LightmapView:
      return m_lightmapView->texture();
  }
  return 0;
}

Image ViewRenderer::image() const {
  if (m_source == Source::Uploaded) return m_uploadedImage;
  // The same readback `ibrr render` does (GpuReconstructor::reconstruct, GBuffer::read).
  const std::vector<glm::vec4> texels = gpu::readTextureTopFirst(texture(), m_width, m_height);
  Image image(m_width, m_height);
  for (std::size_t i = 0; i < texels.size(); ++i) image.pixels[i] = glm::vec3(texels[i]);
  return image;
}

std::size_t ViewRenderer::uploadedStoreBytes() const { return m_reconstructor ? m_reconstructor->uploadedBytes() : 0; }

Presenter::Presenter()
    : m_program(gpu::loadProgram({"viewer_display.vert", "viewer_display.frag"})),
      m_vertexArray(gpu::VertexArray::create()) {}

void Presenter::draw(GLuint target, GLuint texture, int textureWidth, int textureHeight, int windowWidth,
                     int windowHeight, const ToneMapping& tone) {
  gpu::DebugGroup group("present");
  glBindFramebuffer(GL_FRAMEBUFFER, target);
  glViewport(0, 0, windowWidth, windowHeight);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_BLEND);
  glClearColor(0.08f, 0.08f, 0.08f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (!texture || textureWidth <= 0 || textureHeight <= 0 || windowWidth <= 0 || windowHeight <= 0) return;
  // Fit the image into the window with its aspect ratio: letterbox or pillarbox.
  const float scale = std::min(float(windowWidth) / float(textureWidth), float(windowHeight) / float(textureHeight));
  const int width = std::max(1, int(std::lround(scale * float(textureWidth))));
  const int height = std::max(1, int(std::lround(scale * float(textureHeight))));
  const int x = (windowWidth - width) / 2, y = (windowHeight - height) / 2;
  glViewport(x, y, width, height);
  const GLuint program = m_program.id();
  glProgramUniform2f(program, kUniformViewportOrigin, float(x), float(y));
  glProgramUniform2f(program, kUniformViewportSize, float(width), float(height));
  glProgramUniform1f(program, kUniformExposureScale, std::exp2(tone.exposureStops));
  glProgramUniform1i(program, kUniformCurve, tone.curve == ToneCurve::Filmic ? 1 : 0);
  m_program.use();
  glBindTextureUnit(IBRR_T_PRESENT_RADIANCE, texture);
  glBindVertexArray(m_vertexArray.id());
  glDrawArrays(GL_TRIANGLES, 0, 3);
  glBindVertexArray(0);
  glViewport(0, 0, windowWidth, windowHeight);
  gpu::checkGlError("the viewer's present pass");
}

}  // namespace ibrr::viewer
