// `ibrr diff A B [--mask emitters] [-o heat.png] [--dark-pixels dark.png]`: the error of image A
// against the reference B (relative RMSE, relMSE, energy ratio per channel), over all pixels or a
// mask, a false-colour picture of the per-pixel error, and the dark pixels (below half the
// reference's luminance: a lightmap's dark seams), outside the direct light's shadows too when
// the scene is known.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "metrics/metrics.hpp"
#include "rays/embree_scene.hpp"
#include "rays/pinhole.hpp"
#include "util/error.hpp"
#include "util/image.hpp"
#include "util/log.hpp"


#include <cstdio>
#include <filesystem>
#include <memory>

namespace ibrr::app {
namespace {

struct DiffOptions {
  std::string test;
  std::string reference;
  std::string mask;
  std::string scene;
  std::string camera;
  std::string output;
  std::string darkOutput;
  float scale = 0.0f;
};

// The scene and camera of the comparison: --scene and --camera, else those of the reference's
// .json. Empty scene when neither names one.
std::pair<std::string, std::string> comparedScene(const DiffOptions& options) {
  auto [sceneArgument, camera, malformed] = readReferenceSidecar(options.reference);
  if (!options.scene.empty()) sceneArgument = options.scene;
  if (!options.camera.empty()) camera = options.camera;
  return {sceneArgument, camera};
}

std::vector<std::uint8_t> buildMask(const DiffOptions& options, const Image& reference,
                                    const scene::Scene* scene, const rays::EmbreeScene* embree,
                                    const std::string& camera) {
  if (options.mask.empty()) return {};
  if (options.mask == "emitters") {
    if (scene == nullptr)
      throw Error(
          "--mask emitters needs the scene: give --scene SCENE (and --camera NAME), or diff against a "
          "reference written by 'ibrr reference', whose .json names them");
    return rays::maskOutEmitters(*embree, scene->camera(camera), reference.width, reference.height);
  }
  // A mask image (.exr/.pfm): pixels whose value is not zero are compared.
  const Image image = readImage(options.mask);
  if (image.width != reference.width || image.height != reference.height)
    throw Error("mask " + options.mask + " is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                " but the images are " + std::to_string(reference.width) + "x" + std::to_string(reference.height));
  std::vector<std::uint8_t> mask(image.pixels.size());
  for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = glm::any(glm::notEqual(image.pixels[i], glm::vec3(0.0f)));
  return mask;
}

void runDiff(const DiffOptions& options) {
  if (!options.output.empty()) checkOutputPath(options.output);
  if (!options.darkOutput.empty()) checkOutputPath(options.darkOutput);
  const Image test = readImage(options.test);
  const Image reference = readImage(options.reference);
  const auto [sceneArgument, camera] = comparedScene(options);
  std::unique_ptr<scene::Scene> scene;
  std::unique_ptr<rays::EmbreeScene> embree;
  if (!sceneArgument.empty()) {
    scene = std::make_unique<scene::Scene>(loadSceneArgument(sceneArgument));
    embree = std::make_unique<rays::EmbreeScene>(*scene);
  }
  const std::vector<std::uint8_t> mask = buildMask(options, reference, scene.get(), embree.get(), camera);
  // Every input is read and recorded now: no output may be one of them.
  if (!options.output.empty()) checkOutputPath(options.output);
  if (!options.darkOutput.empty()) checkOutputPath(options.darkOutput);
  const metrics::ErrorMetrics metrics = metrics::compareImages(test, reference, mask);
  std::printf("%s vs %s%s\n", options.test.c_str(), options.reference.c_str(),
              options.mask.empty() ? "" : (" (mask: " + options.mask + ")").c_str());
  std::printf("relRMSE      %.6g\nrelMSE       %.6g\nenergy ratio %.5f %.5f %.5f (R G B)\npixels       %zu of %zu\n",
              metrics.relativeRmse, metrics.relMse, metrics.energyRatio.r, metrics.energyRatio.g, metrics.energyRatio.b,
              metrics.pixelCount, reference.pixels.size());
  // Dark pixels: everywhere, and outside the direct light's shadows when the scene is known (a
  // shadow is dark in every method; a seam is dark where the light reaches).
  const metrics::DarkPixels dark = metrics::countDarkPixels(test, reference, mask);
  std::printf("dark pixels  %.3f%% (%zu of %zu below half the reference's luminance)\n", 100.0 * dark.fraction(),
              dark.dark, dark.compared);
  std::vector<std::uint8_t> shadow;
  if (embree && scene->hasLights()) {
    shadow = rays::directShadowMask(*embree, scene->camera(camera), reference.width, reference.height);
    std::vector<std::uint8_t> lit(shadow.size());
    for (std::size_t i = 0; i < shadow.size(); ++i) lit[i] = shadow[i] ? 0 : 1;
    const metrics::DarkPixels outside = metrics::countDarkPixels(test, reference, metrics::intersectMasks(mask, lit));
    std::printf(
        "  outside shadows %.3f%% (%zu of %zu; the pixels that receive less than half of their unoccluded "
        "direct light left out)\n",
        100.0 * outside.fraction(), outside.dark, outside.compared);
  }
  OutputSet outputs;  // the error image and the dark-pixel image are written both or neither
  std::string written;
  if (!options.output.empty()) {
    float scale = 0.0f;
    const Image heat = metrics::errorHeatmap(test, reference, mask, options.scale, &scale);
    stageImage(outputs, heat, options.output);
    char line[512];
    std::snprintf(line, sizeof line, "wrote %s (turbo colour map: blue = 0, red = per-pixel relative error %.4g%s)\n",
                  options.output.c_str(), scale, options.scale > 0.0f ? "" : ", the 99th percentile");
    written += line;
  }
  if (!options.darkOutput.empty()) {
    stageImage(outputs, metrics::darkPixelImage(test, reference, mask, shadow), options.darkOutput);
    written += "wrote " + options.darkOutput + " (A in grey; dark pixels in red, or blue inside the direct light's "
               "shadows)\n";
  }
  outputs.commit();
  std::fputs(written.c_str(), stdout);
}

}  // namespace

void addDiffCommand(CLI::App& app) {
  auto options = std::make_shared<DiffOptions>();
  CLI::App* command =
      app.add_subcommand("diff", "Error of image A against reference B: relRMSE, relMSE, energy ratio, heat map");
  command->add_option("A", options->test, "image to judge (.exr or .pfm, linear)")->required();
  command->add_option("B", options->reference, "reference image (.exr or .pfm, linear), e.g. from 'ibrr reference'")
      ->required();
  command->add_option("--mask", options->mask,
                      "'emitters' to leave out pixels that show a light (needs the scene: --scene, or B's .json), "
                      "or an .exr/.pfm whose non-zero pixels are compared");
  command->add_option("--scene", options->scene,
                      "scene for --mask emitters and the shadows of the dark-pixel count (default: from B's .json)");
  command->add_option("--camera", options->camera,
                      "camera for --mask emitters (default: from B's .json, else the first)");
  command->add_option("-o,--output", options->output, "write a false-colour error image (.png, or .exr/.pfm)");
  command->add_option("--scale", options->scale, "error at the red end of the colour map (default: 99th percentile)")
      ->check(finiteNumber());
  command->add_option("--dark-pixels", options->darkOutput,
                      "write a picture of the dark pixels (below half the reference's luminance: dark seams) in red, "
                      "blue inside shadows (.png, or .exr/.pfm)");
  command->footer(
      "Examples:\n  ibrr diff ibrr.exr ref.exr --mask emitters -o heat.png\n"
      "  ibrr diff lightmap.exr ref.exr --mask emitters --scene cornell --dark-pixels seams.png\n"
      "  ibrr diff a.pfm b.pfm --mask emitters --scene cornell");
  command->callback([options] { runDiff(*options); });
}

}  // namespace ibrr::app
