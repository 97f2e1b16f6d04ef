#pragma once
// `ibrr view`: a GLFW window (OpenGL 4.5 core) to walk through a scene with precomputed global
// illumination. First-person camera (WASD, mouse look, Shift to run, wheel for speed), the
// scene's named cameras, the display methods of `ibrr render` (IBRR with its retrieval filters,
// Keller, the G-buffer views, the error against a reference), a Dear ImGui overlay with the frame
// time split, screenshots (F12) as PNG + EXR, an in-window bake when there is no store yet,
// scripted runs (camera keyframes, screenshots at frames, light moves, a frame count) for tests
// under Xvfb or offscreen on a headless context, and a form-factor matrix relit in the window as its
// lights move (arrow keys).
#include "bake/bake.hpp"
#include "display/ibrr_reconstruction.hpp"
#include "display/render_methods.hpp"
#include "ibrr/ldc.hpp"
#include "lightmap/matrix.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"
#include "viewer/view_renderer.hpp"
#include "viewer/view_script.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace ibrr::viewer {

struct ViewerSettings {
  // The store: loaded by the caller, or none, and then baked in the window with `bake` and saved
  // to `bakeOutput` (atomically) for the next run.
  std::optional<LayeredDepthCube> store;
  std::string storeName;  // file name for the overlay
  bake::BakeOptions bake;
  std::filesystem::path bakeOutput;

  std::string camera;  // initial named camera ("" = the scene's first)
  int width = 1280;    // window size, pixels
  int height = 720;
  bool fixedRenderSize = false;  // render exactly width × height (--size), whatever the window becomes
  std::string method = "ibrr";
  display::ReconstructionOptions reconstruction;
  // IBRR reconstruction path: "gpu" (compute shader; on llvmpipe too, where it is now as fast as the
  // TBB path on the Cornell box and faster on the conference room) or "cpu" (TBB).
  std::string reconstruct = "gpu";
  ToneMapping tone;
  display::RenderSettings tableSettings;  // for the table's methods (Keller's light paths)
  std::vector<const display::RenderMethod*> methods;  // the displays of the method table (app/methods.hpp)

  // No window: draw into a framebuffer of width × height on a headless EGL context (a GPU server,
  // CI without Xvfb). There is no input, so the run needs `script` or `frames` to end.
  bool offscreen = false;
  std::optional<ViewScript> script;
  int frames = 0;  // stop after this many frames (0: when the window closes, or the script ends)
  std::filesystem::path screenshotFolder = ".";
  std::filesystem::path timingsPath;  // CSV of per-frame times ("" = none)

  std::vector<LoadedLightmap> lightmaps;    // for the lightmap methods (--lightmap, --matrix)
  // --matrix FILE: the form-factor matrix, relit in the window. lightmaps[matrixLightmap] is its
  // lightmap (the atlas rebuilt from the matrix's options; the radiance is filled once the window's
  // GL context exists, and again after every light move). Arrow keys move light 0 along x and z,
  // PageUp/PageDown along y, by lightStep scene units; Backspace puts it back.
  std::shared_ptr<const lightmap::MatrixSolution> matrix;
  std::filesystem::path matrixPath;
  int matrixLightmap = -1;
  float lightStep = 0.0f;  // 0: 2% of the scene's diagonal
  std::optional<Image> reference;  // for the "error" method
  std::string referenceName;
  std::string referenceCamera;  // the reference's camera from its STEM.json ("" = unknown)
};

// Opens the window (or the offscreen surface) and runs until it closes, Esc, or the frame count /
// script ends. Throws gpu::GpuUnavailable (no display: use xvfb-run, --offscreen or `ibrr render`),
// ibrr::Error for bad input (such as --offscreen with neither a script nor a frame count).
void runViewer(const scene::Scene& scene, ViewerSettings settings);

}  // namespace ibrr::viewer
