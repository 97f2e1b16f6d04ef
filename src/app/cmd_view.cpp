// `ibrr view SCENE [--store FILE]`: walk through a scene in a window (GLFW, OpenGL 4.5 core) with
// the IBRR store's precomputed global illumination; the other display methods of `ibrr render`
// on keys; screenshots; an in-window bake when there is no store; scripted runs under xvfb-run or
// --offscreen; a form-factor matrix relit in the window as the arrow keys move its light (--matrix).
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "app/methods.hpp"
#include "display/render_methods.hpp"
#include "ibrr/store_file.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/matrix.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/image.hpp"
#include "util/log.hpp"
#include "viewer/view_renderer.hpp"
#include "viewer/viewer.hpp"


#include <filesystem>
#include <memory>

namespace ibrr::app {
namespace {

namespace fs = std::filesystem;

struct ViewOptions {
  std::string scene;
  std::string store;
  std::string bakeOutput;
  std::string camera;
  std::string method = "ibrr";
  std::string filter = "bilinear";
  int filterRadius = 1;
  std::string reconstruct = "gpu";
  std::string size;
  float exposure = 0.0f;
  std::string tone = "srgb";
  std::vector<std::string> lightmaps;
  std::string matrix;
  float lightStep = 0.0f;
  std::string reference;
  std::string script;
  int frames = 0;
  bool offscreen = false;
  std::string screenshotDir = ".";
  std::string timings;
  std::uint32_t kellerPaths = 256;
  bake::BakeOptions bake;
};

// The camera a reference was rendered from, from the STEM.json `ibrr reference` writes beside
// STEM.exr ("" when there is none).
std::string referenceCamera(const fs::path& reference) {
  const ReferenceSidecar sidecar = readReferenceSidecar(reference);
  if (sidecar.malformed)
    warn(fs::path(reference).replace_extension(".json").string() +
         ": not the settings JSON of 'ibrr reference'; the reference's camera is unknown");
  return sidecar.camera;
}

// The files the viewer may write, checked again once the inputs are read (none may be one of them):
// the timings log and the store it bakes when none was given.
void checkViewOutputs(const ViewOptions& options, const viewer::ViewerSettings& settings) {
  if (!options.timings.empty()) checkOutputFile(options.timings);
  if (settings.store || settings.bakeOutput.empty()) return;
  checkOutputFile(settings.bakeOutput);
}

void runView(const ViewOptions& options) {
  // Bad arguments fail before any loading.
  if (options.tone != "srgb" && options.tone != "filmic")
    throw Error("--tone '" + options.tone + "': choose srgb or filmic");
  if (options.filterRadius < 0 || options.filterRadius > 8) throw Error("--filter-radius must be in [0, 8]");
  if (options.reconstruct != "gpu" && options.reconstruct != "cpu")
    throw Error("--reconstruct '" + options.reconstruct + "': choose gpu or cpu");
  if (options.frames < 0) throw Error("--frames must be ≥ 0 (0: until the window closes or the script ends)");
  if (!options.store.empty() && !options.bakeOutput.empty())
    throw Error("--bake-output is for a store baked in the window; with --store FILE there is nothing to bake");
  checkOutputFile(fs::path(options.screenshotDir) / "screenshot.png");
  if (!fs::is_directory(options.screenshotDir))
    throw Error("--screenshot-dir " + options.screenshotDir + ": not a folder; create it first");
  if (!options.timings.empty()) checkOutputFile(options.timings);

  viewer::ViewerSettings settings;
  settings.camera = options.camera;
  settings.method = options.method;
  settings.reconstruction.filter = parseRetrievalFilter(options.filter, "--filter");
  settings.reconstruction.filterRadius = options.filterRadius;
  settings.reconstruct = options.reconstruct;
  settings.tone.exposureStops = options.exposure;
  settings.tone.curve = options.tone == "filmic" ? ToneCurve::Filmic : ToneCurve::Srgb;
  if (!options.size.empty()) {
    const scene::ImageSize size = parseImageSize(options.size);
    settings.width = size.width;
    settings.height = size.height;
    settings.fixedRenderSize = true;
  }
  settings.frames = options.frames;
  settings.offscreen = options.offscreen;
  settings.screenshotFolder = options.screenshotDir;
  settings.timingsPath = options.timings;
  settings.bake = options.bake;
  bake::validateBakeOptions(settings.bake);
  settings.methods = renderMethods();
  settings.tableSettings.vplOptions = options.bake;
  if (options.kellerPaths > 0) settings.tableSettings.vplOptions.paths = options.kellerPaths;

  const scene::Scene scene = loadSceneArgument(options.scene);
  (void)scene.camera(options.camera);  // an unknown camera name fails here, naming the cameras
  if (!options.store.empty()) {
    if (!fs::exists(options.store))
      throw Error("--store " + options.store +
                  ": no such file; bake one with 'ibrr bake SCENE -o FILE', or leave --store out and the viewer "
                  "bakes one");
    settings.store = bake::readStoreFile(options.store, scene.fingerprint());  // refuses a store of another scene
    settings.storeName = fs::path(options.store).filename().string();
  } else {
    // No store: the one an earlier run baked and saved, else bake in the window and save it there.
    settings.bakeOutput = options.bakeOutput.empty() ? fs::path(scene.sourcePath.stem().string() + ".ibrr")
                                                     : fs::path(options.bakeOutput);
    settings.storeName = settings.bakeOutput.filename().string();
    if (fs::exists(settings.bakeOutput)) {
      try {
        settings.store = bake::readStoreFile(settings.bakeOutput, scene.fingerprint());
      } catch (const Error& error) {
        throw Error(std::string(error.what()) +
                    " (this is where the viewer keeps the store it bakes; give --store "
                    "FILE, or --bake-output NEW.ibrr to bake a new one)");
      }
      info("using the store baked earlier: " + settings.bakeOutput.string());
    } else {
      checkOutputFile(settings.bakeOutput);
      if (!scene.hasLights())
        throw Error(scene.sourcePath.string() +
                    ": the scene has no emitters or lights to bake; add an emissive material (Ke) or a light to "
                    "the manifest");
    }
  }
  settings.tableSettings.store = nullptr;  // the viewer points its table calls at its own store
  for (const std::string& path : options.lightmaps) {
    viewer::LoadedLightmap& loaded = settings.lightmaps.emplace_back();
    loaded.fileName = fs::path(path).filename().string();
    loaded.lightmap = lightmap::loadLightmap(path, scene, &loaded.atlas);  // refuses another scene's
  }
  if (!options.matrix.empty()) {
    // Shown as one more lightmap; its radiance comes from the relighter once the window is open.
    auto solution = std::make_shared<lightmap::MatrixSolution>(lightmap::loadMatrix(options.matrix, scene));
    settings.matrixLightmap = int(settings.lightmaps.size());
    viewer::LoadedLightmap& loaded = settings.lightmaps.emplace_back();
    loaded.fileName = fs::path(options.matrix).filename().string();
    loaded.atlas = lightmap::buildAtlas(scene, solution->atlasOptions);
    loaded.lightmap = lightmap::matrixLightmap(
        *solution, std::vector<glm::vec3>(std::size_t(solution->width) * std::size_t(solution->height)));
    settings.matrix = std::move(solution);
    settings.matrixPath = options.matrix;
  }
  if (options.lightStep < 0.0f) throw Error("--light-step must be > 0 scene units (0: 2% of the scene's diagonal)");
  settings.lightStep = options.lightStep;
  if (!options.reference.empty()) {
    settings.reference = readImage(options.reference);
    settings.referenceName = fs::path(options.reference).filename().string();
    settings.referenceCamera = referenceCamera(options.reference);
  }
  if (!options.script.empty()) settings.script = viewer::loadViewScript(options.script, scene);
  checkViewOutputs(options, settings);  // every input is read and recorded now: no output may be one
  viewer::runViewer(scene, std::move(settings));
}

}  // namespace

void addViewCommand(CLI::App& app) {
  auto options = std::make_shared<ViewOptions>();
  CLI::App* command = app.add_subcommand(
      "view", "Walk through a scene in a window with the baked IBRR store (OpenGL 4.5; xvfb-run without a display)");
  addSceneArgument(*command, options->scene);
  command->add_option("--store", options->store,
                      "baked IBRR store (.ibrr) of this scene; without it the viewer bakes one in the window "
                      "(light-path flags below) and saves it to --bake-output for the next run");
  command->add_option("--bake-output", options->bakeOutput,
                      "where a store baked in the window is saved, and looked for first (default: SCENE.ibrr in the "
                      "current folder)");
  command->add_option("--camera", options->camera, "start at this camera of the manifest (default: the first)");
  command
      ->add_option(
          "--method", options->method,
          "first display method: " + renderMethodNames() + ", or error (with --reference); Tab switches")
      ->capture_default_str();
  command->add_option("--filter", options->filter, "IBRR store retrieval: none, box or bilinear (F switches)")
      ->capture_default_str();
  command->add_option("--filter-radius", options->filterRadius, "k of the box filter, pixels")->capture_default_str();
  command
      ->add_option("--reconstruct", options->reconstruct,
                   "IBRR reconstruction on the gpu (compute shader, what ibrr render uses by default) or the cpu "
                   "(TBB) (R switches)")
      ->capture_default_str();
  command->add_option("--size", options->size,
                      "render exactly WxH pixels in a window of that size (default: a 1280x720 window, rendering at "
                      "the window's size as it changes)");
  command->add_option("--exposure", options->exposure, "display and PNG exposure in stops (+/- keys)")
      ->capture_default_str()
      ->check(finiteNumber());
  command->add_option("--tone", options->tone, "display and PNG tone curve: srgb or filmic")->capture_default_str();
  command
      ->add_option("--lightmap", options->lightmaps,
                   "a solved lightmap (.lightmap of 'ibrr bake --method ...') to show as a method; repeat it to "
                   "compare several (their methods are then named lightmap:FILE)")
      ->allow_extra_args(false);  // one file per --lightmap: never swallow SCENE
  command->add_option("--matrix", options->matrix,
                      "a saved form-factor matrix ('ibrr bake --method matrix --save-matrix FILE'), shown as a "
                      "lightmap method and relit in the window: arrow keys move light 0 along x and z, PageUp/"
                      "PageDown along y, Backspace puts it back (the overlay shows the relight time)");
  command->add_option("--light-step", options->lightStep,
                      "with --matrix: scene units a key press moves the light (default: 2% of the scene's diagonal)");
  command->add_option("--reference", options->reference,
                      "reference image (.exr/.pfm of 'ibrr reference') for the 'error' method; its STEM.json names "
                      "the camera it was rendered from");
  command->add_option("--script", options->script,
                      "JSON of camera keyframes and screenshots at frames, for tests and demos: {\"keyframes\": "
                      "[{\"frame\": 0, \"camera\": \"cornell\"}, {\"frame\": 99, \"eye\": [x,y,z], \"target\": "
                      "[x,y,z], \"fov\": 40}], \"screenshots\": [{\"frame\": 0, \"name\": \"front\", \"method\": "
                      "\"ibrr\", \"filter\": \"box\"}], \"lights\": [{\"frame\": 1, \"light\": 0, "
                      "\"offset\": [50, 0, 0]}] "
                      "(light moves need --matrix)}; the run ends after its last frame");
  command->add_option("--frames", options->frames, "stop after N frames (0: when the window closes or the script ends)")
      ->capture_default_str();
  command->add_flag("--offscreen", options->offscreen,
                    "no window: draw every frame into an offscreen framebuffer of --size (default 1280x720) on a "
                    "headless EGL context, the GPU's on a GPU server (xvfb-run would give the software renderer); no "
                    "input, so give --script or --frames");
  command
      ->add_option("--screenshot-dir", options->screenshotDir,
                   "folder for screenshots (F12: ibrr-view-DATE-TIME.png + .exr; Shift+F12: the window with its "
                   "overlay, .png; never overwriting)")
      ->capture_default_str();
  command->add_option("--timings", options->timings,
                      "write per-frame times to this CSV (frame, method, frame/G-buffer/reconstruction/present "
                      "ms, and the textures the frame read back to the CPU)");
  command
      ->add_option("--keller-paths", options->kellerPaths,
                   "light paths of the live Keller view (0: --paths); its frame cost grows with the VPLs")
      ->capture_default_str();
  MethodFlags bakeFlags;  // the store the viewer bakes when it has none, and Keller's frame
  declareLightPathFlags(bakeFlags, options->bake);
  declareBiasCompensationFlags(bakeFlags, options->bake);
  addFlagsToCommand(*command, bakeFlags);
  command->add_option("--ldc", options->bake.ldcResolution, "R of a store baked in the window: pixels per LDI side")
      ->capture_default_str();
  command->footer(
      "Keys: W A S D move, Q E down/up, Shift run, mouse wheel speed, right button + drag look;\n"
      "      Tab method, F filter, R GPU/CPU reconstruction, C or 1-9 camera, + - exposure, H overlay,\n"
      "      F12 screenshot (Shift+F12 the window with its overlay), Esc quit; with --matrix, arrows and\n"
      "      PageUp/PageDown move light 0.\n"
      "Without a display run it under a virtual X server (xvfb-run -a), script it with --offscreen, or render\n"
      "headless with 'ibrr render'.\n"
      "Examples:\n  ibrr view cornell --store cornell.ibrr\n"
      "  ibrr view cornell                      # bakes cornell.ibrr in the window first\n"
      "  ibrr view scenes/conference.json --store conference.ibrr --method albedo --camera overview\n"
      "  xvfb-run -a ibrr view cornell --store cornell.ibrr --script walk.json --size 1280x720 --timings t.csv\n"
      "  ibrr view cornell --store cornell.ibrr --offscreen --script walk.json --size 1280x720 --timings t.csv");
  command->callback([options] { runView(*options); });
}

}  // namespace ibrr::app
