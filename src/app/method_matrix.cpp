// `ibrr bake --method matrix`: the k-bounce form-factor matrix on a coarse texel lightmap
// (lightmap/matrix.hpp), saved as a .lightmap, and with --save-matrix the matrix itself, which
// `ibrr render --matrix FILE --move-light ...` relights without recomputing it.
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "compare/method_run.hpp"
#include "lightmap/matrix.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace ibrr::app {
namespace {

// The form-factor matrix's bake: its flags are its MatrixOptions' fields and the atlas's.
class MatrixBake final : public BakeMethod {
public:
  void declareFlags(MethodFlags& flags) override;
  void run(const BakeRun& run) override;

private:
  lightmap::MatrixOptions m_settings;
  AtlasFlags m_atlas;
  std::string m_saveMatrix;
};

void MatrixBake::declareFlags(MethodFlags& flags) {
  m_atlas.declare(flags, lightmap::kDefaultMatrixAtlasSize, false);
  flags.option("--hemicube", m_settings.hemicubeResolution, "H of the form-factor hemicubes");
  flags.option("--layers", m_settings.layersPerBatch,
               "hemicubes per instanced draw (texture-array layers); 0 = automatic (a 96 MiB array on a GPU, 4 MiB on "
               "llvmpipe)");
  flags.option("--seed", m_settings.seed, "seed of the hemicubes' rotations and the light samples");
  flags.option("--bounces", m_settings.bounces,
               "k of the k-bounce matrix N_k = T + ... + T^k (with --direct rays, paths of up to k+1 bounces), [1, 64]");
  flags.choice(
      "--direct", [this](const std::string& value) { m_settings.direct = lightmap::parseMatrixDirect(value); },
      lightmap::matrixDirectName(m_settings.direct),
      "the emission vector: rays (direct light by shadow rays to the lights, which can then move), matrix (emitters "
      "are patches; lights fixed) or auto (rays unless every surface emits)");
  flags.option("--light-samples", m_settings.lightSamples, "shadow rays per patch and light, [1, 65536]");
  flags.option("--max-patches", m_settings.maxPatches,
               "refuse atlases with more valid texels (the dense matrix takes 12·n² bytes)");
  flags.choice(
      "--storage", [this](const std::string& value) { m_settings.storage = lightmap::parseMatrixStorage(value); },
      lightmap::matrixStorageName(m_settings.storage),
      "what relights: dense (3 × n² floats) or compressed (exact top entries + a BC1 texture of the log-mapped rest, "
      "~10x smaller)");
  flags.option("--exact-fraction", m_settings.exactFraction,
               "compressed: the top fraction of each row and channel kept exact, [0, 1]");
  flags.option("--log-range", m_settings.logRange,
               "compressed: R, the natural-log range below each row's maximum that the 8-bit log mapping covers, "
               "(0, 64]");
  flags.choice(
      "--reorder", [this](const std::string& value) { m_settings.reorder = lightmap::parseMatrixReorder(value); },
      lightmap::matrixReorderName(m_settings.reorder),
      "compressed: none, rows or rows-columns (nearest-neighbour chains before BC1 blocking)");
  flags.option("--save-matrix", m_saveMatrix,
               "also write the matrix with its patch mapping to FILE (e.g. cornell.ffmatrix; dense storage saves N_k, "
               "compressed only the compressed form) for 'ibrr render --matrix FILE --move-light ...' and 'ibrr view "
               "--matrix FILE'");
}

void MatrixBake::run(const BakeRun& run) {
  checkLightmapOutputs(run.output, m_saveMatrix);
  if (!m_saveMatrix.empty() && std::filesystem::path(m_saveMatrix) == std::filesystem::path(run.output))
    throw OptionError("--save-matrix " + m_saveMatrix + ": give a file other than the lightmap (-o)");
  const lightmap::MatrixOptions settings = m_settings;
  lightmap::validateMatrixOptions(settings);
  const lightmap::AtlasOptions atlasOptions = m_atlas.options(run.flags, lightmap::kDefaultMatrixAtlasSize);
  const std::string& saveMatrix = m_saveMatrix;

  const LightmapBakeInputs inputs =
      prepareLightmapBake(run, atlasOptions, "form-factor matrix of", [&](const scene::Scene& loaded) {
        lightmap::checkMatrixScene(loaded, settings.direct);
        checkLightmapOutputs(run.output, saveMatrix);  // none of the outputs is one of the scene's files
      });
  ProgressLine progress;
  lightmap::MatrixResult result = lightmap::solveMatrix(inputs.scene, inputs.atlas, inputs.patches, settings, progress);
  progress.finish();
  throwIfInterrupted();  // nothing is written after a Ctrl-C during the relight
  lightmap::MatrixSolution& solution = *result.solution;
  solution.atlasOptions = atlasOptions;  // `ibrr render --matrix` rebuilds the atlas from these
  double saveSeconds = 0.0;
  OutputSet outputs;  // the matrix and the lightmap are written all or none
  if (!saveMatrix.empty()) {
    const Stopwatch saving;
    // Dense storage keeps N_k; compressed keeps only the compressed form (what a relight reads).
    lightmap::stageMatrix(outputs, saveMatrix, solution, settings.storage == lightmap::MatrixStorage::Dense);
    saveSeconds = saving.seconds();
  }
  stageSolvedLightmap(outputs, inputs, result.lightmap, run.output);
  outputs.commit();
  std::printf("wrote %s\n", run.output.c_str());

  const std::vector<lightmap::MatrixLight> lights = lightmap::matrixLights(inputs.scene);
  glm::dvec3 mean(0.0);
  double area = 0.0;
  for (std::size_t t = 0; t < inputs.patches.texelCount(); ++t)
    if (inputs.patches.valid[t]) {
      mean += double(inputs.patches.area[t]) * glm::dvec3(result.lightmap.radiance[t]);
      area += double(inputs.patches.area[t]);
    }
  mean /= std::max(area, 1e-30);
  if (!saveMatrix.empty())
    std::printf("wrote %s (%.1f MB, %.2f s)\n", saveMatrix.c_str(),
                double(std::filesystem::file_size(saveMatrix)) * 1e-6, saveSeconds);
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
  compare::LightmapRun run(context, setup.atlasOptions, result, kLightmapDisplay);
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
    [] { return std::unique_ptr<BakeMethod>(std::make_unique<MatrixBake>()); },
    false,
    {{"matrix", "texel lightmap, k-bounce form-factor matrix (one GPU matrix-vector product per relight)",
      compareMatrix}}};

}  // namespace ibrr::app
