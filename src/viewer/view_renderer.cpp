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

}  // namespace

std::vector<DisplayMode> displayModes(std::span<const display::RenderMethod* const> methods, bool haveStore,
                                      bool haveReference, const std::vector<LoadedLightmap>& lightmaps) {
  std::vector<DisplayMode> modes;
  for (const display::RenderMethod* listed : methods) {
    const display::RenderMethod& method = *listed;
    const DisplayMode mode{std::string(method.name), std::string(method.summary), &method};
    if (method.needsLightmap) {
      for (const LoadedLightmap& loaded : lightmaps) {
        DisplayMode shown = mode;
        if (lightmaps.size() > 1) shown.name += ":" + loaded.fileName;
        shown.summary += " (" + loaded.fileName + ", " + loaded.lightmap.method + ")";
        shown.lightmap = &loaded.lightmap;
        shown.lightmapAtlas = &loaded.atlas;
        modes.push_back(std::move(shown));
      }
    } else if (haveStore || !method.needsStore) {
      modes.push_back(mode);
    }
  }
  if (haveReference && haveStore)
    modes.push_back({"error", "per-pixel relative error of IBRR against the reference (--reference), false colour"});
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
                           const display::RenderSettings& tableSettings, const Image* reference,
                           const display::RenderMethod* storeDisplay)
    : m_scene(scene),
      m_store(store),
      m_tableSettings(tableSettings),
      m_reference(reference),
      m_storeDisplay(storeDisplay),
      m_sceneRenderer(scene) {
  m_tableSettings.store = store;
}

ViewRenderer::ModePass& ViewRenderer::passForMethod(const std::string& key, const display::RenderMethod& method,
                                                    const display::RenderSettings& settings) {
  ModePass& entry = m_passes[key];
  if (!entry.pass) {
    entry.settings = settings;
    entry.pass = method.create({m_scene, m_sceneRenderer, entry.settings});  // reads entry.settings at each draw
  }
  return entry;
}

ViewRenderer::ModePass& ViewRenderer::passFor(const DisplayMode& mode) {
  display::RenderSettings settings = m_tableSettings;
  settings.lightmap = mode.lightmap;
  settings.lightmapAtlas = mode.lightmapAtlas;
  return passForMethod(mode.name, *mode.method, settings);
}

PassTimes ViewRenderer::render(const scene::Camera& camera, int width, int height, const DisplayMode& mode,
                               const display::ReconstructionOptions& reconstruction, bool cpuReconstruction) {
  if (mode.showsReferenceError()) return renderReferenceError(camera, reconstruction, cpuReconstruction);
  ModePass& entry = passFor(mode);
  entry.settings.reconstruction = reconstruction;
  entry.settings.cpuReconstruction = cpuReconstruction;
  m_shown = &entry;
  PassTimes times;
  const std::string view = viewKey(mode, camera, width, height, reconstruction, cpuReconstruction);
  if (mode.method->interactive || view != entry.shownView) {
    const display::FrameTimes frame = entry.pass->draw(camera, width, height, 1);
    entry.shownView = view;
    entry.width = width;
    entry.height = height;
    times.gbufferMs = frame.sceneMs;
    times.reconstructionMs = frame.methodMs;
  } else {
    times.rerendered = false;
  }
  m_width = entry.width;
  m_height = entry.height;
  return times;
}

// IBRR at the reference's size, through the IBRR mode's own pass, against the reference as false colours.
PassTimes ViewRenderer::renderReferenceError(const scene::Camera& camera,
                                             const display::ReconstructionOptions& reconstruction,
                                             bool cpuReconstruction) {
  m_shown = nullptr;
  m_width = m_reference->width;
  m_height = m_reference->height;
  const DisplayMode ibrrMode{std::string(m_storeDisplay->name), "", m_storeDisplay};
  const std::string view = "error " + viewKey(ibrrMode, camera, m_width, m_height, reconstruction, cpuReconstruction);
  PassTimes times;
  if (view == m_errorView) {
    times.rerendered = false;
    return times;
  }
  ModePass& entry = passFor(ibrrMode);
  entry.settings.reconstruction = reconstruction;
  entry.settings.cpuReconstruction = cpuReconstruction;
  const display::FrameTimes frame = entry.pass->draw(camera, m_width, m_height, 1);
  entry.shownView.clear();  // its texture now holds this view, not the IBRR mode's
  m_errorMap.upload(metrics::errorHeatmap(entry.pass->read().image, *m_reference));
  m_errorView = view;
  times.gbufferMs = frame.sceneMs;
  times.reconstructionMs = frame.methodMs;
  return times;
}

void ViewRenderer::invalidate() {
  for (auto it = m_passes.begin(); it != m_passes.end();)
    it = it->second.settings.lightmap ? m_passes.erase(it) : std::next(it);
  for (auto& [name, entry] : m_passes) entry.shownView.clear();
  m_errorView.clear();
  m_shown = nullptr;
}

GLuint ViewRenderer::texture() const { return m_shown ? m_shown->pass->texture() : m_errorMap.texture(); }

Image ViewRenderer::image() const { return m_shown ? m_shown->pass->read().image : m_errorMap.image(); }

std::size_t ViewRenderer::uploadedStoreBytes() const {
  return m_store ? display::GpuReconstructor::uploadedBytes(*m_store) : 0;
}

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
