#include "viewer/viewer.hpp"

#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/gl.hpp"
#include "gpu/resources.hpp"
#include "ibrr/store_file.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"
#include "viewer/first_person_camera.hpp"
#include "viewer/screenshot.hpp"
#include "viewer/view_renderer.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>

namespace ibrr::viewer {
namespace {

constexpr int kFilterCount = int(std::size(kRetrievalFilters));

// The filter's place in kRetrievalFilters (the menu's order).
int filterIndex(RetrievalFilter filter) {
  for (int i = 0; i < kFilterCount; ++i)
    if (kRetrievalFilters[i].filter == filter) return i;
  return kFilterCount - 1;
}

// Discrete input gathered by the GLFW callbacks between two frames. ImGui's GLFW backend is
// installed after these callbacks and chains to them.
struct InputEvents {
  struct Key {
    int key;
    int mods;
  };
  std::vector<Key> keys;  // presses (and repeats) in order
  float wheelSteps = 0.0f;
};

InputEvents& eventsOf(GLFWwindow* window) { return *static_cast<InputEvents*>(glfwGetWindowUserPointer(window)); }

void onKey(GLFWwindow* window, int key, int /*scancode*/, int action, int mods) {
  if (action == GLFW_PRESS || action == GLFW_REPEAT) eventsOf(window).keys.push_back({key, mods});
}

void onScroll(GLFWwindow* window, double /*dx*/, double dy) { eventsOf(window).wheelSteps += float(dy); }

// Where the frames go: a GLFW window (with its input), or for --offscreen a framebuffer of the
// run's size on a headless EGL context, with no input: scripted runs and timings on a machine
// without a display, such as a GPU server, where Xvfb would give Mesa's software renderer instead
// of the GPU. The frame loop draws the same passes into either.
class ViewSurface {
public:
  virtual ~ViewSurface() = default;
  [[nodiscard]] virtual const gpu::ContextInfo& info() const = 0;
  [[nodiscard]] virtual GLFWwindow* window() const = 0;  // nullptr offscreen: no input
  virtual void pollEvents() = 0;
  [[nodiscard]] virtual bool shouldClose() const = 0;
  virtual void framebufferSize(int& width, int& height) const = 0;
  [[nodiscard]] virtual GLuint framebuffer() const = 0;  // what present and the overlay draw into
  virtual void endFrame() = 0;                           // swap the window's buffers, or finish the GL work
};

class WindowSurface final : public ViewSurface {
public:
  WindowSurface(const std::string& title, int width, int height, bool measured)
      : m_context(gpu::createWindowContext(title, width, height, true)),
        m_window(static_cast<GLFWwindow*>(m_context->nativeWindow())) {
    glfwSwapInterval(measured ? 0 : 1);  // measured runs: no wait for vertical sync
  }
  const gpu::ContextInfo& info() const override { return m_context->info(); }
  GLFWwindow* window() const override { return m_window; }
  void pollEvents() override { glfwPollEvents(); }
  bool shouldClose() const override { return m_context->shouldClose(); }
  void framebufferSize(int& width, int& height) const override { glfwGetFramebufferSize(m_window, &width, &height); }
  GLuint framebuffer() const override { return 0; }
  void endFrame() override { m_context->swapBuffers(); }

private:
  std::unique_ptr<gpu::WindowContext> m_context;
  GLFWwindow* m_window;
};

class OffscreenSurface final : public ViewSurface {
public:
  OffscreenSurface(int width, int height)
      : m_context(gpu::createHeadlessContext()), m_width(width), m_height(height),
        m_colour(GL_RGBA8, width, height), m_framebuffer(gpu::Framebuffer::create()) {
    glNamedFramebufferRenderbuffer(m_framebuffer.id(), GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, m_colour.id());
    m_framebuffer.checkComplete("viewer's offscreen", width, height);
  }
  const gpu::ContextInfo& info() const override { return m_context->info(); }
  GLFWwindow* window() const override { return nullptr; }
  void pollEvents() override {}
  bool shouldClose() const override { return false; }
  void framebufferSize(int& width, int& height) const override {
    width = m_width;
    height = m_height;
  }
  GLuint framebuffer() const override { return m_framebuffer.id(); }
  // A window's swap waits for the frame in flight; glFinish does the same, so that a frame's time
  // counts its GPU work here too.
  void endFrame() override { glFinish(); }

private:
  std::unique_ptr<gpu::Context> m_context;
  int m_width, m_height;
  gpu::Renderbuffer m_colour;
  gpu::Framebuffer m_framebuffer;
};

// What the surface shows now (before the window's swap): 8-bit RGB, rows top to bottom.
std::vector<std::uint8_t> readSurfacePixels(const ViewSurface& surface, int& width, int& height) {
  surface.framebufferSize(width, height);
  std::vector<std::uint8_t> bottomUp(std::size_t(std::max(width, 0)) * std::size_t(std::max(height, 0)) * 3);
  if (bottomUp.empty()) return bottomUp;
  glBindFramebuffer(GL_READ_FRAMEBUFFER, surface.framebuffer());
  glReadBuffer(surface.framebuffer() == 0 ? GL_BACK : GL_COLOR_ATTACHMENT0);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGB, GL_UNSIGNED_BYTE, bottomUp.data());
  gpu::checkGlError("reading the viewer's window back");
  const std::size_t row = std::size_t(width) * 3;
  std::vector<std::uint8_t> topDown(bottomUp.size());
  for (int y = 0; y < height; ++y)
    std::copy_n(bottomUp.begin() + std::ptrdiff_t(std::size_t(height - 1 - y) * row), row,
                topDown.begin() + std::ptrdiff_t(std::size_t(y) * row));
  return topDown;
}

// Dear ImGui for the surface's lifetime: the OpenGL 3 backend (GLSL 4.50), and for a window the
// GLFW backend for input, size and time; offscreen the size and time are set here.
class ImGuiSession {
public:
  explicit ImGuiSession(GLFWwindow* window) : m_window(window) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini left in the working folder
    ImGui::StyleColorsDark();
    if (m_window) ImGui_ImplGlfw_InitForOpenGL(m_window, true);
    if (!ImGui_ImplOpenGL3_Init("#version 450 core")) {
      if (m_window) ImGui_ImplGlfw_Shutdown();
      ImGui::DestroyContext();
      throw gpu::GpuUnavailable("Dear ImGui's OpenGL 3 backend could not start on this context");
    }
  }
  ~ImGuiSession() {
    ImGui_ImplOpenGL3_Shutdown();
    if (m_window) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  ImGuiSession(const ImGuiSession&) = delete;
  ImGuiSession& operator=(const ImGuiSession&) = delete;

  // width, height: the surface's framebuffer, pixels (the GLFW backend reads the window's itself).
  void beginFrame(int width, int height) {
    ImGui_ImplOpenGL3_NewFrame();
    if (m_window) {
      ImGui_ImplGlfw_NewFrame();
    } else {
      ImGuiIO& io = ImGui::GetIO();
      io.DisplaySize = ImVec2(float(width), float(height));
      io.DeltaTime = float(std::max(m_sinceFrame.seconds(), 1e-4));  // ImGui needs a positive step
      m_sinceFrame.restart();
    }
    ImGui::NewFrame();
  }
  // Draws the overlay into the bound framebuffer (the backend saves and restores GL state).
  static void endFrame() {
    ImGui::Render();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  }

private:
  GLFWwindow* m_window;  // nullptr offscreen
  Stopwatch m_sinceFrame;
};

// One frame's record for the overlay, the timings CSV and the summary.
struct FrameRecord {
  int frame = 0;
  std::string method;    // display method, and for IBRR its path: "ibrr/gpu", "ibrr/cpu"
  double frameMs = 0.0;  // whole loop iteration: events, passes, present, overlay, swap
  double gbufferMs = 0.0;
  double reconstructionMs = 0.0;
  double presentMs = 0.0;  // present pass + overlay + swap
  std::uint64_t readbacks = 0;  // textures read back to the CPU by the frame's relight and passes
};

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Bakes the store on the surface: ImGui progress bar (and the usual progress on stderr), closing
// the window or Ctrl-C stops it with nothing written. The store is saved for the next run.
LayeredDepthCube bakeInViewer(const scene::Scene& scene, const ViewerSettings& settings, ViewSurface& surface,
                              ImGuiSession& imgui) {
  info("no store given: baking " + scene.sourcePath.filename().string() + " (" + std::to_string(settings.bake.paths) +
       " light paths, R = " + std::to_string(settings.bake.ldcResolution) + "); it will be saved to " +
       settings.bakeOutput.string());
  ProgressLine progress;
  const Stopwatch bakeTime;
  Stopwatch sinceDraw;
  bool drawn = false;
  auto onProgress = [&](const ProgressUpdate& update) {
    progress(update);
    // The compensation pass reports from TBB workers, which must not touch GL: stderr only. It takes
    // seconds where the hemicubes take minutes.
    if (std::string_view(update.phase) != bake::kHemicubePhase) return;
    const std::uint64_t done = update.done, total = update.total;
    if (drawn && sinceDraw.seconds() < 0.1 && done != total) return;  // ≤ 10 redraws per second
    drawn = true;
    sinceDraw.restart();
    surface.pollEvents();
    if (surface.shouldClose()) setInterruptRequested(true);  // the bake stops at its next check
    int width = 0, height = 0;
    surface.framebufferSize(width, height);
    glBindFramebuffer(GL_FRAMEBUFFER, surface.framebuffer());
    glViewport(0, 0, width, height);
    glClearColor(0.08f, 0.08f, 0.08f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    imgui.beginFrame(width, height);
    ImGui::SetNextWindowPos(ImVec2(0.5f * float(width), 0.5f * float(height)), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(std::min(520.0f, float(width) - 20.0f), 0.0f), ImGuiCond_Always);
    ImGui::Begin("Baking the IBRR store", nullptr,
                 ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoCollapse);
    const float fraction = total ? float(done) / float(total) : 0.0f;
    const double elapsed = bakeTime.seconds();
    ImGui::TextWrapped("No store given (--store): baking %s with %u light paths, LDC R = %d.",
                       scene.sourcePath.filename().string().c_str(), settings.bake.paths, settings.bake.ldcResolution);
    char overlay[64];
    std::snprintf(overlay, sizeof overlay, "%llu / %llu hemicubes", static_cast<unsigned long long>(done),
                  static_cast<unsigned long long>(total));
    ImGui::ProgressBar(fraction, ImVec2(-1.0f, 0.0f), overlay);
    ImGui::Text("%.0f s elapsed, about %.0f s left", elapsed,
                fraction > 0.0f ? elapsed * (1.0 - fraction) / fraction : 0.0);
    ImGui::TextWrapped(
        "It will be saved to %s for the next run. Close the window or press Ctrl-C to stop "
        "(nothing is written).",
        settings.bakeOutput.string().c_str());
    ImGui::End();
    ImGuiSession::endFrame();
    surface.endFrame();
  };
  bake::BakeResult result = bake::bakeStore(scene, settings.bake, onProgress);
  progress.finish();
  bake::writeStoreFile(result.store, settings.bakeOutput);
  info("baked " + std::to_string(result.stats.hemicubes) + " hemicubes in " +
       std::to_string(int(std::lround(result.stats.totalSeconds))) + " s; saved " + settings.bakeOutput.string() +
       " (next time: --store " + settings.bakeOutput.string() + ")");
  return std::move(result.store);
}

void writeTimings(const std::filesystem::path& path, const std::vector<FrameRecord>& records, int width, int height,
                  const std::string& renderer) {
  writeFileAtomically(path, [&](const std::filesystem::path& temporary) {
    std::ofstream out(temporary);
    out << "# ibrr view timings, " << width << "x" << height << ", " << renderer << "\n";
    out << "frame,method,frame_ms,gbuffer_ms,reconstruction_ms,present_ms,readbacks\n";
    char line[256];
    for (const FrameRecord& r : records) {
      std::snprintf(line, sizeof line, "%d,%s,%.3f,%.3f,%.3f,%.3f,%llu\n", r.frame, r.method.c_str(), r.frameMs,
                    r.gbufferMs, r.reconstructionMs, r.presentMs, static_cast<unsigned long long>(r.readbacks));
      out << line;
    }
    if (!out.flush()) throw Error(path.string() + ": cannot write the timings (disk full?)");
  });
}

// The frame-time summary of a run: medians over the frames (the first, which compiles shaders
// and uploads the scene, is left out when there are others).
void printSummary(const std::vector<FrameRecord>& records, int width, int height, const std::string& renderer) {
  if (records.empty()) return;
  const std::size_t first = records.size() > 1 ? 1 : 0;
  std::vector<double> frame, gbuffer, reconstruction;
  for (std::size_t i = first; i < records.size(); ++i) {
    frame.push_back(records[i].frameMs);
    gbuffer.push_back(records[i].gbufferMs);
    reconstruction.push_back(records[i].reconstructionMs);
  }
  const double frameMs = median(frame);
  std::printf(
      "frames: %zu at %dx%d on %s; median %.1f ms per frame (%.2f fps): G-buffer %.1f ms, reconstruction "
      "%.1f ms (%.0f%% of the frame)\n",
      frame.size(), width, height, renderer.c_str(), frameMs, frameMs > 0 ? 1e3 / frameMs : 0.0, median(gbuffer),
      median(reconstruction), frameMs > 0 ? 100.0 * median(reconstruction) / frameMs : 0.0);
}

// What can be checked before a window opens: the display methods the settings and the script name, the
// camera, the script's light moves (a matrix whose lights can move, lights it has), and an end for an offscreen run.
void checkViewerSettings(const scene::Scene& scene, const ViewerSettings& settings, const std::vector<DisplayMode>& modes,
                         const std::vector<lightmap::MatrixLight>& matrixLights, bool lightsMove) {
  (void)findDisplayMode(modes, settings.method);
  if (settings.script)
    for (const ScriptScreenshot& shot : settings.script->screenshots)
      if (!shot.method.empty()) (void)findDisplayMode(modes, shot.method);
  (void)scene.camera(settings.camera);
  if (settings.script)
    for (const ScriptLightMove& move : settings.script->lightMoves) {
      if (!settings.matrix) throw Error("the script moves lights: give --matrix FILE (a saved form-factor matrix)");
      if (!lightsMove)
        throw Error("the script moves lights, but " + settings.matrixPath.string() +
                    " was computed with --direct matrix (its lights cannot move)");
      if (std::size_t(move.light) >= matrixLights.size())
        throw Error("the script moves light " + std::to_string(move.light) + "; the scene's movable lights are " +
                    lightmap::describeMatrixLights(matrixLights));
    }
  if (settings.offscreen && !settings.script && settings.frames <= 0)
    throw Error("--offscreen has no window to close: give --frames N or --script FILE to say when the run ends");
}

std::unique_ptr<ViewSurface> makeSurface(const scene::Scene& scene, const ViewerSettings& settings) {
  if (settings.offscreen) return std::make_unique<OffscreenSurface>(settings.width, settings.height);
  return std::make_unique<WindowSurface>("ibrr view: " + scene.sourcePath.filename().string(), settings.width,
                                         settings.height, settings.script.has_value() || settings.frames > 0);
}

// One viewer run: the surface, the store and the passes kept across frames, and what the user changes between
// frames. run() loops over input, update, the view, the overlay and the saved pictures until the window
// closes, the frames or the script end, or Ctrl-C.
class ViewerLoop {
public:
  ViewerLoop(const scene::Scene& scene, ViewerSettings& settings)
      : m_scene(scene),
        m_settings(settings),
        m_modes(displayModes(settings.methods, true, settings.reference.has_value(), settings.lightmaps)),
        m_modeIndex(std::size_t(&findDisplayMode(m_modes, settings.method) - m_modes.data())),
        m_matrixLights(settings.matrix ? lightmap::matrixLights(scene) : std::vector<lightmap::MatrixLight>{}),
        m_lightsMove(settings.matrix && settings.matrix->direct == lightmap::MatrixDirect::Rays),
        m_scripted(settings.script.has_value()),
        m_surface((checkViewerSettings(scene, settings, m_modes, m_matrixLights, m_lightsMove),
                   makeSurface(scene, settings))),
        m_glfwWindow(m_surface->window()),
        m_imgui(m_glfwWindow),
        m_walker(scene.bounds().diagonal()),
        m_lightStep(settings.lightStep > 0.0f ? settings.lightStep : 0.02f * scene.bounds().diagonal()),
        m_frameLimit(settings.frames > 0 ? settings.frames : m_scripted ? settings.script->lastFrame() + 1 : 0),
        m_renderWidth(settings.width),
        m_renderHeight(settings.height) {
    const scene::Camera& initialCamera = scene.camera(settings.camera);
    if (m_glfwWindow) {
      glfwSetWindowUserPointer(m_glfwWindow, &m_events);
      glfwSetKeyCallback(m_glfwWindow, onKey);
      glfwSetScrollCallback(m_glfwWindow, onScroll);
    }
    info((settings.offscreen ? "offscreen: " : "window: ") + m_surface->info().summary());
    m_cpuReconstruction = settings.reconstruct == "cpu";
    if (!settings.store) settings.store = bakeInViewer(scene, settings, *m_surface, m_imgui);
    m_storeStats = settings.store->stats();
    m_renderer = std::make_unique<ViewRenderer>(scene, &*settings.store, settings.tableSettings,
                                                settings.reference ? &*settings.reference : nullptr, storeDisplay());
    if (settings.matrix) startRelighting();
    m_walker.setCamera(initialCamera);
    m_cameraIndex = int(&initialCamera - scene.cameras.data());
  }

  void run() {
    for (int frame = 0; m_frameLimit == 0 || frame < m_frameLimit; ++frame) {
      m_frameClock.restart();
      m_events.keys.clear();
      m_events.wheelSteps = 0.0f;
      m_surface->pollEvents();
      if (m_surface->shouldClose() || interruptRequested()) break;  // Ctrl-C or SIGTERM: leave as Escape does
      const ImGuiIO& io = ImGui::GetIO();
      const float seconds = std::min(io.DeltaTime, 0.25f);  // movement per frame, bounded after a stall
      bool quit = handleKeys(io);
      if (quit) break;
      if (m_scripted)
        followScript(frame);
      else if (m_glfwWindow)
        walk(io, seconds);
      int windowWidth = 0, windowHeight = 0;
      m_surface->framebufferSize(windowWidth, windowHeight);
      FrameRecord record = renderView(frame, windowWidth, windowHeight);
      const Stopwatch presentClock;
      quit = presentAndOverlay(frame, windowWidth, windowHeight);
      m_surface->endFrame();
      record.presentMs = presentClock.milliseconds();
      record.frameMs = m_frameClock.milliseconds();
      m_records.push_back(record);
      m_recent.push_back(record);
      if (m_recent.size() > 60) m_recent.pop_front();
      if (quit) break;
    }
    printSummary(m_records, m_renderWidth, m_renderHeight, m_surface->info().renderer);
    throwIfInterrupted();  // Ctrl-C or SIGTERM ended the walk: exit 130 / 143, no timings written
    if (!m_settings.timingsPath.empty()) {
      writeTimings(m_settings.timingsPath, m_records, m_renderWidth, m_renderHeight, m_surface->info().renderer);
      std::printf("wrote %s (%zu frames)\n", m_settings.timingsPath.string().c_str(), m_records.size());
    }
  }

private:
  // --matrix: relit now, and again whenever a light moves (the matrix itself never changes).
  void startRelighting() {
    LoadedLightmap& loaded = m_settings.lightmaps.at(std::size_t(m_settings.matrixLightmap));
    m_relighter = lightmap::relighterFor(m_scene, m_settings.matrix, loaded.atlas,
                                         lightmap::rasterizePatches(m_scene, loaded.atlas), m_settings.matrixPath);
    m_bakedAtlas = loaded.atlas;
    m_lightOffsets.assign(m_matrixLights.size(), glm::vec3(0.0f));
    m_relightNeeded = true;
  }

  // Relights with the light offsets, and moves the drawn lights there (their texels stay theirs).
  void relight() {
    LoadedLightmap& loaded = m_settings.lightmaps[std::size_t(m_settings.matrixLightmap)];
    m_relightTiming = m_relighter->relight(m_lightOffsets);
    loaded.lightmap.radiance = m_relighter->readRadiance();
    loaded.atlas = lightmap::translateAtlasLights(m_scene, m_bakedAtlas, m_lightOffsets);
    m_renderer->invalidate();
    m_relightNeeded = false;
  }

  // The display of the store, which the "error" view draws at the reference's size.
  const display::RenderMethod* storeDisplay() const {
    for (const DisplayMode& mode : m_modes)
      if (mode.method && mode.method->needsStore) return mode.method;
    return nullptr;
  }

  void selectMode(std::size_t index) {
    m_modeIndex = index % m_modes.size();
    // The error view is only meaningful from the reference's camera: go there.
    if (m_modes[m_modeIndex].showsReferenceError() && !m_settings.referenceCamera.empty())
      for (std::size_t c = 0; c < m_scene.cameras.size(); ++c)
        if (m_scene.cameras[c].name == m_settings.referenceCamera) {
          m_walker.setCamera(m_scene.cameras[c]);
          m_cameraIndex = int(c);
        }
  }

  void selectCamera(int index) {
    if (index < 0 || index >= int(m_scene.cameras.size())) return;
    m_cameraIndex = index;
    m_walker.setCamera(m_scene.cameras[std::size_t(index)]);
  }

  // The window as shown, overlay included: a PNG of display values (nothing linear to put in an EXR).
  void saveWindow(const std::string& base) {
    int width = 0, height = 0;
    const std::vector<std::uint8_t> pixels = readSurfacePixels(*m_surface, width, height);
    if (pixels.empty()) return;
    const std::filesystem::path png = unusedScreenshotStem(m_settings.screenshotFolder, base).string() + ".png";
    writeDisplayPng(pixels, width, height, png);
    m_lastSaved = png.filename().string();
    std::printf("saved %s (%dx%d, the window with its overlay)\n", png.string().c_str(), width, height);
    std::fflush(stdout);
  }

  void saveView(const std::string& base) {
    ToneMapping tone = m_settings.tone;
    if (m_modes[m_modeIndex].showsReferenceError()) tone = {};  // the colour map as it is
    const SavedScreenshot saved = saveScreenshot(m_renderer->image(), m_settings.screenshotFolder, base, tone);
    m_lastSaved = saved.png.filename().string();
    std::printf("saved %s and %s (%dx%d, %s, camera %s)\n", saved.png.string().c_str(), saved.exr.string().c_str(),
                m_renderer->width(), m_renderer->height(), m_modes[m_modeIndex].name.c_str(),
                m_walker.camera().name.c_str());
    std::fflush(stdout);
  }

  // The frame's discrete keys; true for Escape.
  bool handleKeys(const ImGuiIO& io) {
    bool quit = false;
    for (const InputEvents::Key& key : m_events.keys) {
      if (key.key == GLFW_KEY_ESCAPE) quit = true;
      if (key.key == GLFW_KEY_F12) ((key.mods & GLFW_MOD_SHIFT) ? m_windowShotRequested : m_screenshotRequested) = true;
      if (io.WantCaptureKeyboard) continue;
      if (key.key == GLFW_KEY_TAB) selectMode(m_modeIndex + ((key.mods & GLFW_MOD_SHIFT) ? m_modes.size() - 1 : 1));
      if (key.key == GLFW_KEY_F)
        m_settings.reconstruction.filter =
            kRetrievalFilters[(filterIndex(m_settings.reconstruction.filter) + 1) % kFilterCount].filter;
      if (key.key == GLFW_KEY_C) selectCamera((m_cameraIndex + 1) % int(m_scene.cameras.size()));
      if (key.key >= GLFW_KEY_1 && key.key <= GLFW_KEY_9) selectCamera(key.key - GLFW_KEY_1);
      if (key.key == GLFW_KEY_H) m_showOverlay = !m_showOverlay;
      if (key.key == GLFW_KEY_R) m_cpuReconstruction = !m_cpuReconstruction;
      if (key.key == GLFW_KEY_EQUAL || key.key == GLFW_KEY_KP_ADD) m_settings.tone.exposureStops += 0.5f;
      if (key.key == GLFW_KEY_MINUS || key.key == GLFW_KEY_KP_SUBTRACT) m_settings.tone.exposureStops -= 0.5f;
      if (m_lightsMove && !m_lightOffsets.empty() && !m_scripted) moveLight(key.key);
    }
    return quit;
  }

  // Arrows, PgUp/PgDn and Backspace move light 0 of a matrix whose lights can move.
  void moveLight(int key) {
    const glm::vec3 before = m_lightOffsets[0];
    if (key == GLFW_KEY_LEFT) m_lightOffsets[0].x -= m_lightStep;
    if (key == GLFW_KEY_RIGHT) m_lightOffsets[0].x += m_lightStep;
    if (key == GLFW_KEY_UP) m_lightOffsets[0].z += m_lightStep;
    if (key == GLFW_KEY_DOWN) m_lightOffsets[0].z -= m_lightStep;
    if (key == GLFW_KEY_PAGE_UP) m_lightOffsets[0].y += m_lightStep;
    if (key == GLFW_KEY_PAGE_DOWN) m_lightOffsets[0].y -= m_lightStep;
    if (key == GLFW_KEY_BACKSPACE) m_lightOffsets[0] = glm::vec3(0.0f);
    if (m_lightOffsets[0] != before) m_relightNeeded = true;
  }

  // The script's camera, light moves, and the method and filter of this frame's screenshots.
  void followScript(int frame) {
    if (const std::optional<scene::Camera> camera = m_settings.script->cameraAt(frame)) m_walker.setCamera(*camera);
    for (const ScriptLightMove& move : m_settings.script->lightMoves)
      if (move.frame == frame) {
        m_lightOffsets[std::size_t(move.light)] = move.offset;
        m_relightNeeded = true;
      }
    for (const ScriptScreenshot& shot : m_settings.script->screenshots)
      if (shot.frame == frame) {
        if (!shot.method.empty()) selectMode(std::size_t(&findDisplayMode(m_modes, shot.method) - m_modes.data()));
        if (!shot.filter.empty()) m_settings.reconstruction.filter = parseRetrievalFilter(shot.filter, "filter");
      }
  }

  // The walker under the keyboard and mouse.
  void walk(const ImGuiIO& io, float seconds) {
    if (!io.WantCaptureMouse && m_events.wheelSteps != 0.0f) m_walker.scaleSpeed(m_events.wheelSteps);
    double cursorX = 0.0, cursorY = 0.0;
    glfwGetCursorPos(m_glfwWindow, &cursorX, &cursorY);
    const bool lookButton = glfwGetMouseButton(m_glfwWindow, GLFW_MOUSE_BUTTON_RIGHT) == GLFW_PRESS ||
                            (glfwGetMouseButton(m_glfwWindow, GLFW_MOUSE_BUTTON_LEFT) == GLFW_PRESS &&
                             !io.WantCaptureMouse);
    if (lookButton && m_looking) m_walker.turn(float(cursorX - m_lastCursorX), float(cursorY - m_lastCursorY));
    m_looking = lookButton;
    m_lastCursorX = cursorX;
    m_lastCursorY = cursorY;
    if (io.WantCaptureKeyboard) return;
    auto down = [&](int key) { return glfwGetKey(m_glfwWindow, key) == GLFW_PRESS ? 1.0f : 0.0f; };
    const glm::vec3 local(down(GLFW_KEY_D) - down(GLFW_KEY_A), down(GLFW_KEY_E) - down(GLFW_KEY_Q),
                          down(GLFW_KEY_W) - down(GLFW_KEY_S));
    const bool run = down(GLFW_KEY_LEFT_SHIFT) + down(GLFW_KEY_RIGHT_SHIFT) > 0.0f;
    m_walker.move(local, seconds, run);
  }

  // The view at the window's size (or the fixed one), relit first if a light moved; the script's view
  // screenshots of this frame.
  FrameRecord renderView(int frame, int windowWidth, int windowHeight) {
    if (!m_settings.fixedRenderSize) {
      m_renderWidth = windowWidth;
      m_renderHeight = windowHeight;
    }
    FrameRecord record;
    record.frame = frame;
    record.method = m_modes[m_modeIndex].name;
    if (!m_modes[m_modeIndex].showsReferenceError() && m_modes[m_modeIndex].readsStore())
      record.method += m_cpuReconstruction ? "/cpu" : "/gpu";
    const std::uint64_t readbacksBefore = gpu::textureReadbacks();
    if (m_relightNeeded) relight();
    if (m_renderWidth > 0 && m_renderHeight > 0) {
      const PassTimes times = m_renderer->render(m_walker.camera(), m_renderWidth, m_renderHeight,
                                                 m_modes[m_modeIndex], m_settings.reconstruction, m_cpuReconstruction);
      record.gbufferMs = times.gbufferMs;
      record.reconstructionMs = times.reconstructionMs;
    }
    record.readbacks = gpu::textureReadbacks() - readbacksBefore;  // not the screenshots below
    if (m_scripted)
      for (const ScriptScreenshot& shot : m_settings.script->screenshots)
        if (shot.frame == frame && !shot.window)
          saveView(shot.name.empty() ? timestampedScreenshotName() : shot.name);
    return record;
  }

  // Presents the view, draws the overlay and saves the pictures asked for; true when the File menu quit.
  bool presentAndOverlay(int frame, int windowWidth, int windowHeight) {
    ToneMapping tone = m_settings.tone;
    if (m_modes[m_modeIndex].showsReferenceError()) tone = {};
    m_presenter.draw(m_surface->framebuffer(), m_renderer->texture(), m_renderer->width(), m_renderer->height(),
                     windowWidth, windowHeight, tone);
    m_imgui.beginFrame(windowWidth, windowHeight);
    OverlayRequests requests;
    if (m_showOverlay) {
      drawMenuBar(requests);
      drawPanel(requests);
    }
    ImGuiSession::endFrame();
    if (m_scripted)
      for (const ScriptScreenshot& shot : m_settings.script->screenshots)
        if (shot.frame == frame && shot.window) saveWindow(shot.name.empty() ? timestampedScreenshotName() : shot.name);
    if (m_windowShotRequested || requests.windowShot) {
      saveWindow(timestampedScreenshotName());
      m_windowShotRequested = false;
    }
    if (m_screenshotRequested || requests.screenshot) {
      saveView(timestampedScreenshotName());
      m_screenshotRequested = false;
    }
    return requests.quit;
  }

  struct OverlayRequests {
    bool screenshot = false;  // File ▸ Save screenshot, or the panel's button
    bool windowShot = false;  // File ▸ Save the window
    bool quit = false;        // File ▸ Quit
  };

  void drawMenuBar(OverlayRequests& requests) {
    if (!ImGui::BeginMainMenuBar()) return;
    if (ImGui::BeginMenu("File")) {
      requests.screenshot = ImGui::MenuItem("Save screenshot (PNG + EXR)", "F12");
      requests.windowShot = ImGui::MenuItem("Save the window with this overlay (PNG)", "Shift+F12");
      if (ImGui::MenuItem("Quit", "Esc")) requests.quit = true;
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Method")) {
      for (std::size_t m = 0; m < m_modes.size(); ++m)
        if (ImGui::MenuItem(m_modes[m].name.c_str(), nullptr, m == m_modeIndex)) selectMode(m);
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Camera")) {
      for (std::size_t c = 0; c < m_scene.cameras.size(); ++c) {
        const std::string shortcut = c < 9 ? std::to_string(c + 1) : "";
        if (ImGui::MenuItem(m_scene.cameras[c].name.c_str(), shortcut.c_str(), int(c) == m_cameraIndex))
          selectCamera(int(c));
      }
      ImGui::EndMenu();
    }
    ImGui::EndMainMenuBar();
  }

  // The "ibrr view" panel: frame times, the method and its settings, the matrix, the store, the camera, the
  // exposure, the screenshot button and the keys.
  void drawPanel(OverlayRequests& requests) {
    ImGui::SetNextWindowPos(ImVec2(10.0f, 30.0f), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowBgAlpha(0.75f);
    ImGui::Begin("ibrr view", nullptr, ImGuiWindowFlags_AlwaysAutoResize);
    drawFrameTimes();
    ImGui::Separator();
    drawMethodSettings();
    if (m_relighter) drawMatrixSettings();
    ImGui::Separator();
    ImGui::Text("store %s: %.1f MiB (%.1f MiB on the GPU), %llu VPLs, %llu layers", m_settings.storeName.c_str(),
                double(m_storeStats.totalBytes) / (1024.0 * 1024.0),
                double(m_renderer->uploadedStoreBytes()) / (1024.0 * 1024.0),
                static_cast<unsigned long long>(m_settings.store->vplCount()),
                static_cast<unsigned long long>(m_storeStats.layerCount));
    const scene::Camera& camera = m_walker.camera();
    ImGui::Text("camera %s: eye (%.4g, %.4g, %.4g)", camera.name.c_str(), camera.eye.x, camera.eye.y, camera.eye.z);
    ImGui::Text("speed %.3g units/s (wheel; Shift ×%.0f)", m_walker.speed(), FirstPersonCamera::kRunFactor);
    ImGui::SliderFloat("exposure (+/-)", &m_settings.tone.exposureStops, -10.0f, 10.0f, "%.1f stops");
    int curve = m_settings.tone.curve == ToneCurve::Filmic ? 1 : 0;
    const char* curves[] = {"srgb", "filmic"};
    if (ImGui::Combo("tone", &curve, curves, 2))
      m_settings.tone.curve = curve ? ToneCurve::Filmic : ToneCurve::Srgb;
    if (ImGui::Button("Save screenshot (F12)")) requests.screenshot = true;
    if (!m_lastSaved.empty()) {
      ImGui::SameLine();
      ImGui::Text("saved %s", m_lastSaved.c_str());
    }
    if (ImGui::CollapsingHeader("keys")) {
      ImGui::TextUnformatted(
          "W A S D move, Q E down/up, Shift run, wheel speed\n"
          "right mouse button (or left, off the panels) + drag: look\n"
          "Tab / Shift+Tab method, F filter, R GPU/CPU reconstruction, C or 1-9 camera\n"
          "+ - exposure, H hide this panel, F12 screenshot (Shift+F12 the window), Esc quit\n"
          "with --matrix: arrows move light 0 in x/z, PgUp/PgDn in y, Backspace back");
    }
    ImGui::End();
  }

  // Medians over the last frames.
  void drawFrameTimes() {
    std::vector<double> frameMs, gbufferMs, reconstructionMs;
    for (const FrameRecord& r : m_recent) {
      frameMs.push_back(r.frameMs);
      gbufferMs.push_back(r.gbufferMs);
      reconstructionMs.push_back(r.reconstructionMs);
    }
    const double typicalFrame = median(frameMs);
    ImGui::Text("%.1f fps, %.1f ms per frame (median of %zu)", typicalFrame > 0 ? 1e3 / typicalFrame : 0.0,
                typicalFrame, frameMs.size());
    ImGui::Text("G-buffer %.1f ms, reconstruction %.1f ms (%.0f%%)", median(gbufferMs), median(reconstructionMs),
                typicalFrame > 0 ? 100.0 * median(reconstructionMs) / typicalFrame : 0.0);
    ImGui::Text("%dx%d on %s", m_renderer->width(), m_renderer->height(), m_surface->info().renderer.c_str());
  }

  void drawMethodSettings() {
    const DisplayMode& mode = m_modes[m_modeIndex];
    if (ImGui::BeginCombo("method (Tab)", mode.name.c_str())) {
      for (std::size_t m = 0; m < m_modes.size(); ++m)
        if (ImGui::Selectable(m_modes[m].name.c_str(), m == m_modeIndex)) selectMode(m);
      ImGui::EndCombo();
    }
    ImGui::TextWrapped("%s", mode.summary.c_str());
    if (mode.readsStore()) {
      int filter = filterIndex(m_settings.reconstruction.filter);
      const char* names[kFilterCount];
      for (int i = 0; i < kFilterCount; ++i) names[i] = kRetrievalFilters[i].name;
      if (ImGui::Combo("filter (F)", &filter, names, kFilterCount))
        m_settings.reconstruction.filter = kRetrievalFilters[filter].filter;
      if (m_settings.reconstruction.filter == RetrievalFilter::Average)
        ImGui::SliderInt("box radius k", &m_settings.reconstruction.filterRadius, 0, 8);
      int path = m_cpuReconstruction ? 1 : 0;
      const char* paths[] = {"GPU compute shader", "CPU (TBB)"};
      if (ImGui::Combo("reconstruction (R)", &path, paths, 2)) m_cpuReconstruction = path == 1;
    }
    if (!mode.showsReferenceError() && !mode.method->interactive)
      ImGui::TextWrapped("re-rendered only when the view changes (it is slow: see its time above)");
    if (mode.showsReferenceError())
      ImGui::TextWrapped("against %s%s%s", m_settings.referenceName.c_str(),
                         m_settings.referenceCamera.empty() ? "" : ", camera ", m_settings.referenceCamera.c_str());
  }

  void drawMatrixSettings() {
    ImGui::Separator();
    ImGui::Text("matrix %s: %zu patches, k = %d", m_settings.matrixPath.filename().string().c_str(),
                m_settings.matrix->size(), m_settings.matrix->bounces);
    if (m_lightsMove) {
      const glm::vec3 o = m_lightOffsets[0];
      ImGui::Text("light 0 (%s) moved by (%.4g, %.4g, %.4g)", m_matrixLights[0].name.c_str(), o.x, o.y, o.z);
      ImGui::Text("arrows x/z, PgUp/PgDn y: %.3g units a press; Backspace back", m_lightStep);
    } else {
      ImGui::Text("lights fixed (--direct matrix)");
    }
    ImGui::Text("relight %.1f ms: emission vector %.1f, GPU product %.1f, transfer %.1f",
                m_relightTiming.directMs + m_relightTiming.productMs + m_relightTiming.transferMs,
                m_relightTiming.directMs, m_relightTiming.productMs, m_relightTiming.transferMs);
  }

  const scene::Scene& m_scene;
  ViewerSettings& m_settings;
  const std::vector<DisplayMode> m_modes;
  std::size_t m_modeIndex;
  const std::vector<lightmap::MatrixLight> m_matrixLights;  // the lights a matrix may move
  const bool m_lightsMove;                                   // a matrix whose lights can move (--direct rays)
  const bool m_scripted;
  std::unique_ptr<ViewSurface> m_surface;
  GLFWwindow* const m_glfwWindow;  // nullptr offscreen: no input
  InputEvents m_events;
  ImGuiSession m_imgui;
  FirstPersonCamera m_walker;
  const float m_lightStep;  // scene units a light moves per key press
  const int m_frameLimit;   // 0: until the window closes
  int m_renderWidth, m_renderHeight;
  bool m_cpuReconstruction = false;
  StoreStats m_storeStats;
  std::unique_ptr<ViewRenderer> m_renderer;
  // --matrix
  std::unique_ptr<lightmap::MatrixRelighter> m_relighter;
  lightmap::LightmapAtlas m_bakedAtlas;     // the matrix's atlas with the lights at their baked place
  std::vector<glm::vec3> m_lightOffsets;    // per light, scene units
  lightmap::RelightTiming m_relightTiming;  // the last relight
  bool m_relightNeeded = false;
  Presenter m_presenter;
  int m_cameraIndex = 0;
  std::vector<FrameRecord> m_records;
  std::deque<FrameRecord> m_recent;  // the overlay's window of the last frames
  bool m_showOverlay = true;
  bool m_screenshotRequested = false;
  bool m_windowShotRequested = false;  // Shift+F12
  std::string m_lastSaved;
  double m_lastCursorX = 0.0, m_lastCursorY = 0.0;
  bool m_looking = false;
  Stopwatch m_frameClock;
};

}  // namespace

void runViewer(const scene::Scene& scene, ViewerSettings settings) {
  // Everything that can be checked without a window is checked first (the loop's constructor), and there is
  // always a store: loaded by the caller, or baked in the window.
  ViewerLoop loop(scene, settings);
  loop.run();
}

}  // namespace ibrr::viewer
