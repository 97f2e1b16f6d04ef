#include "compare/compare.hpp"

#include "gpu/context.hpp"
#include "gpu/scene_renderer.hpp"
#include "metrics/metrics.hpp"
#include "rays/embree_scene.hpp"
#include "rays/pinhole.hpp"
#include "rays/reference.hpp"
#include "scene/load.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

#include <cmath>
#include <thread>

namespace ibrr::compare {
namespace {

const MethodRunner& findRunner(std::span<const MethodRunner> runners, const std::string& name) {
  for (const MethodRunner& runner : runners)
    if (runner.name == name) return runner;
  throw Error("--methods: unknown method '" + name + "'; implemented: " + methodRunnerNames(runners));
}

Reference makeReference(const scene::Scene& scene, const rays::EmbreeScene& embree, const scene::Camera& camera,
                        std::size_t index, const CompareOptions& options) {
  Reference reference;
  reference.camera = camera.name;
  if (!options.references.empty()) {
    const std::filesystem::path& file = options.references[index];
    reference.image = readImage(file);
    if (reference.image.width != options.width || reference.image.height != options.height)
      throw Error("--reference " + file.string() + " is " + std::to_string(reference.image.width) + "x" +
                  std::to_string(reference.image.height) + " but the report is " + std::to_string(options.width) + "x" +
                  std::to_string(options.height) + " (--size); render it at that size with 'ibrr reference'");
    reference.source = file.string();
  } else {
    rays::ReferenceOptions ref;
    ref.camera = camera.name;
    ref.width = options.width;
    ref.height = options.height;
    ref.seed = options.seed;
    ref.spp = options.referenceSpp > 0              ? options.referenceSpp
              : options.quality == Quality::Final   ? 4096u
              : options.quality == Quality::Preview ? 256u
                                                    : 16u;
    const rays::ReferenceImage image = rays::renderReference(embree, ref);
    reference.image = image.radiance;
    reference.spp = image.spp;
    reference.seconds = image.seconds;
    reference.source = "rendered";
  }
  (void)scene;
  reference.mask = rays::maskOutEmitters(embree, camera, options.width, options.height);
  return reference;
}

}  // namespace

ImageError MethodContext::measure(std::size_t camera, const Image& image) const {
  const Reference& reference = references[camera];
  const metrics::ErrorMetrics m = metrics::compareImages(image, reference.image, reference.mask);
  return {m.relativeRmse, m.relMse, m.energyRatio};
}

double MethodContext::meanError(const std::function<Image(std::size_t)>& render) const {
  double sum = 0.0;
  for (std::size_t c = 0; c < cameras.size(); ++c) sum += measure(c, render(c)).relativeRmse;
  return sum / double(cameras.size());
}

std::string methodRunnerNames(std::span<const MethodRunner> runners) {
  std::string names;
  for (const MethodRunner& runner : runners) names += (names.empty() ? "" : ", ") + std::string(runner.name);
  return names;
}

Quality parseQuality(const std::string& text) {
  if (text == "smoke") return Quality::Smoke;
  if (text == "preview") return Quality::Preview;
  if (text == "final") return Quality::Final;
  throw Error("--quality '" + text + "': choose preview or final (or smoke, for tests)");
}

std::string qualityName(Quality quality) {
  switch (quality) {
    case Quality::Smoke:
      return "smoke";
    case Quality::Preview:
      return "preview";
    case Quality::Final:
      return "final";
  }
  return "?";
}

void validateCompareOptions(const CompareOptions& options, std::span<const MethodRunner> runners) {
  for (const std::string& name : options.methods) (void)findRunner(runners, name);
  if (!(options.budgetSeconds >= 0.0) || !std::isfinite(options.budgetSeconds))
    throw Error("--budget must be a non-negative number of seconds");
  if (options.width < 8 || options.height < 8 || options.width > 4096 || options.height > 4096)
    throw Error("--size must be between 8x8 and 4096x4096");
  if (options.output.empty()) throw Error("-o REPORT_FOLDER is required");
}

CompareResults runComparison(const CompareOptions& options, std::span<const MethodRunner> runners) {
  validateCompareOptions(options, runners);
  CompareResults results;
  results.options = options;
  const scene::Scene scene = scene::loadScene(scene::resolveScenePath(options.scene));
  results.sceneName = scene.sourcePath.stem().string();
  results.sceneFingerprint = scene.fingerprint();
  results.triangles = scene.triangleCount();
  results.cpu = std::to_string(std::thread::hardware_concurrency()) + " hardware threads";

  std::vector<scene::Camera> cameras;
  if (options.cameras.empty())
    cameras = scene.cameras;
  else
    for (const std::string& name : options.cameras) cameras.push_back(scene.camera(name));
  if (!options.references.empty() && options.references.size() != cameras.size())
    throw Error("--reference: give one image per camera (" + std::to_string(cameras.size()) + " cameras, " +
                std::to_string(options.references.size()) + " references)");

  const rays::EmbreeScene embree(scene);
  for (std::size_t c = 0; c < cameras.size(); ++c) {
    info("reference for camera " + cameras[c].name);
    results.references.push_back(makeReference(scene, embree, cameras[c], c, options));
  }

  const auto context = gpu::createHeadlessContext();
  results.gpu = context->info().summary();
  const gpu::SceneRenderer geometry(scene);  // uploaded once, drawn by every method's renders
  const MethodContext methodContext{scene, cameras, results.references, options, &geometry};
  std::vector<std::string> names = options.methods;
  if (names.empty())
    for (const MethodRunner& runner : runners) names.emplace_back(runner.name);
  for (const std::string& name : names) {
    info("method " + name);
    MethodResult result = findRunner(runners, name).run(methodContext);
    result.method = name;
    for (const CameraResult& camera : result.cameras)
      info("  " + camera.camera + ": relRMSE " + std::to_string(camera.error.relativeRmse));
    results.methods.push_back(std::move(result));
  }
  return results;
}

}  // namespace ibrr::compare
