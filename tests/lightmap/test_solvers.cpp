// The checks every texel-lightmap solver answers, as one table of solvers: the furnace (a closed
// box whose every surface emits E = 1 and reflects a = 0.5, so L = E / (1 − a) = 2 everywhere)
// through the project's atlas by the library and by `ibrr bake`, the bake flags of other methods
// refused by name, a clean stop on Ctrl-C, and bad options refused by name. A new solver is tested
// by a new row of kSolverRows; each check runs in a section named after the row.
#include "lightmap/atlas.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/matrix.hpp"
#include "lightmap/progressive.hpp"
#include "lightmap/stochastic.hpp"
#include "lightmap_test_support.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace ibrr::lightmap {
namespace {

// Bounds on a furnace lightmap's deviation from L = 2 (test::ConstantDeviation), each strict:
// deviation < bound (a check once written x == Approx(2).epsilon(bound) passed |x / 2 − 1| ≤ bound,
// the same but at equality); 0 leaves one unchecked.
struct FurnaceBounds {
  double worst = 0.0;           // max |L / 2 − 1| over the valid texels and channels
  double mean = 0.0;            // |L̄ / 2 − 1| of the area-weighted mean L̄
  double rms = 0.0;             // the area-weighted RMS of L / 2 − 1
  double texelMeanGreen = 0.0;  // |ḡ / 2 − 1| of the green channel's unweighted mean over texels
  std::size_t minTexels = 0;    // more valid texels than this
};

// Prints the deviation of `radiance` from 2 and checks it against `bounds`.
void checkFurnace(const std::string& what, const PatchList& patches, std::span<const glm::vec3> radiance,
                  const FurnaceBounds& bounds) {
  const test::ConstantDeviation d = test::deviationFrom(patches, radiance, 2.0);
  std::printf("%s: %zu texels, mean %.4f (texels' green %.4f), RMS deviation from 2: %.3f%%, worst texel %.3f%%\n",
              what.c_str(), d.texels, d.mean, d.texelMeanGreen, 100.0 * d.rms, 100.0 * d.worst);
  REQUIRE(d.texels > bounds.minTexels);
  if (bounds.worst > 0.0) CHECK(d.worst < bounds.worst);
  if (bounds.mean > 0.0) CHECK(std::abs(d.mean / 2.0 - 1.0) < bounds.mean);
  if (bounds.rms > 0.0) CHECK(d.rms < bounds.rms);
  if (bounds.texelMeanGreen > 0.0) CHECK(std::abs(d.texelMeanGreen / 2.0 - 1.0) < bounds.texelMeanGreen);
}

// The furnace through the project's atlas by each solver: builds the atlas into `a` and returns the
// radiance per texel, having printed the solver's own figures and checked what only it reports.
std::vector<glm::vec3> gatherFurnace(const scene::Scene& scene, test::AtlasAndPatches& a) {
  a = test::makeAtlasAndPatches(scene, 48);
  GatherOptions options;  // the split scheme: H = 32 for the first gather, h = 16 after
  options.hemicubeResolution = 32;
  options.indirectHemicubeResolution = 16;
  options.tolerance = 1e-3;
  options.maxIterations = 50;
  const GatherResult result = solveGather(scene, a.atlas, a.patches, options);
  std::printf("gather furnace: %zu iterations\n", result.iterations.size());
  return result.lightmap.radiance;
}

std::vector<glm::vec3> progressiveFurnace(const scene::Scene& scene, test::AtlasAndPatches& a) {
  a = test::makeAtlasAndPatches(scene, 32);
  ProgressiveOptions options;
  options.residualFraction = 0.005;
  const ProgressiveResult result = solveProgressive(scene, a.atlas, a.patches, options);
  std::printf("progressive furnace: %zu clusters, %llu shots, residual %.4f\n", result.clusters,
              static_cast<unsigned long long>(result.shots), result.checkpoints.back().residualFraction);
  CHECK(result.stopReason == "residual");
  CHECK(result.checkpoints.back().residualFraction < 0.005);
  return result.lightmap.radiance;
}

std::vector<glm::vec3> adaptiveFurnace(const scene::Scene& scene, test::AtlasAndPatches& a) {
  a = test::makeFinestAtlasAndPatches(scene, 24, 1);
  ProgressiveOptions options;
  options.adaptive.depth = 1;
  options.residualFraction = 0.001;
  const ProgressiveResult result = solveProgressive(scene, a.atlas, a.patches, options);
  std::printf("progressive --adaptive furnace: %zu elements, %zu leaf splits, %llu shots\n", result.elements,
              result.leafSplits, static_cast<unsigned long long>(result.shots));
  return result.lightmap.radiance;
}

std::vector<glm::vec3> stochasticFurnace(const scene::Scene& scene, test::AtlasAndPatches& a) {
  a = test::makeAtlasAndPatches(scene, 32);
  StochasticOptions options;
  options.hemisphereResolution = 128;
  options.shootersPerIteration = 16;
  options.clusterTexels = 4;
  options.emitterClusterTexels = 4;
  options.iterations = 200;
  const StochasticResult result = solveStochastic(scene, a.atlas, a.patches, options);
  std::printf("stochastic furnace: %llu iterations x %d shooters\n", static_cast<unsigned long long>(result.iterations),
              options.shootersPerIteration);
  return result.lightmap.radiance;
}

std::vector<glm::vec3> matrixFurnace(const scene::Scene& scene, test::AtlasAndPatches& a) {
  a = test::makeAtlasAndPatches(scene, 32);
  MatrixOptions options;
  options.hemicubeResolution = 32;
  options.bounces = 8;  // k bounces give E (1 − a^{k+1}) / (1 − a): 0.2% short of 2 at k = 8
  const MatrixResult result = solveMatrix(scene, a.atlas, a.patches, options);
  REQUIRE(result.solution->direct == MatrixDirect::Matrix);  // every surface emits
  const double truncated = 2.0 * (1.0 - std::pow(0.5, options.bounces + 1));
  const double worstTruncated = test::deviationFrom(a.patches, result.lightmap.radiance, truncated).worst;
  std::printf("matrix furnace: %zu patches, k = %d, worst deviation from 2(1 - 0.5^(k+1)): %.3f%%\n",
              result.solution->size(), options.bounces, 100.0 * worstTruncated);
  CHECK(worstTruncated < 0.002);  // hemicube rows of a closed box sum to 1 within 1e-5
  return result.lightmap.radiance;
}

// The matrix bake's matrix (--save-matrix @furnace.ffmatrix) belongs to the atlas the lightmap's
// options rebuild; k = 8 bounces give a mean of 2(1 − 0.5^9) = 1.9961.
void checkBakedMatrix(const std::filesystem::path& folder, const scene::Scene& scene, const Lightmap& lightmap,
                      const LightmapAtlas& atlas, const PatchList& patches) {
  CHECK(lightmap.atlasOptions.targetSize == 32);
  const MatrixSolution solution = loadMatrix(folder / "furnace.ffmatrix", scene);
  CHECK(solution.atlasOptions.targetSize == 32);
  CHECK(solution.bounces == 8);
  CHECK_NOTHROW(checkMatrixAtlas(solution, atlas, patches, folder / "furnace.ffmatrix"));
}

// A call that must throw an error naming `named`: a solver's default options validated with one
// change, or a parser given a bad word.
struct RefusedOption {
  const char* named;
  std::function<void()> call;
};
template <typename Options, void (*validate)(const Options&)>
RefusedOption refusedChange(const char* named, void (*change)(Options&)) {
  return {named, [change] {
            Options options;
            change(options);
            validate(options);
          }};
}
constexpr auto progressiveRefuses = refusedChange<ProgressiveOptions, validateProgressiveOptions>;
constexpr auto stochasticRefuses = refusedChange<StochasticOptions, validateStochasticOptions>;
constexpr auto matrixRefuses = refusedChange<MatrixOptions, validateMatrixOptions>;

struct SolverRow {
  const char* name;  // `ibrr bake --method NAME`: the method and its own flags; names sections and folders
  // The library's solve of the furnace through the project's atlas, and its bounds.
  std::vector<glm::vec3> (*furnace)(const scene::Scene&, test::AtlasAndPatches&);
  FurnaceBounds furnaceBounds;
  // `ibrr bake furnace --method NAME BAKE_FLAGS -o @furnace.lightmap` (no bake without flags):
  // what its stdout says beside "wrote" each @ file, the bounds of the lightmap it writes, and the
  // row's own checks on the files in its folder.
  std::vector<std::string> bakeFlags = {};
  std::vector<std::string> bakeSays = {};
  FurnaceBounds bakeBounds = {};
  void (*bakeChecks)(const std::filesystem::path&, const scene::Scene&, const Lightmap&, const LightmapAtlas&,
                     const PatchList&) = nullptr;
  // Commands after `ibrr bake furnace`, with `-o @x.lightmap` unless they name their own output,
  // that must be refused, naming the flag.
  std::vector<test::RefusedCommand> refusedFlags = {};
  // `ibrr bake cornell --method NAME INTERRUPT_FLAGS -o FILE`: long enough to interrupt.
  std::vector<std::string> interruptFlags = {};
  std::vector<RefusedOption> badOptions = {};
};

// A command's words, its parts joined and split at spaces; "@NAME" is the file NAME in the test's
// output folder (x.lightmap and x.ibrr: a lightmap and a store output).
std::vector<std::string> commandWords(const std::filesystem::path& folder,
                                      std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> words;
  for (const std::vector<std::string>& part : parts)
    for (const std::string& text : part) {
      std::istringstream in(text);
      for (std::string word; in >> word;)
        words.push_back(word.starts_with('@') ? (folder / word.substr(1)).string() : word);
    }
  return words;
}

const SolverRow kSolverRows[] = {
    {.name = "gather",
     .furnace = gatherFurnace,
     .furnaceBounds = {.worst = 0.02, .minTexels = 500},
     .bakeFlags = {"--atlas", "32", "--hemicube", "16", "--tolerance", "0.002"},
     .bakeSays = {"hemicubes/s"},
     .bakeBounds = {.worst = 0.02},  // every texel, in every channel (the furnace is grey)
     .refusedFlags = {{{"--method", "gather", "--paths", "64"}, "--paths"},
                      {{"--method", "gather", "--ldc", "64"}, "--ldc"},
                      {{"--iterations", "3", "-o", "@x.ibrr"}, "--iterations"},
                      {{"--method", "ibrr", "--atlas", "64", "-o", "@x.ibrr"}, "--atlas"},
                      {{"--method", "radiosity"}, "--method"},
                      {{"--method", "gather", "--hemicube", "15"}, "--hemicube"},
                      {{"--method", "gather", "--hemicube", "16", "--indirect-hemicube", "32"}, "--indirect-hemicube"},
                      {{"--method", "gather", "--atlas", "64", "--texel-density", "3"}, "--texel-density"},
                      {{"--refine-near-lights", "2", "-o", "@x.ibrr"}, "--refine-near-lights"},
                      {{"--method", "matrix", "--refine-near-lights", "2"}, "--refine-near-lights"},
                      {{"--method", "gather", "--refine-near-lights", "9"}, "--refine-near-lights"}},
     .interruptFlags = {"--atlas", "256", "--hemicube", "128", "--iterations", "50"}},
    {.name = "progressive",
     .furnace = progressiveFurnace,
     .furnaceBounds = {.worst = 0.02},
     .bakeFlags = {"--atlas", "32", "--emitter-cluster", "2"},
     .bakeSays = {"ms per shot", "residual"},
     .bakeBounds = {.worst = 0.02},
     .refusedFlags = {{{"--method", "progressive", "--paths", "64"}, "--paths"},
                      {{"--method", "progressive", "--iterations", "3"}, "--iterations"},
                      {{"--method", "progressive", "--hemicube", "32"}, "--hemicube"},
                      {{"--method", "gather", "--cluster", "4"}, "--cluster"},
                      {{"--residual", "0.1", "-o", "@x.ibrr"}, "--residual"},
                      {{"--method", "progressive", "--cluster", "0"}, "--cluster"},
                      {{"--method", "progressive", "--residual", "0"}, "--residual"}},
     .interruptFlags = {"--residual", "0.0001"},
     .badOptions = {progressiveRefuses("--cluster", [](ProgressiveOptions& o) { o.clusterTexels = 0; }),
                    progressiveRefuses("--emitter-cluster", [](ProgressiveOptions& o) { o.emitterClusterTexels = 65; }),
                    progressiveRefuses("--hemisphere", [](ProgressiveOptions& o) { o.hemisphereResolution = 8; }),
                    progressiveRefuses("--max-edge", [](ProgressiveOptions& o) { o.maxEdgeFraction = -1.0; }),
                    progressiveRefuses("--residual", [](ProgressiveOptions& o) { o.residualFraction = 1.5; }),
                    progressiveRefuses("--time-budget", [](ProgressiveOptions& o) { o.timeBudgetSeconds = -2.0; }),
                    progressiveRefuses("never stop", [](ProgressiveOptions& o) { o.residualFraction = 0.0; })}},
    // Adaptive subdivision (GPU Gems 2 §39.3): the furnace must hold to 0.5% although elements of
    // several sizes meet.
    {.name = "progressive --adaptive",
     .furnace = adaptiveFurnace,
     .furnaceBounds = {.worst = 0.005, .texelMeanGreen = 0.005},
     .refusedFlags = {{{"--method", "progressive", "--max-depth", "2"}, "--max-depth"},
                      {{"--method", "progressive", "--leaf-borders"}, "--leaf-borders"},
                      {{"--method", "progressive", "--adaptive", "--max-depth", "0"}, "--max-depth"},
                      {{"--method", "progressive", "--adaptive", "--split-gradient", "-1"}, "--split-gradient"},
                      {{"--method", "gather", "--adaptive"}, "--adaptive"}}},
    {.name = "stochastic",
     .furnace = stochasticFurnace,
     .furnaceBounds = {.worst = 0.06, .mean = 0.02, .rms = 0.02},
     .bakeFlags = {"--atlas", "32", "--cluster", "4", "--emitter-cluster", "4", "--shooters", "16", "--hemisphere",
                   "128", "--iterations", "200"},
     .bakeSays = {"ms per iteration", "200 (stopped by iterations"},
     .bakeBounds = {.mean = 0.02},
     .refusedFlags = {{{"--method", "stochastic", "--paths", "64"}, "--paths"},
                      {{"--method", "stochastic", "--residual", "0.01"}, "--residual"},
                      {{"--method", "stochastic", "--tolerance", "0.01"}, "--tolerance"},
                      {{"--method", "stochastic", "--hemicube", "32"}, "--hemicube"},
                      {{"--method", "gather", "--shooters", "4"}, "--shooters"},
                      {{"--method", "progressive", "--shoot", "average"}, "--shoot"},
                      {{"--shooters", "4", "-o", "@x.ibrr"}, "--shooters"},
                      {{"--method", "stochastic", "--shooters", "0"}, "--shooters"},
                      {{"--method", "stochastic", "--shoot", "sideways"}, "--shoot"},
                      {{"--method", "stochastic", "--iterations", "-3"}, "--iterations"}},
     .interruptFlags = {"--iterations", "100000"},
     .badOptions = {stochasticRefuses("--shooters", [](StochasticOptions& o) { o.shootersPerIteration = 0; }),
                    stochasticRefuses("--shooters", [](StochasticOptions& o) { o.shootersPerIteration = 65; }),
                    stochasticRefuses("--cluster", [](StochasticOptions& o) { o.clusterTexels = 0; }),
                    stochasticRefuses("--emitter-cluster", [](StochasticOptions& o) { o.emitterClusterTexels = 17; }),
                    stochasticRefuses("--hemisphere", [](StochasticOptions& o) { o.hemisphereResolution = 8; }),
                    stochasticRefuses("--max-edge", [](StochasticOptions& o) { o.maxEdgeFraction = 2.0; }),
                    stochasticRefuses("--time-budget", [](StochasticOptions& o) { o.timeBudgetSeconds = -1.0; }),
                    stochasticRefuses("never stop", [](StochasticOptions& o) { o.iterations = 0; })}},
    {.name = "matrix",
     .furnace = matrixFurnace,
     .furnaceBounds = {.worst = 0.02},
     .bakeFlags = {"--atlas", "32", "--hemicube", "32", "--bounces", "8", "--save-matrix", "@furnace.ffmatrix"},
     .bakeSays = {"k = 8 bounces", "direct light by matrix", "relight"},
     .bakeBounds = {.mean = 0.02},
     .bakeChecks = checkBakedMatrix,
     .refusedFlags = {{{"--method", "matrix", "--paths", "64"}, "--paths"},
                      {{"--method", "matrix", "--residual", "0.01"}, "--residual"},
                      {{"--method", "matrix", "--shooters", "4"}, "--shooters"},
                      {{"--method", "matrix", "--hemisphere", "64"}, "--hemisphere"},
                      {{"--method", "matrix", "--iterations", "3"}, "--iterations"},
                      {{"--method", "matrix", "--time-budget", "3"}, "--time-budget"},
                      {{"--method", "matrix", "--indirect-hemicube", "16"}, "--indirect-hemicube"},
                      {{"--method", "gather", "--bounces", "4"}, "--bounces"},
                      {{"--method", "progressive", "--storage", "compressed"}, "--storage"},
                      {{"--method", "stochastic", "--save-matrix", "@x.lightmap.m"}, "--save-matrix"},
                      {{"--reorder", "rows", "-o", "@x.ibrr"}, "--reorder"},
                      {{"--method", "matrix", "--bounces", "0"}, "--bounces"},
                      {{"--method", "matrix", "--storage", "zipped"}, "--storage"},
                      {{"--method", "matrix", "--reorder", "columns"}, "--reorder"},
                      {{"--method", "matrix", "--direct", "sideways"}, "--direct"},
                      {{"--method", "matrix", "--exact-fraction", "2"}, "--exact-fraction"},
                      {{"--method", "matrix", "--log-range", "0"}, "--log-range"},
                      {{"--method", "matrix", "--light-samples", "0"}, "--light-samples"},
                      {{"--method", "matrix", "--atlas", "64", "--max-patches", "10"}, "--max-patches"},
                      {{"--method", "matrix", "--save-matrix", "@x.lightmap"}, "--save-matrix"}},
     .interruptFlags = {"--atlas", "64", "--bounces", "64", "--save-matrix", "@cornell.ffmatrix"},
     .badOptions = {matrixRefuses("--bounces", [](MatrixOptions& o) { o.bounces = 0; }),
                    matrixRefuses("--hemicube", [](MatrixOptions& o) { o.hemicubeResolution = 33; }),
                    matrixRefuses("--layers", [](MatrixOptions& o) { o.layersPerBatch = -1; }),
                    matrixRefuses("--light-samples", [](MatrixOptions& o) { o.lightSamples = 0; }),
                    matrixRefuses("--max-patches", [](MatrixOptions& o) { o.maxPatches = 0; }),
                    matrixRefuses("--exact-fraction", [](MatrixOptions& o) { o.exactFraction = 1.5; }),
                    matrixRefuses("--log-range", [](MatrixOptions& o) { o.logRange = 0.0f; }),
                    {"--direct", [] { (void)parseMatrixDirect("sideways"); }},
                    {"--storage", [] { (void)parseMatrixStorage("zip"); }},
                    {"--reorder", [] { (void)parseMatrixReorder("random"); }}}},
};

}  // namespace

namespace {

// The library's solve of the furnace through the project's atlas by the row named `method`, against E / (1 - a):
// one test case a method below, so that ctest runs the slow ones side by side.
void checkFurnaceThroughTheAtlas(std::string_view method) {
  const auto row = std::ranges::find_if(kSolverRows, [&](const SolverRow& r) { return method == r.name; });
  REQUIRE(row != std::end(kSolverRows));
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "furnace.json");
  test::AtlasAndPatches a;
  const std::vector<glm::vec3> radiance = row->furnace(scene, a);
  checkFurnace(std::string(row->name) + " furnace", a.patches, radiance, row->furnaceBounds);
}

}  // namespace

TEST_CASE("solvers: the furnace through the project's atlas reaches E / (1 - a): gather", "[lightmap][solvers]") {
  checkFurnaceThroughTheAtlas("gather");
}
TEST_CASE("solvers: the furnace through the project's atlas reaches E / (1 - a): progressive", "[lightmap][solvers]") {
  checkFurnaceThroughTheAtlas("progressive");
}
TEST_CASE("solvers: the furnace through the project's atlas reaches E / (1 - a): progressive --adaptive",
          "[lightmap][solvers]") {
  checkFurnaceThroughTheAtlas("progressive --adaptive");
}
TEST_CASE("solvers: the furnace through the project's atlas reaches E / (1 - a): stochastic", "[lightmap][solvers]") {
  checkFurnaceThroughTheAtlas("stochastic");
}
TEST_CASE("solvers: the furnace through the project's atlas reaches E / (1 - a): matrix", "[lightmap][solvers]") {
  checkFurnaceThroughTheAtlas("matrix");
}
TEST_CASE("solvers: every method of the table has its furnace case above", "[lightmap][solvers]") {
  const std::vector<std::string> covered = {"gather", "progressive", "progressive --adaptive", "stochastic", "matrix"};
  for (const SolverRow& row : kSolverRows) CHECK(std::ranges::count(covered, std::string(row.name)) == 1);
}

TEST_CASE("solvers: ibrr bake --method X writes a furnace lightmap of E / (1 - a)", "[lightmap][solvers][cli]") {
  test::glContext();
  for (const SolverRow& row : kSolverRows) {
    if (row.bakeFlags.empty()) continue;
    DYNAMIC_SECTION(row.name) {
      const std::filesystem::path folder = test::outputDir(std::string(row.name) + "_cli_furnace");
      const test::CommandResult result = test::runIbrr(commandWords(
          folder, {{"bake", "furnace", "--method", row.name}, row.bakeFlags, {"-o", "@furnace.lightmap"}}));
      INFO(result.err);
      REQUIRE(result.exitCode == 0);
      for (const std::string& says : row.bakeSays) CHECK_THAT(result.out, Catch::Contains(says));
      std::vector<std::filesystem::path> files = {folder / "furnace.lightmap"};  // the @ files: the outputs
      for (const std::string& flag : row.bakeFlags)
        if (flag.starts_with('@')) files.push_back(folder / flag.substr(1));
      for (const std::filesystem::path& file : files) CHECK_THAT(result.out, Catch::Contains("wrote " + file.string()));
      for (const auto& entry : std::filesystem::directory_iterator(folder))  // no temporary left
        CHECK((std::ranges::count(files, entry.path()) > 0 || entry.path().string() == files[0].string() + ".exr"));
      const scene::Scene scene = scene::loadScene(test::sceneDir() / "furnace.json");
      LightmapAtlas atlas;
      const Lightmap lightmap = loadLightmap(files[0], scene, &atlas);
      CHECK(lightmap.method == commandWords(folder, {{row.name}}).front());  // without the method's flags
      const PatchList patches = rasterizePatches(scene, atlas);
      checkFurnace(std::string(row.name) + " bake of the furnace", patches, lightmap.radiance, row.bakeBounds);
      if (row.bakeChecks) row.bakeChecks(folder, scene, lightmap, atlas, patches);
    }
  }
}

TEST_CASE("solvers: bake flags of other methods are refused, naming the flag", "[lightmap][solvers][cli]") {
  for (const SolverRow& row : kSolverRows) {
    DYNAMIC_SECTION(row.name) {
      const std::filesystem::path folder = test::outputDir(std::string(row.name) + "_cli_flags");
      std::vector<test::RefusedCommand> commands;
      for (const test::RefusedCommand& c : row.refusedFlags) {
        std::vector<std::string> output = {"-o", "@x.lightmap"};
        if (std::ranges::count(c.arguments, std::string("-o")) > 0) output.clear();  // it names its own
        commands.push_back({commandWords(folder, {{"bake", "furnace"}, c.arguments, output}), c.named});
      }
      test::checkRefusedByName(folder, commands);
    }
  }
}

TEST_CASE("solvers: Ctrl-C stops a bake: exit 130, no lightmap, no matrix and no temporary file left",
          "[lightmap][solvers][cli]") {
  for (const SolverRow& row : kSolverRows) {
    if (row.interruptFlags.empty()) continue;
    DYNAMIC_SECTION(row.name) {
      const std::filesystem::path folder = test::outputDir(std::string(row.name) + "_cli_interrupt");
      std::string arguments = "bake cornell --method " + std::string(row.name);
      for (const std::string& word : commandWords(folder, {row.interruptFlags, {"-o", "@cornell.lightmap"}}))
        arguments += " " + word;
      test::checkInterruptedCleanly(folder, arguments);
    }
  }
}

TEST_CASE("solvers: bad options are refused, naming the flag", "[lightmap][solvers]") {
  for (const SolverRow& row : kSolverRows) {
    if (row.badOptions.empty()) continue;
    DYNAMIC_SECTION(row.name) {
      for (const RefusedOption& option : row.badOptions) {
        INFO(option.named);
        CHECK_THROWS_WITH(option.call(), Catch::Contains(option.named));
      }
    }
  }
}

}  // namespace ibrr::lightmap
