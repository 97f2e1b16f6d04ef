// `ibrr render SCENE [--method NAME] [--store FILE | --lightmap FILE | --matrix FILE [--move-light
// N:DX,DY,DZ ...]] -o FILE`: renders one view of a scene headless on the GPU and writes the linear
// image (.exr/.pfm) or a tone-mapped PNG. With --matrix the lightmap is relit from a saved
// form-factor matrix (lightmap/matrix.hpp) with the lights moved, without recomputing the matrix,
// and the picture draws the moved lights where they went.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "app/methods.hpp"
#include "display/render_methods.hpp"
#include "gpu/context.hpp"
#include "ibrr/store_file.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/matrix.hpp"
#include "util/image.hpp"
#include "util/log.hpp"
#include "util/stopwatch.hpp"
#include "util/supersample.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ibrr::app {
namespace {

struct RenderOptions {
  std::string scene;
  std::string method;
  std::string store;
  std::string lightmap;
  std::string matrix;
  std::vector<std::string> moveLight;
  std::string camera;
  std::vector<float> eye, target;
  float fov = 0.0f;
  std::string size;
  std::string output;
  std::string holes;
  std::string reconstruct = "gpu";
  std::string filter = "bilinear";
  int filterRadius = 1;
  float exposure = 0.0f;
  std::string tone = "srgb";
  int supersample = 1;
  bake::BakeOptions vplOptions;
};

display::ReconstructionOptions reconstructionOptions(const RenderOptions& options) {
  display::ReconstructionOptions reconstruction;
  reconstruction.filter = parseRetrievalFilter(options.filter, "--filter");
  if (options.filterRadius < 0 || options.filterRadius > 8) throw Error("--filter-radius must be in [0, 8]");
  reconstruction.filterRadius = options.filterRadius;
  return reconstruction;
}

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

// The view shown when neither --method nor a flag of one method is given.
constexpr const char* kDefaultRenderMethod = "albedo";

// The method the flags ask for: --method, else the method of the input given (one that needs a file and reads a flag
// given: --store is ibrr's, --lightmap and --matrix the lightmap's), else the albedo view.
std::string renderMethodName(const CLI::App& command, const RenderOptions& options) {
  if (!options.method.empty()) return options.method;
  for (const display::RenderMethod* method : renderMethods())
    if (method->needsStore || method->needsLightmap)
      for (const std::string_view flag : method->reads)
        if (command.get_option(std::string(flag))->count() > 0) return std::string(method->name);
  return kDefaultRenderMethod;
}

// Refuses a flag that another method of the table reads and the chosen one does not (--filter for a lightmap, Keller's
// light paths for a store), naming the methods that read it: it would be ignored without a word.
void refuseFlagsNotRead(const CLI::App& command, const std::string& methodName) {
  std::vector<FlagReader> readers;
  for (const display::RenderMethod* method : renderMethods()) readers.push_back({method->name, method->reads});
  app::refuseFlagsNotRead(command, methodName, readers);
}

// Fails on bad arguments before any work, never after: output paths, names, and the files each method needs (a
// flag of another method was refused before, by refuseFlagsNotRead).
void checkRenderArguments(const RenderOptions& options, const std::string& methodName,
                          const display::RenderMethod& method) {
  const bool relit = !options.matrix.empty();
  checkOutputPath(options.output);
  if (!options.holes.empty()) checkOutputPath(options.holes);
  if (options.tone != "srgb" && options.tone != "filmic")
    throw Error("--tone '" + options.tone + "': choose srgb or filmic");
  if (options.reconstruct != "gpu" && options.reconstruct != "cpu")
    throw Error("--reconstruct '" + options.reconstruct + "': choose gpu or cpu");
  if (method.needsStore && options.store.empty())
    throw Error("--method " + methodName + " needs a store: --store FILE (make one with 'ibrr bake SCENE -o FILE')");
  if (relit && !options.lightmap.empty())
    throw Error("--matrix relights a lightmap; give --matrix FILE or --lightmap FILE, not both");
  if (!options.moveLight.empty() && !relit)
    throw Error(
        "--move-light needs --matrix FILE (make one with 'ibrr bake SCENE --method matrix --save-matrix FILE -o "
        "X.lightmap')");
  if (method.needsLightmap && options.lightmap.empty() && !relit)
    throw Error(
        "--method " + methodName +
        " needs a lightmap: --lightmap FILE (make one with 'ibrr bake SCENE --method gather -o FILE.lightmap')");
  if (options.supersample < 1 || options.supersample > kMaxSupersample)
    throw Error("--supersample must be in [1, " + std::to_string(kMaxSupersample) + "]");
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

// The relit lightmap's summary line: the matrix, the lights moved and the relight's timing.
void printRelightSummary(const std::string& matrixFile, const lightmap::MatrixSolution& solution,
                         lightmap::MatrixStorage storage, std::span<const glm::vec3> lightOffsets,
                         const lightmap::RelightTiming& timing) {
  std::string moved;
  for (std::size_t l = 0; l < lightOffsets.size(); ++l)
    if (lightOffsets[l] != glm::vec3(0.0f)) {
      char text[96];
      std::snprintf(text, sizeof text, "%s%zu by (%g, %g, %g)", moved.empty() ? "" : ", ", l,
                    double(lightOffsets[l].x), double(lightOffsets[l].y), double(lightOffsets[l].z));
      moved += text;
    }
  std::printf(
      "relit from %s (%zu patches, k = %d, %s) without recomputing it; lights moved: %s\n"
      "relight: %.2f ms (emission vector %.2f ms, GPU product %.2f ms, transfer %.2f ms)\n",
      matrixFile.c_str(), solution.size(), solution.bounces, lightmap::matrixStorageName(storage),
      moved.empty() ? "none" : moved.c_str(), timing.directMs + timing.productMs + timing.transferMs,
      timing.directMs, timing.productMs, timing.transferMs);
}

void runRender(const CLI::App& command, const RenderOptions& options) {
  const bool relit = !options.matrix.empty();  // the lightmap comes from a form-factor matrix
  const std::string methodName = renderMethodName(command, options);
  const display::RenderMethod& method = findRenderMethod(methodName);
  checkRenderArguments(options, methodName, method);
  display::RenderSettings settings;
  settings.reconstruction = reconstructionOptions(options);
  settings.cpuReconstruction = options.reconstruct == "cpu";
  settings.vplOptions = options.vplOptions;

  const scene::Scene scene = loadSceneArgument(options.scene);
  const scene::Camera camera = chooseCamera(scene, options);
  const scene::ImageSize size = options.size.empty() ? scene.defaultImageSize : parseImageSize(options.size);
  LayeredDepthCube store;
  if (!options.store.empty()) {
    store = bake::readStoreFile(options.store, scene.fingerprint());  // refuses a store baked for another scene
    settings.store = &store;
  }
  lightmap::Lightmap lightmap;
  lightmap::LightmapAtlas lightmapAtlas;
  if (!options.lightmap.empty()) {
    lightmap = lightmap::loadLightmap(options.lightmap, scene, &lightmapAtlas);  // refuses another scene's
    settings.lightmap = &lightmap;
    settings.lightmapAtlas = &lightmapAtlas;
  }
  std::shared_ptr<lightmap::MatrixSolution> solution;
  std::vector<glm::vec3> lightOffsets;
  if (relit) {
    solution = std::make_shared<lightmap::MatrixSolution>(lightmap::loadMatrix(options.matrix, scene));
    lightOffsets = lightmap::parseLightMoves(options.moveLight, lightmap::matrixLights(scene));
    if (solution->direct == lightmap::MatrixDirect::Matrix && !options.moveLight.empty())
      throw Error("--move-light: " + options.matrix +
                  " was computed with --direct matrix, where the emitters are patches and cannot move; bake it "
                  "with --direct rays");
  }
  // Every input is read and recorded now: no output may be one of them.
  checkOutputPath(options.output);
  if (!options.holes.empty()) checkOutputPath(options.holes);
  const auto context = gpu::createHeadlessContext();
  verbose("GPU: " + context->info().summary());
  lightmap::PatchList lightmapPatches;
  std::optional<scene::Scene> movedScene;  // the scene with its lights where the relight put them
  lightmap::RelightTiming relightTiming;
  lightmap::MatrixStorage relightStorage = lightmap::MatrixStorage::Dense;
  if (relit) {
    lightmapAtlas = lightmap::buildAtlas(scene, solution->atlasOptions);
    lightmapPatches = lightmap::rasterizePatches(scene, lightmapAtlas);
    relightStorage = lightmap::relightStorage(*solution);
    const auto relighter = lightmap::relighterFor(scene, solution, lightmapAtlas, lightmapPatches, options.matrix);
    // The first relight pays the GL's first-use costs (llvmpipe compiles the compute shaders on
    // first dispatch); the one timed and shown is the second, what each later relight costs.
    (void)relighter->relight(lightOffsets);
    relightTiming = relighter->relight(lightOffsets);
    lightmap = lightmap::matrixLightmap(*solution, relighter->readRadiance());
    settings.lightmap = &lightmap;
    settings.lightmapAtlas = &lightmapAtlas;
    settings.lightmapPatches = &lightmapPatches;
    // The moved lights are drawn where they went: the display draws the atlas's world-space
    // vertices, so those move too (their lightmap UVs, and so their texels, stay).
    if (std::any_of(lightOffsets.begin(), lightOffsets.end(), [](glm::vec3 o) { return o != glm::vec3(0.0f); })) {
      movedScene = lightmap::translateLights(scene, lightOffsets);
      lightmapAtlas = lightmap::translateAtlasLights(scene, lightmapAtlas, lightOffsets);
    }
  }
  const scene::Scene& shown = movedScene ? *movedScene : scene;
  const Stopwatch stopwatch;
  display::RenderOutput output = renderSupersampled(method, shown, camera, size, options.supersample, settings);
  const double seconds = stopwatch.seconds();
  ToneMapping tone;
  tone.exposureStops = options.exposure;
  tone.curve = options.tone == "filmic" ? ToneCurve::Filmic : ToneCurve::Srgb;
  OutputSet outputs;  // the picture and its holes image are written both or neither
  stageImage(outputs, output.image, options.output, tone);
  if (!options.holes.empty()) {
    // Holes in red over the dimmed radiance, so they can be found in the picture.
    Image holes = output.image;
    for (std::size_t i = 0; i < holes.pixels.size(); ++i)
      holes.pixels[i] =
          (!output.holes.empty() && output.holes[i]) ? glm::vec3(1.0f, 0.0f, 0.0f) : 0.25f * holes.pixels[i];
    stageImage(outputs, holes, options.holes, tone);
  }
  outputs.commit();
  std::printf("wrote %s (%dx%d, %s, camera %s, %.3f s on %s)\n", options.output.c_str(), size.width, size.height,
              std::string(method.name).c_str(), camera.name.c_str(), seconds, context->info().renderer.c_str());
  if (relit) printRelightSummary(options.matrix, *solution, relightStorage, lightOffsets, relightTiming);
  if (method.needsStore) {
    std::printf("reconstruction: %s, %.2f ms; %zu covered pixels, %zu holes (%.3f%%)\n",
                settings.cpuReconstruction ? "CPU" : "GPU", 1e3 * output.reconstructionSeconds, output.coveredPixels,
                output.holePixels,
                output.coveredPixels ? 100.0 * double(output.holePixels) / double(output.coveredPixels) : 0.0);
  }
}

}  // namespace

void addRenderCommand(CLI::App& app) {
  auto options = std::make_shared<RenderOptions>();
  CLI::App* command = app.add_subcommand("render", "Render one view of a scene headless to PNG, EXR or PFM");
  addSceneArgument(*command, options->scene);
  command->add_option("--method,--view", options->method,
                      "what to render: " + renderMethodNames() +
                          " (default: ibrr with --store, lightmap with --lightmap, else albedo)");
  command->add_option("--store", options->store, "baked IBRR store (.ibrr) for --method ibrr");
  command->add_option(
      "--lightmap", options->lightmap,
      "solved texel lightmap (.lightmap, from 'ibrr bake --method gather, progressive or stochastic') for "
      "--method lightmap, "
      "the default when given");
  command->add_option("--matrix", options->matrix,
                      "saved form-factor matrix (from 'ibrr bake --method matrix --save-matrix FILE'): relight it "
                      "(with --move-light) and render the lightmap, without recomputing the matrix");
  command
      ->add_option("--move-light", options->moveLight,
                   "with --matrix: translate light N by DX,DY,DZ scene units (N:DX,DY,DZ, repeatable; lights are "
                   "numbered as 'ibrr bake --method matrix' lists them: surface lights, then point, then spot)")
      ->allow_extra_args(false);
  command->add_option("--camera", options->camera, "camera name from the manifest (default: the first)");
  command->add_option("--eye", options->eye, "camera position X,Y,Z (overrides the named camera's)")
      ->delimiter(',')
      ->expected(3)
      ->check(finiteNumber());
  command->add_option("--target", options->target, "point looked at X,Y,Z")
      ->delimiter(',')
      ->expected(3)
      ->check(finiteNumber());
  command->add_option("--fov", options->fov, "vertical field of view, degrees")->check(finiteNumber());
  command->add_option("--size", options->size, "image size WxH (default: the manifest's image size, else 512x512)");
  command
      ->add_option("--supersample", options->supersample,
                   "N² samples per pixel on a rotated grid (N-rooks: no two in a row or a column of N² sub-pixel "
                   "cells), averaged: anti-aliased edges, as the reference's pixels have")
      ->capture_default_str();
  command
      ->add_option("-o,--output", options->output,
                   "output file: .png (exposure + sRGB/filmic tone curve), .exr or .pfm (linear radiance)")
      ->required();
  command
      ->add_option("--reconstruct", options->reconstruct,
                   "IBRR reconstruction on the gpu (compute shader) or cpu (TBB)")
      ->capture_default_str();
  command
      ->add_option("--filter", options->filter,
                   "IBRR store retrieval: none (nearest pixel), box (average of the (2k+1)² pixels, the paper's "
                   "kernel) or bilinear")
      ->capture_default_str();
  command->add_option("--filter-radius", options->filterRadius, "k of the box filter, pixels")->capture_default_str();
  command->add_option("--holes", options->holes, "also write an image with the pixels no store layer matched in red");
  MethodFlags kellerFlags;  // Keller's frame: the light paths of a bake, and its bias compensation
  declareLightPathFlags(kellerFlags, options->vplOptions);
  declareBiasCompensationSwitch(kellerFlags, options->vplOptions,
                                "keller: on adds, per pixel, the light the clamp removed (as the bake does per layer) "
                                "and clamps at twice the uncompensated distance; off: the clamped frame, at the "
                                "bake's uncompensated distance");
  addFlagsToCommand(*command, kellerFlags);
  command->add_option("--exposure", options->exposure, "PNG exposure in stops (value × 2^stops)")
      ->capture_default_str()
      ->check(finiteNumber());
  command->add_option("--tone", options->tone, "PNG tone curve: srgb (clamp) or filmic (ACES fit)")
      ->capture_default_str();
  command->footer(
      "Examples:\n  ibrr render cornell --method albedo -o cornell_albedo.png\n"
      "  ibrr render cornell --store cornell.ibrr -o cornell.exr\n"
      "  ibrr render cornell --method keller --paths 512 -o keller.exr\n"
      "  ibrr render cornell --lightmap cornell.lightmap --supersample 2 -o lightmap.png\n"
      "  ibrr render cornell --matrix cornell.ffmatrix --move-light 0:50,0,0 --supersample 2 -o moved.exr\n"
      "  ibrr render cornell --store cornell.ibrr --eye 100,300,-200 --target 278,200,300 --fov 60 -o side.png");
  command->callback([options, command] {
    refuseFlagsNotRead(*command, renderMethodName(*command, *options));
    runRender(*command, *options);
  });
}

}  // namespace ibrr::app
