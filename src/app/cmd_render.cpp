// `ibrr render SCENE [--method NAME] [the method's flags: --store FILE, --lightmap FILE, --matrix FILE --move-light
// N:DX,DY,DZ, ...] -o FILE`: renders one view of a scene headless on the GPU through the display of a row of the
// method table (app/methods.hpp) and writes the linear image (.exr/.pfm) or a tone-mapped PNG. The flags every
// display takes (the camera, the size, the output) are this file's; each display declares its own in its method's
// file (RenderInputs), and a flag of another display is refused.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "app/methods.hpp"
#include "display/render_methods.hpp"
#include "gpu/context.hpp"
#include "util/image.hpp"
#include "util/log.hpp"
#include "util/stopwatch.hpp"
#include "util/supersample.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <span>
#include <vector>

namespace ibrr::app {
namespace {

// The flags every display takes.
struct RenderOptions {
  std::string scene;
  std::string method;
  std::string camera;
  std::vector<float> eye, target;
  float fov = 0.0f;
  std::string size;
  std::string output;
  float exposure = 0.0f;
  std::string tone = "srgb";
  int supersample = 1;
};

// One `ibrr render`: the common flags, and every display of the method table with its inputs and their flags.
struct RenderCommand {
  RenderOptions options;
  std::vector<const Method*> rows;                  // the rows with a display
  std::vector<std::unique_ptr<RenderInputs>> inputs;  // rows[k]'s (null: it reads no flag)
  std::deque<MethodFlags> flags;                    // rows[k]'s declared flags (stable: `declared` points in)
  std::vector<DeclaredFlags> declared;
  CommandFlags commandFlags;
};

// The camera: a named one, or one given by --eye/--target/--fov (which may also adjust a named one).
scene::Camera chooseCamera(const scene::Scene& scene, const RenderOptions& options) {
  scene::Camera camera = scene.camera(options.camera);
  if (!options.eye.empty()) camera.eye = {options.eye[0], options.eye[1], options.eye[2]};
  if (!options.target.empty()) camera.target = {options.target[0], options.target[1], options.target[2]};
  if (options.fov != 0.0f) {
    if (!(options.fov > 0.0f && options.fov < 180.0f)) throw Error("--fov must be in (0, 180) degrees");
    camera.verticalFovDegrees = options.fov;
  }
  if (!(glm::length(glm::cross(camera.target - camera.eye, camera.up)) > 0.0f))
    throw Error("--eye/--target: the view direction must not be zero or parallel to up (0, 1, 0)");
  if (!options.eye.empty() || !options.target.empty()) camera.name = "custom";
  return camera;
}

// The display the flags ask for: --method, else the display whose input file was given (one that needs a file and
// declares a flag given: --store is ibrr's, --lightmap and --matrix the lightmap's), else the albedo view.
std::size_t chosenDisplay(const CLI::App& command, const RenderCommand& render) {
  const std::string name = render.options.method.empty() ? std::string() : render.options.method;
  for (std::size_t k = 0; k < render.rows.size() && name.empty(); ++k) {
    const display::RenderMethod& shown = *render.rows[k]->display;
    if (shown.needsStore || shown.needsLightmap)
      for (const MethodFlags::Declared& declared : render.flags[k].declared())
        if (command.get_option(declared.flag)->count() > 0) return k;
  }
  const std::string wanted = name.empty() ? std::string(defaultRenderMethod()) : name;
  for (std::size_t k = 0; k < render.rows.size(); ++k)
    if (render.rows[k]->display->name == wanted) return k;
  throw OptionError("unknown method '" + wanted + "'; choose one of: " + renderMethodNames());
}

// Fails on bad common arguments before any work, never after.
void checkCommonArguments(const RenderOptions& options) {
  checkOutputPath(options.output);
  if (options.tone != "srgb" && options.tone != "filmic")
    throw OptionError("--tone '" + options.tone + "': choose srgb or filmic");
  if (options.supersample < 1 || options.supersample > kMaxSupersample)
    throw OptionError("--supersample must be in [1, " + std::to_string(kMaxSupersample) + "]");
}

// Renders factor² samples a pixel on a rotated grid and averages them (util/supersample.hpp); a pixel is a hole
// when any of its samples is one.
display::RenderOutput renderSupersampled(const display::RenderMethod& method, const scene::Scene& scene,
                                         const scene::Camera& camera, scene::ImageSize size, int factor,
                                         const display::RenderSettings& settings) {
  const int frameWidth = size.width * factor, frameHeight = size.height * factor;
  display::RenderOutput output =
      method.render({scene, camera, frameWidth, frameHeight, settings, nullptr, factor});
  if (factor == 1) return output;
  output.image = resolveSupersampled(output.image, factor);
  if (!output.holes.empty()) output.holes = resolveSupersampledMask(output.holes, frameWidth, frameHeight, factor);
  return output;
}

void runRender(const CLI::App& command, RenderCommand& render) {
  const RenderOptions& options = render.options;
  const std::size_t chosen = chosenDisplay(command, render);
  const display::RenderMethod& method = *render.rows[chosen]->display;
  assignGivenFlags(command, render.commandFlags, render.declared, method.name);
  RenderInputs* inputs = render.inputs[chosen].get();
  checkCommonArguments(options);
  if (inputs) inputs->check(render.flags[chosen]);

  const scene::Scene scene = loadSceneArgument(options.scene);
  const scene::Camera camera = chooseCamera(scene, options);
  const scene::ImageSize size = options.size.empty() ? scene.defaultImageSize : parseImageSize(options.size);
  display::RenderSettings settings;
  if (inputs) inputs->load(scene, settings);
  checkOutputPath(options.output);  // every input is read and recorded now: the output may be none of them
  const auto context = gpu::createHeadlessContext();
  verbose("GPU: " + context->info().summary());
  const scene::Scene* moved = inputs ? inputs->prepareOnGpu(scene, settings) : nullptr;
  const scene::Scene& shown = moved ? *moved : scene;
  const Stopwatch stopwatch;
  display::RenderOutput output = renderSupersampled(method, shown, camera, size, options.supersample, settings);
  const double seconds = stopwatch.seconds();
  ToneMapping tone;
  tone.exposureStops = options.exposure;
  tone.curve = options.tone == "filmic" ? ToneCurve::Filmic : ToneCurve::Srgb;
  OutputSet outputs;  // the picture and what the display writes beside it are written all or none
  stageImage(outputs, output.image, options.output, tone);
  if (inputs) inputs->stageBeside(output, outputs, tone);
  outputs.commit();
  std::printf("wrote %s (%dx%d, %s, camera %s, %.3f s on %s)\n", options.output.c_str(), size.width, size.height,
              std::string(method.name).c_str(), camera.name.c_str(), seconds, context->info().renderer.c_str());
  if (inputs) inputs->printSummary(output);
}

// The common flags: the camera, the size, the output and its tone mapping.
void addCommonFlags(CLI::App& command, RenderOptions& options) {
  command.add_option("--camera", options.camera, "camera name from the manifest (default: the first)");
  command.add_option("--eye", options.eye, "camera position X,Y,Z (overrides the named camera's)")
      ->delimiter(',')
      ->expected(3)
      ->check(finiteNumber());
  command.add_option("--target", options.target, "point looked at X,Y,Z")
      ->delimiter(',')
      ->expected(3)
      ->check(finiteNumber());
  command.add_option("--fov", options.fov, "vertical field of view, degrees")->check(finiteNumber());
  command.add_option("--size", options.size, "image size WxH (default: the manifest's image size, else 512x512)");
  command
      .add_option("--supersample", options.supersample,
                  "N² samples per pixel on a rotated grid (N-rooks: no two in a row or a column of N² sub-pixel "
                  "cells), averaged: anti-aliased edges, as the reference's pixels have")
      ->capture_default_str();
  command
      .add_option("-o,--output", options.output,
                  "output file: .png (exposure + sRGB/filmic tone curve), .exr or .pfm (linear radiance)")
      ->required();
  command.add_option("--exposure", options.exposure, "PNG exposure in stops (value × 2^stops)")
      ->capture_default_str()
      ->check(finiteNumber());
  command.add_option("--tone", options.tone, "PNG tone curve: srgb (clamp) or filmic (ACES fit)")
      ->capture_default_str();
}

}  // namespace

void addRenderCommand(CLI::App& app) {
  auto render = std::make_shared<RenderCommand>();
  CLI::App* command = app.add_subcommand("render", "Render one view of a scene headless to PNG, EXR or PFM");
  addSceneArgument(*command, render->options.scene);
  command->add_option("--method,--view", render->options.method,
                      "what to render: " + renderMethodNames() +
                          " (default: the display of the input given, --store: ibrr, --lightmap or --matrix: "
                          "lightmap; else albedo)");
  addCommonFlags(*command, render->options);
  // Every display declares its own flags, bound to its own inputs; the command registers each flag once.
  for (const Method* row : methods()) {
    if (!row->display) continue;
    render->rows.push_back(row);
    render->inputs.push_back(row->makeRenderInputs ? row->makeRenderInputs() : nullptr);
    MethodFlags& flags = render->flags.emplace_back();
    if (render->inputs.back()) render->inputs.back()->declareFlags(flags);
    render->declared.push_back({row->display->name, &flags});
  }
  registerMethodFlags(*command, render->declared, render->commandFlags);
  command->footer(
      "Examples:\n  ibrr render cornell --method albedo -o cornell_albedo.png\n"
      "  ibrr render cornell --store cornell.ibrr -o cornell.exr\n"
      "  ibrr render cornell --method keller --paths 512 -o keller.exr\n"
      "  ibrr render cornell --lightmap cornell.lightmap --supersample 2 -o lightmap.png\n"
      "  ibrr render cornell --matrix cornell.ffmatrix --move-light 0:50,0,0 --supersample 2 -o moved.exr\n"
      "  ibrr render cornell --store cornell.ibrr --eye 100,300,-200 --target 278,200,300 --fov 60 -o side.png\n"
      "Each flag's help names the displays that read it; a flag given to another display is refused.");
  command->callback([render, command] { runRender(*command, *render); });
}

}  // namespace ibrr::app
