#pragma once
// `ibrr compare`: every radiosity method on one scene, under the same budget, against one reference:
// bake (or solve), render every camera, measure error, memory and display time, and record error
// against time during the bake (IBRR after 1/8, 1/4 and 1/2 of its light paths; the lightmap
// solvers after every iteration). The figures go to a report (report.hpp).
//
// The methods are the callers' (the `ibrr` method table, app/methods.hpp: each method's runner is defined
// in its own file); this library runs them, measures and records.
#include "gpu/scene_renderer.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ibrr::compare {

// Settings presets. Final: every method at its documented defaults (the settings of its acceptance
// figures). Preview: about a quarter of the work. Smoke: for tests (seconds; figures mean nothing).
enum class Quality { Smoke, Preview, Final };

struct CompareOptions {
  std::string scene;                 // built-in name, manifest or mesh
  std::vector<std::string> methods;  // empty = every implemented method
  std::vector<std::string> cameras;  // empty = every camera of the scene
  Quality quality = Quality::Final;
  double budgetSeconds = 0.0;                     // > 0: each method's bake/solve stops at this wall time
  std::vector<std::filesystem::path> references;  // one linear image per camera, in camera order; empty = render
  std::uint32_t referenceSpp = 0;                 // 0 = the quality's (preview 256, final 4096)
  int width = 256;                                // report images
  int height = 256;
  std::uint32_t seed = 0;        // light paths, hemicube rotations, reference samples
  std::filesystem::path output;  // the report folder
  bool exportPages = false;      // each baked method's walkthrough page (`ibrr export --html`) in the report
};

// Error of one image against the reference (emitter pixels left out).
struct ImageError {
  double relativeRmse = 0.0;
  double relMse = 0.0;
  glm::dvec3 energyRatio{1.0};
};

struct CameraResult {
  std::string camera;
  Image image;  // linear radiance
  ImageError error;
  double displayMilliseconds = 0.0;  // one frame at the report size, after a warm-up frame
  std::uint64_t holePixels = 0;      // covered pixels the method had no value for (IBRR: no layer)
  std::uint64_t coveredPixels = 0;
};

// One point of a convergence curve: mean relRMSE over the cameras after `seconds` of bake/solve.
struct ConvergencePoint {
  double seconds = 0.0;
  double relativeRmse = 0.0;
  std::string label;  // "1/8 of the paths", "iteration 3"
};

struct MethodResult {
  std::string method;
  std::string summary;        // one line: what was run
  std::string settingsJson;   // the exact settings, as JSON
  double bakeSeconds = 0.0;   // precomputation (0 for Keller, whose work is all in the frame)
  std::uint64_t bytes = 0;    // what the display needs: store, lightmap or matrix
  std::string bytesWhat;      // "store", "lightmap radiance", ...
  std::uint64_t invalid = 0;  // holes (IBRR, over all cameras) or invalid texels (lightmaps)
  std::string invalidWhat;
  std::vector<CameraResult> cameras;
  std::vector<ConvergencePoint> convergence;
  std::string page;  // with exportPages: the walkthrough page of what it baked (empty for Keller's frame)
};

struct Reference {
  std::string camera;
  Image image;
  std::vector<std::uint8_t> mask;  // 1 = compared (not an emitter)
  std::uint32_t spp = 0;
  double seconds = 0.0;
  std::string source;  // the file it came from, or "rendered"
};

struct CompareResults {
  CompareOptions options;
  std::string sceneName;
  std::uint64_t sceneFingerprint = 0;
  std::size_t triangles = 0;
  std::string gpu;  // GL renderer summary
  std::string cpu;  // hardware threads
  std::vector<Reference> references;
  std::vector<MethodResult> methods;
};

// What a method runner gets: the scene, the cameras, the references and the options, with a GL
// context current; `measure` turns an image of camera c into its error.
struct MethodContext {
  const scene::Scene& scene;
  std::span<const scene::Camera> cameras;
  std::span<const Reference> references;
  const CompareOptions& options;
  const gpu::SceneRenderer* geometry = nullptr;  // the scene on the GPU, shared by every render
  ImageError measure(std::size_t camera, const Image& image) const;
  // Mean relRMSE over the cameras of images rendered by `render(camera index)`.
  double meanError(const std::function<Image(std::size_t)>& render) const;
};

// One entry of a comparison: `--methods NAME`, what it runs, and its run (the report's row; method
// runners use compare/method_run.hpp). A method may give several (e.g. with and without an option).
struct MethodRunner {
  std::string_view name;
  std::string_view summary;
  MethodResult (*run)(const MethodContext& context);
};

// "ibrr, keller, gather" for help texts and errors.
[[nodiscard]] std::string methodRunnerNames(std::span<const MethodRunner> runners);
// Throws ibrr::Error naming the known methods and quality levels for a bad --methods/--quality.
void validateCompareOptions(const CompareOptions& options, std::span<const MethodRunner> runners);
Quality parseQuality(const std::string& text);
std::string qualityName(Quality quality);

// Runs the whole comparison of `runners` (all of them, or those --methods names; creates its own headless GL
// context); progress on stderr.
[[nodiscard]] CompareResults runComparison(const CompareOptions& options, std::span<const MethodRunner> runners);

}  // namespace ibrr::compare
