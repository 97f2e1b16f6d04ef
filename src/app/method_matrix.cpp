// `ibrr bake --method matrix`: the k-bounce form-factor matrix on a coarse texel lightmap
// (lightmap/matrix.hpp), saved as a .lightmap, and with --save-matrix the matrix itself, which
// `ibrr render --matrix FILE --move-light ...` relights without recomputing it.
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "compare/method_run.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace ibrr::app {
namespace {

void runMatrixBake(const BakeRequest& request) {
  const CLI::App& command = request.command;
  const BakeCommandOptions& options = request.options;
  checkLightmapOutputs(options);
  if (!options.saveMatrix.empty()) {
    checkOutputFile(options.saveMatrix);
    if (std::filesystem::path(options.saveMatrix) == std::filesystem::path(options.output))
      throw Error("--save-matrix " + options.saveMatrix + ": give a file other than the lightmap (-o)");
  }
  lightmap::MatrixOptions settings = options.matrix;
  if (given(command, "--hemicube")) settings.hemicubeResolution = options.bake.hemicubeResolution;
  if (given(command, "--layers")) settings.layersPerBatch = options.gather.layersPerBatch;
  if (given(command, "--seed")) settings.seed = options.bake.seed;
  settings.direct = lightmap::parseMatrixDirect(options.direct);
  settings.storage = lightmap::parseMatrixStorage(options.storage);
  settings.reorder = lightmap::parseMatrixReorder(options.reorder);
  lightmap::validateMatrixOptions(settings);
  const lightmap::AtlasOptions atlasOptions = atlasOptionsFrom(command, options, kMatrixDefaultAtlasSize);

  const LightmapBakeInputs inputs =
      prepareLightmapBake(options, atlasOptions, "form-factor matrix of",
                          [&](const scene::Scene& loaded) { lightmap::checkMatrixScene(loaded, settings.direct); });
  ProgressLine progress;
  lightmap::MatrixResult result = lightmap::solveMatrix(inputs.scene, inputs.atlas, inputs.patches, settings, progress);
  progress.finish();
  throwIfInterrupted();  // nothing is written after a Ctrl-C during the relight
  lightmap::MatrixSolution& solution = *result.solution;
  solution.atlasOptions = atlasOptions;  // `ibrr render --matrix` rebuilds the atlas from these
  double saveSeconds = 0.0;
  OutputSet outputs;  // the matrix and the lightmap are written all or none
  if (!options.saveMatrix.empty()) {
    const Stopwatch saving;
    // Dense storage keeps N_k; compressed keeps only the compressed form (what a relight reads).
    lightmap::stageMatrix(outputs, options.saveMatrix, solution, settings.storage == lightmap::MatrixStorage::Dense);
    saveSeconds = saving.seconds();
  }
  stageSolvedLightmap(outputs, inputs, result.lightmap, options.output);
  outputs.commit();
  std::printf("wrote %s\n", options.output.c_str());

  const std::vector<lightmap::MatrixLight> lights = lightmap::matrixLights(inputs.scene);
  glm::dvec3 mean(0.0);
  double area = 0.0;
  for (std::size_t t = 0; t < inputs.patches.texelCount(); ++t)
    if (inputs.patches.valid[t]) {
      mean += double(inputs.patches.area[t]) * glm::dvec3(result.lightmap.radiance[t]);
      area += double(inputs.patches.area[t]);
    }
  mean /= std::max(area, 1e-30);
  if (!options.saveMatrix.empty())
    std::printf("wrote %s (%.1f MB, %.2f s)\n", options.saveMatrix.c_str(),
                double(std::filesystem::file_size(options.saveMatrix)) * 1e-6, saveSeconds);
  printAtlasSummary(inputs, "patches (valid texels)");
  std::printf("matrix           N_k, k = %d bounces, H = %d; direct light by %s; %s: %.1f MB", settings.bounces,
              settings.hemicubeResolution, lightmap::matrixDirectName(solution.direct),
              lightmap::matrixStorageName(settings.storage), double(solution.denseBytes()) * 1e-6);
  if (solution.compressed)
    std::printf(" dense, %.2f MB compressed (%.1fx; reordering: %s, %.3g exact, log range %.3g)",
                double(solution.compressed->bytes()) * 1e-6,
                double(solution.denseBytes()) / double(std::max<std::size_t>(solution.compressed->bytes(), 1)),
                lightmap::matrixReorderName(settings.reorder), settings.exactFraction, double(settings.logRange));
  std::printf("\n");
  std::printf("lights           %s%s\n", lightmap::describeMatrixLights(lights).c_str(),
              solution.direct == lightmap::MatrixDirect::Rays ? " (movable: ibrr render --matrix FILE --move-light)"
                                                              : " (fixed: --direct matrix)");
  std::printf("precompute       %.2f s: form factors %.2f s, k-bounce matrix %.2f s, compression %.2f s\n",
              solution.formFactorSeconds + solution.powerSeconds + solution.compressSeconds, solution.formFactorSeconds,
              solution.powerSeconds, solution.compressSeconds);
  std::printf(
      "first relight    %.2f ms: emission vector %.2f ms, GPU product %.2f ms, transfer %.2f ms (with the GL's "
      "first-use costs; 'ibrr render --matrix' times a warm one)\n",
      result.timing.directMs + result.timing.productMs + result.timing.transferMs, result.timing.directMs,
      result.timing.productMs, result.timing.transferMs);
  printMeanAndTime(inputs, &mean, result.seconds);
}

// ---------------------------------------------------------------------------------------------
// In `ibrr compare`: texel lightmap, k-bounce form-factor matrix: precompute (form factors, N_k), then one relight;
// a single convergence point, the end (N_k is all k bounces at once, there is no iterate before it).

struct MatrixSetup {
  lightmap::AtlasOptions atlasOptions;
  lightmap::MatrixOptions matrixOptions;
};

MatrixSetup matrixSetup(const compare::CompareOptions& options) {
  MatrixSetup setup;  // Final: the documented defaults of `ibrr bake --method matrix`
  setup.atlasOptions.targetSize = lightmap::kDefaultMatrixAtlasSize;
  lightmap::MatrixOptions& m = setup.matrixOptions;
  m.seed = options.seed + 1;
  if (options.quality == compare::Quality::Smoke) {  // ~440 patches on the Cornell box
    setup.atlasOptions.targetSize = 32;
    m.hemicubeResolution = 16;
    m.bounces = 4;
    m.lightSamples = 16;
  } else if (options.quality == compare::Quality::Preview) {  // ~1,100 patches
    setup.atlasOptions.targetSize = 48;
    m.hemicubeResolution = 32;
    m.lightSamples = 64;
  }
  return setup;
}

compare::MethodResult compareMatrix(const compare::MethodContext& context) {
  const MatrixSetup setup = matrixSetup(context.options);
  compare::MethodResult result;
  compare::LightmapRun run(context, setup.atlasOptions, result);
  ProgressLine progress;
  const lightmap::MatrixResult solved =
      lightmap::solveMatrix(context.scene, run.atlas(), run.patches(), setup.matrixOptions, progress);
  progress.finish();
  const lightmap::MatrixSolution& solution = *solved.solution;
  const double relightMs = solved.timing.directMs + solved.timing.productMs + solved.timing.transferMs;
  run.recordIterate(solved.lightmap.radiance, solved.seconds, "k = " + std::to_string(solution.bounces));
  nlohmann::json settings = nlohmann::json::parse(solution.settingsJson);
  settings["patches"] = solution.size();
  settings["formFactorSeconds"] = solution.formFactorSeconds;
  settings["bounceMatrixSeconds"] = solution.powerSeconds;
  settings["relightMilliseconds"] = relightMs;
  result.summary = run.atlasSummary() + ", " + std::to_string(solution.size()) +
                   " patches, k = " + std::to_string(solution.bounces) +
                   " bounces, H = " + std::to_string(setup.matrixOptions.hemicubeResolution) + ", direct light by " +
                   lightmap::matrixDirectName(solution.direct);
  run.finish(solved.lightmap, solved.seconds, std::move(settings));
  // What a relight needs is the matrix (the lightmap is its output).
  result.bytes = solution.denseBytes();
  result.bytesWhat = "k-bounce matrix (3 x n² float32)";
  return result;
}

}  // namespace

const Method kMatrixMethod = {
    "matrix",
    "texel lightmap, k-bounce form-factor matrix; lights can be moved later",
    {"--texel-density", "--atlas", "--hemicube", "--layers", "--seed", "--bounces", "--direct", "--light-samples",
     "--max-patches", "--storage", "--exact-fraction", "--log-range", "--reorder", "--save-matrix"},
    false,
    runMatrixBake,
    {{"matrix", "texel lightmap, k-bounce form-factor matrix (one GPU matrix-vector product per relight)",
      compareMatrix}}};

}  // namespace ibrr::app
