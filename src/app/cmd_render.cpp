// `ibrr render SCENE --view NAME -o FILE`: renders one camera of a scene headless on the GPU and
// writes the linear image (.exr/.pfm) or a tone-mapped PNG.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "display/image.hpp"
#include "display/render_methods.hpp"
#include "gpu/context.hpp"
#include "util/log.hpp"

#include <chrono>
#include <cstdio>

namespace ibrr::app {
namespace {

struct RenderOptions {
  std::string scene;
  std::string view = "albedo";
  std::string camera;
  std::string size;
  std::string output;
  float exposure = 0.0f;
  std::string tone = "srgb";
};

void runRender(const RenderOptions& options) {
  const display::RenderMethod& method = display::findRenderMethod(options.view);
  display::checkOutputPath(options.output);  // fail before any work, never after
  if (options.tone != "srgb" && options.tone != "filmic")
    throw Error("--tone '" + options.tone + "': choose srgb or filmic");
  const scene::Scene scene = loadSceneArgument(options.scene);
  const scene::Camera& camera = scene.camera(options.camera);
  const scene::ImageSize size = options.size.empty() ? scene.defaultImageSize : parseImageSize(options.size);
  const auto context = gpu::createHeadlessContext();
  detail("GPU: " + context->info().summary());
  const auto start = std::chrono::steady_clock::now();
  const display::Image image = method.render({scene, camera, size.width, size.height});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  display::ToneMapping tone;
  tone.exposureStops = options.exposure;
  tone.curve = options.tone == "filmic" ? display::ToneCurve::Filmic : display::ToneCurve::Srgb;
  display::writeImage(image, options.output, tone);
  std::printf("wrote %s (%dx%d, view %s, camera %s, %.3f s on %s)\n", options.output.c_str(), size.width, size.height,
              std::string(method.name).c_str(), camera.name.c_str(), seconds, context->info().renderer.c_str());
}

}  // namespace

void addRenderCommand(CLI::App& app) {
  auto options = std::make_shared<RenderOptions>();
  CLI::App* command = app.add_subcommand("render", "Render one camera of a scene headless to PNG, EXR or PFM");
  addSceneArgument(*command, options->scene);
  command->add_option("--view", options->view, "what to render: " + display::renderMethodNames())
      ->capture_default_str();
  command->add_option("--camera", options->camera, "camera name from the manifest (default: the first)");
  command->add_option("--size", options->size, "image size WxH (default: the manifest's image size, else 512x512)");
  command
      ->add_option("-o,--output", options->output,
                   "output file: .png (exposure + sRGB/filmic tone curve), .exr or .pfm (linear radiance)")
      ->required();
  command->add_option("--exposure", options->exposure, "PNG exposure in stops (value × 2^stops)")
      ->capture_default_str();
  command->add_option("--tone", options->tone, "PNG tone curve: srgb (clamp) or filmic (ACES fit)")
      ->capture_default_str();
  command->footer(
      "Examples:\n  ibrr render cornell --view albedo -o cornell_albedo.png\n"
      "  ibrr render scenes/cornell.json --view normal --size 256x256 -o normals.exr");
  command->callback([options] { runRender(*options); });
}

}  // namespace ibrr::app
