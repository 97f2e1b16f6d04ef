#include "lightmap/lightmap_bench.hpp"

#include "gpu/context.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/matrix.hpp"
#include "scene/load.hpp"
#include "util/error.hpp"
#include "util/image.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

namespace ibrr::lightmap {
namespace {

// One printf-formatted line (or part of one) to `out`.
void print(std::ostream& out, const char* format, ...) {
  char line[1024];
  va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(line, sizeof line, format, arguments);
  va_end(arguments);
  out << line << std::flush;
}

// Relative RMS difference √(Σ |a − b|² / Σ |b|²) over the patches `use` accepts.
double relativeRms(const std::vector<glm::vec3>& a, const std::vector<glm::vec3>& b, const PatchList& patches) {
  double squared = 0.0, reference = 0.0;
  for (std::size_t t = 0; t < a.size(); ++t) {
    if (!patches.valid[t]) continue;
    const glm::dvec3 d = glm::dvec3(a[t]) - glm::dvec3(b[t]);
    squared += glm::dot(d, d);
    reference += glm::dot(glm::dvec3(b[t]), glm::dvec3(b[t]));
  }
  return reference > 0.0 ? std::sqrt(squared / reference) : 0.0;
}

// The Cornell atlas's charts in false colour (a hash per chart), padding black, 2× enlarged, top row first.
void writeChartPicture(const LightmapAtlas& atlas, const PatchList& patches, const std::filesystem::path& file) {
  const int scale = 2;
  Image picture(atlas.width * scale, atlas.height * scale);
  for (int y = 0; y < picture.height; ++y)
    for (int x = 0; x < picture.width; ++x) {
      const std::size_t i = std::size_t(atlas.height - 1 - y / scale) * atlas.width + x / scale;
      if (!patches.valid[i]) continue;
      const std::uint32_t hash = (atlas.triangleChart[patches.triangle[i]] + 1) * 2654435761u;
      picture.at(x, y) =
          glm::vec3(0.25f) +
          0.75f * glm::vec3(float(hash & 255), float((hash >> 8) & 255), float((hash >> 16) & 255)) / 255.0f;
    }
  writeImage(picture, file);
}

// One scene's atlas at one target size: a row of the docs' atlas table and its chart statistics.
void benchAtlas(const scene::Scene& scene, const std::string& name, int targetSize, std::ostream& out,
                const std::filesystem::path& output) {
  AtlasOptions options;
  options.targetSize = targetSize;
  Stopwatch watch;
  const LightmapAtlas atlas = buildAtlas(scene, options);
  const double buildSeconds = watch.seconds();
  watch.restart();
  const PatchList patches = rasterizePatches(scene, atlas);
  const double patchSeconds = watch.seconds();
  std::size_t valid = 0, conservative = 0;
  double validArea = 0.0;
  for (std::size_t i = 0; i < patches.texelCount(); ++i) {
    valid += patches.valid[i];
    conservative += patches.valid[i] && !patches.centreCovered[i];
    if (patches.valid[i]) validArea += patches.area[i];
  }
  print(out,
        "| %s | %zu | %u | %d×%d | %.4g (1 texel = %.3g units) | %zu (%zu conservative) | %.1f%% | %.2f s | %.2f s |\n",
        name.c_str(), scene.triangleCount(), atlas.chartCount, atlas.width, atlas.height, double(atlas.texelsPerUnit),
        1.0 / atlas.texelsPerUnit, valid, conservative, 100.0 * atlas.wastedFraction, buildSeconds, patchSeconds);
  std::size_t single = 0, oneByOne = 0, thin = 0;
  std::vector<int> trianglesPerChart(atlas.chartCount, 0);
  for (std::uint32_t c : atlas.triangleChart) ++trianglesPerChart[c];
  for (std::uint32_t c = 0; c < atlas.chartCount; ++c) {
    single += trianglesPerChart[c] == 1;
    oneByOne += atlas.chartFootprints[c].width == 1 && atlas.chartFootprints[c].height == 1;
    thin += std::min(atlas.chartFootprints[c].width, atlas.chartFootprints[c].height) == 1;
  }
  print(out,
        "  area: valid texels / surface - 1 = %.3g; charts of one triangle %zu, 1x1 footprints %zu, one texel "
        "thin %zu\n",
        validArea / scene.surfaceArea() - 1.0, single, oneByOne, thin);
  if (name == "cornell" && targetSize == 256 && !output.empty())
    writeChartPicture(atlas, patches, output / "cornell_atlas.png");
}

void benchAtlases(const LightmapBenchOptions& options, std::ostream& out) {
  out << "\n-- atlas: charts, size, density, waste, build and patch times --\n"
      << "| scene | triangles | charts | atlas | texels per unit | valid texels | wasted | build | patches |\n"
      << "|---|---|---|---|---|---|---|---|---|\n";
  for (const char* name : {"cornell", "sibenik", "conference"}) {
    if (options.quick && std::string(name) != "cornell") continue;
    // Sibenik's and the conference room's manifests name meshes in the shared scenes, which may be missing.
    std::optional<scene::Scene> scene;
    try {
      scene = scene::loadScene(scene::resolveScenePath(name));
    } catch (const Error& error) {
      if (std::string(name) == "cornell") throw;
      print(out, "  %s skipped: %s\n", name, error.what());
      continue;
    }
    for (int targetSize : options.quick ? std::vector<int>{64} : std::vector<int>{256, 1024}) {
      throwIfInterrupted();
      benchAtlas(*scene, name, targetSize, out, options.output);
    }
  }
}

// The matrix section's inputs: the scene, its atlas and patches, and the solved k-bounce matrix.
struct MatrixBench {
  scene::Scene scene;
  int atlasSize = 0;
  LightmapAtlas atlas;
  PatchList patches;
  MatrixOptions options;
  std::shared_ptr<MatrixSolution> solution;
};

// A lightmap of `radiance` as `ibrr bake --method matrix` would save it.
Lightmap lightmapOf(const MatrixBench& bench, const std::vector<glm::vec3>& radiance) {
  Lightmap lightmap;
  lightmap.atlasOptions.targetSize = bench.atlasSize;  // the options the atlas was built with (density derived)
  lightmap.width = bench.atlas.width;
  lightmap.height = bench.atlas.height;
  lightmap.radiance = radiance;
  lightmap.method = "matrix";
  lightmap.settingsJson = bench.solution->settingsJson;
  lightmap.sceneFingerprint = bench.scene.fingerprint();
  lightmap.atlasFingerprint = atlasFingerprint(bench.atlas);
  return lightmap;
}

// Patches, precompute time and bytes; with an output folder the matrix file, with and without the dense matrix.
void benchPrecompute(MatrixBench& bench, std::ostream& out, const std::filesystem::path& output) {
  const Stopwatch total;
  bench.solution =
      std::make_shared<MatrixSolution>(precomputeMatrix(bench.scene, bench.atlas, bench.patches, bench.options));
  bench.solution->atlasOptions.targetSize = bench.atlasSize;
  const double precompute = total.seconds();
  const MatrixSolution& solution = *bench.solution;
  const std::size_t n = solution.size();
  print(out, "matrix: atlas %dx%d, %zu patches, k = %d, H = %d, direct %s\n", bench.atlas.width, bench.atlas.height, n,
        bench.options.bounces, bench.options.hemicubeResolution, matrixDirectName(solution.direct));
  print(out, "precompute: %.2f s (form factors %.2f s, k-bounce matrix %.2f s, compression %.2f s)\n", precompute,
        solution.formFactorSeconds, solution.powerSeconds, solution.compressSeconds);
  print(out, "bytes: dense %.1f MB, compressed %.2f MB (%.1fx smaller; exact entries %zu = %.1f%% of n^2)\n",
        double(solution.denseBytes()) / 1e6, double(solution.compressed->bytes()) / 1e6,
        double(solution.denseBytes()) / double(solution.compressed->bytes()), solution.compressed->exactColumn.size(),
        100.0 * double(solution.compressed->exactColumn.size()) / double(n * n));
  if (output.empty()) return;
  const std::filesystem::path matrixFile = output / "matrix.ffmatrix";
  saveMatrix(matrixFile, solution);
  print(out, "matrix file: %.1f MB with the dense matrix\n", double(std::filesystem::file_size(matrixFile)) / 1e6);
  saveMatrix(matrixFile, solution, false);
  print(out, "matrix file: %.2f MB compressed only\n", double(std::filesystem::file_size(matrixFile)) / 1e6);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Relight per storage (dense; compressed with GL's BC1 decoding and the shader's): median of 9 after one warm-up,
// the first light moved a little each time; the radiance against the dense relight's.
void benchRelight(const MatrixBench& bench, std::ostream& out, const std::filesystem::path& output) {
  std::vector<glm::vec3> denseRadiance;
  using Bc1 = MatrixRelighter::Bc1Decoder;
  for (const auto& [storage, bc1, name] : {std::tuple{MatrixStorage::Dense, Bc1::Automatic, "dense"},
                                           std::tuple{MatrixStorage::Compressed, Bc1::Hardware, "compressed"},
                                           std::tuple{MatrixStorage::Compressed, Bc1::Shader, "compressed"}}) {
    throwIfInterrupted();
    MatrixRelighter relighter(bench.scene, bench.solution, storage, bc1);
    const std::vector<glm::vec3> offsets(relighter.lights().size(), glm::vec3(0.0f));
    relighter.relight(offsets);
    std::vector<double> direct, product, transfer;
    for (int trial = 0; trial < 9; ++trial) {
      std::vector<glm::vec3> moving = offsets;
      if (!moving.empty()) moving[0] = glm::vec3(5.0f * float(trial), 0.0f, 0.0f);
      const RelightTiming timing = relighter.relight(moving);
      direct.push_back(timing.directMs);
      product.push_back(timing.productMs);
      transfer.push_back(timing.transferMs);
    }
    relighter.relight(offsets);
    const std::vector<glm::vec3> radiance = relighter.readRadiance();
    if (storage == MatrixStorage::Dense) denseRadiance = radiance;
    print(out,
          "relight %s%s: emission vector %.1f ms, GPU product %.2f ms + transfer %.2f ms (median of 9; fastest %.2f + "
          "%.2f); radiance vs dense %.3f%%\n",
          name, storage == MatrixStorage::Compressed ? (relighter.hardwareBc1() ? " [GL BC1]" : " [shader BC1]") : "",
          median(direct), median(product), median(transfer), *std::min_element(product.begin(), product.end()),
          *std::min_element(transfer.begin(), transfer.end()),
          100.0 * relativeRms(radiance, denseRadiance, bench.patches));
    if (output.empty() || (storage == MatrixStorage::Compressed && bc1 != Bc1::Hardware)) continue;
    saveLightmap(output / (std::string(name) + ".lightmap"), lightmapOf(bench, radiance));
    if (storage == MatrixStorage::Dense && !offsets.empty()) {
      std::vector<glm::vec3> moved = offsets;
      moved[0] = glm::vec3(50.0f, 0.0f, 0.0f);
      relighter.relight(moved);
      saveLightmap(output / "moved.lightmap", lightmapOf(bench, relighter.readRadiance()));
    }
  }
}

// One product with the k-bounce matrix against k chained products with the one-bounce matrix, on the GPU
// (dense; compressed with either BC1 decoding) and on the CPU (multiplyOnCpu, TBB, double accumulation).
void benchKBounce(const MatrixBench& bench, std::ostream& out) {
  MatrixOptions oneOptions = bench.options;
  oneOptions.bounces = 1;
  oneOptions.storage = MatrixStorage::Dense;
  auto one = std::make_shared<MatrixSolution>(precomputeMatrix(bench.scene, bench.atlas, bench.patches, oneOptions));
  const int k = bench.options.bounces;
  MatrixRelighter kBounce(bench.scene, bench.solution, MatrixStorage::Dense);
  MatrixRelighter oneBounce(bench.scene, one, MatrixStorage::Dense);
  const double single = kBounce.timeProducts(1, 5);
  const double chained = oneBounce.timeProducts(k, 5);
  print(out, "GPU: one k-bounce product %.2f ms, %d chained one-bounce products %.2f ms: %.1fx faster\n", single, k,
        chained, chained / single);
  for (const MatrixRelighter::Bc1Decoder bc1 :
       {MatrixRelighter::Bc1Decoder::Hardware, MatrixRelighter::Bc1Decoder::Shader}) {
    MatrixRelighter compressed(bench.scene, bench.solution, MatrixStorage::Compressed, bc1);
    const double ms = compressed.timeProducts(1, 5);
    print(out, "GPU: one compressed k-bounce product (%s BC1 decoding) %.2f ms (%.1fx faster than the chain)\n",
          compressed.hardwareBc1() ? "GL" : "shader", ms, chained / ms);
  }
  const std::vector<glm::vec3> x(bench.solution->size(), glm::vec3(1.0f));
  Stopwatch cpu;
  (void)multiplyOnCpu(*bench.solution, MatrixStorage::Dense, x);
  const double cpuSingle = cpu.milliseconds();
  cpu.restart();
  std::vector<glm::vec3> y = x;
  for (int h = 0; h < k; ++h) y = multiplyOnCpu(*one, MatrixStorage::Dense, y);
  print(out, "CPU: one k-bounce product %.1f ms, %d one-bounce products %.1f ms: %.1fx faster\n", cpuSingle, k,
        cpu.milliseconds(), cpu.milliseconds() / cpuSingle);
}

// The paper's Fig. 7: compression error without reordering, by rows, by rows and columns; then the exact
// fraction swept (rows and columns). Recompresses the solution in place.
void benchCompression(MatrixBench& bench, std::ostream& out) {
  MatrixSolution& solution = *bench.solution;
  out << "| | without reordering | reordering by rows | by rows & columns |\n|---|---|---|---|\n";
  std::array<CompressionError, 3> errors;
  std::array<double, 3> relit{}, seconds{};
  MatrixRelighter dense(bench.scene, bench.solution, MatrixStorage::Dense);
  const std::vector<glm::vec3> e = dense.emissionVector({});
  const std::vector<glm::vec3> l0 = assembleRadiance(solution, e, multiplyOnCpu(solution, MatrixStorage::Dense, e));
  const auto relitError = [&] {
    return relativeRms(assembleRadiance(solution, e, multiplyOnCpu(solution, MatrixStorage::Compressed, e)), l0,
                       bench.patches);
  };
  const MatrixReorder orders[] = {MatrixReorder::None, MatrixReorder::Rows, MatrixReorder::RowsColumns};
  for (std::size_t k = 0; k < 3; ++k) {
    throwIfInterrupted();
    const Stopwatch watch;
    compressMatrix(solution, bench.options.exactFraction, bench.options.logRange, orders[k]);
    seconds[k] = watch.seconds();
    errors[k] = compressionError(solution);
    relit[k] = relitError();
  }
  print(out, "| avg. error | %.3e | %.3e | %.3e |\n", errors[0].mean, errors[1].mean, errors[2].mean);
  print(out, "| max error | %.4f | %.4f | %.4f |\n", errors[0].max, errors[1].max, errors[2].max);
  print(out, "| total error | %.2f | %.2f | %.2f |\n", errors[0].total, errors[1].total, errors[2].total);
  print(out, "| relit radiance vs dense (relative RMS) | %.3f%% | %.3f%% | %.3f%% |\n", 100.0 * relit[0],
        100.0 * relit[1], 100.0 * relit[2]);
  print(out, "| compression time | %.2f s | %.2f s | %.2f s |\n", seconds[0], seconds[1], seconds[2]);
  for (const double fraction : {0.0, 0.01, 0.04, 0.1}) {
    compressMatrix(solution, fraction, bench.options.logRange, MatrixReorder::RowsColumns);
    const CompressionError error = compressionError(solution);
    print(out, "exact fraction %.2f: %.2f MB (%.1fx smaller), mean %.3e, max %.4f, total %.2f, relit %.3f%%\n",
          fraction, double(solution.compressed->bytes()) / 1e6,
          double(solution.denseBytes()) / double(solution.compressed->bytes()), error.mean, error.max, error.total,
          100.0 * relitError());
  }
}

void benchMatrix(const LightmapBenchOptions& options, std::ostream& out) {
  out << "\n-- form-factor matrix: precompute, bytes, relight, k bounces, compression --\n";
  MatrixBench bench;
  bench.scene = scene::loadScene(scene::resolveScenePath(options.matrixScene));
  bench.atlasSize = options.matrixAtlas > 0 ? options.matrixAtlas : options.quick ? 16 : kDefaultMatrixAtlasSize;
  AtlasOptions atlasOptions;
  atlasOptions.targetSize = bench.atlasSize;
  bench.atlas = buildAtlas(bench.scene, atlasOptions);
  bench.patches = rasterizePatches(bench.scene, bench.atlas);
  if (options.bounces > 0) bench.options.bounces = options.bounces;
  if (options.hemicube > 0) bench.options.hemicubeResolution = options.hemicube;
  if (options.quick && options.hemicube == 0) bench.options.hemicubeResolution = 16;
  bench.options.storage = MatrixStorage::Compressed;
  validateMatrixOptions(bench.options);
  benchPrecompute(bench, out, options.output);
  benchRelight(bench, out, options.output);
  benchKBounce(bench, out);
  benchCompression(bench, out);
}

}  // namespace

void runLightmapBenchmark(const LightmapBenchOptions& options, std::ostream& out) {
  const auto context = gpu::createHeadlessContext();
  out << "lightmap benchmark on " << context->info().renderer << "\n";
  if (options.atlas) benchAtlases(options, out);
  if (options.matrix) benchMatrix(options, out);
}

}  // namespace ibrr::lightmap
