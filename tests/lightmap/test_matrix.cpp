// The form-factor matrix solver against known answers: the k-bounce matrix by binary powering
// against k separate products, the GPU product against the CPU one (dense, compressed with the
// GL's BC1 decoder and with the shader's own), a moved light against a fresh solve of the moved
// scene, the matrix file's round trip and its refusals, the compression error with and without
// reordering, and the refusals that need a scene; moving lights in the scene and its atlas
// (translateLights, scenes/cornell_light_moved.json) and parsing --move-light; the command line:
// `ibrr render --matrix --move-light` against the library's relight. The furnace, the options'
// errors and `ibrr bake --method matrix`: test_solvers.cpp.
#include "display/render_methods.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/matrix.hpp"
#include "lightmap_test_support.hpp"
#include "rays/test_scenes.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"
#include "util/image.hpp"
#include "util/stopwatch.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <tuple>

namespace ibrr::lightmap {
namespace {

using Setup = test::AtlasAndPatches;
constexpr auto makeSetup = test::makeAtlasAndPatches;

// Σ_{h=1..k} T^h x by k separate products with T = diag(ρ) F, in double.
std::vector<double> separateProducts(const std::vector<float>& f, const std::vector<float>& albedo, std::size_t n,
                                     int k, const std::vector<double>& x) {
  std::vector<double> current = x, sum(n, 0.0), next(n);
  for (int h = 0; h < k; ++h) {
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (std::size_t j = 0; j < n; ++j) s += double(f[i * n + j]) * current[j];
      next[i] = double(albedo[i]) * s;
    }
    current = next;
    for (std::size_t i = 0; i < n; ++i) sum[i] += current[i];
  }
  return sum;
}

using test::relativeRms;  // relativeRms(a, b, use): sqrt(Σ|a − b|²) / sqrt(Σ|b|²) where `use` accepts

}  // namespace

TEST_CASE("matrix: the k-bounce matrix by binary powering equals k separate products", "[lightmap][matrix]") {
  // A random substochastic F (rows sum to 0.9) of a size that is no multiple of the blocking.
  const std::size_t n = 53;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> f(n * n), albedo(n);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j)
      sum += f[i * n + j] = (i == j || uniform(random) < 0.3f) ? 0.0f : uniform(random);
    for (std::size_t j = 0; j < n; ++j) f[i * n + j] = float(0.9 * f[i * n + j] / sum);
    albedo[i] = 0.3f + 0.6f * uniform(random);
  }
  std::vector<double> x(n);
  for (double& v : x) v = uniform(random);
  // multiplyMatrices against the textbook triple loop.
  std::vector<float> product(n * n);
  multiplyMatrices(f, f, product, n);
  double worstProduct = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (std::size_t k = 0; k < n; ++k) s += double(f[i * n + k]) * double(f[k * n + j]);
      worstProduct = std::max(worstProduct, std::abs(double(product[i * n + j]) - s));
    }
  CHECK(worstProduct < 1e-6);
  for (const int k : {1, 2, 3, 4, 7, 8, 13, 16}) {
    const std::vector<float> m = computeBounceMatrix(f, albedo, n, k);
    const std::vector<double> expected = separateProducts(f, albedo, n, k, x);
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (std::size_t j = 0; j < n; ++j) s += double(m[i * n + j]) * x[j];
      worst = std::max(worst, std::abs(s - expected[i]) / expected[i]);
    }
    INFO("k = " << k);
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("matrix: BC1 blocks decode as the format says", "[lightmap][matrix]") {
  // A constant block is its colour to the 5/6/5-bit endpoint precision.
  std::array<glm::u8vec3, 16> constant;
  constant.fill(glm::u8vec3(200, 100, 17));
  for (const glm::u8vec3& t : decodeBc1Block(encodeBc1Block(constant))) {
    CHECK(std::abs(int(t.r) - 200) <= 4);
    CHECK(std::abs(int(t.g) - 100) <= 2);
    CHECK(std::abs(int(t.b) - 17) <= 4);
  }
  // A hand-made block: colour0 = white > colour1 = black, indices 0, 1, 2, 3 repeated.
  const std::uint64_t block = 0xffffull | (0x0000ull << 16) | (std::uint64_t(0xe4e4e4e4u) << 32);
  const std::array<glm::u8vec3, 16> texels = decodeBc1Block(block);
  CHECK(texels[0] == glm::u8vec3(255));
  CHECK(texels[1] == glm::u8vec3(0));
  CHECK(texels[2] == glm::u8vec3(170));  // (2·255 + 0) / 3
  CHECK(texels[3] == glm::u8vec3(85));
  // colour0 ≤ colour1: three colours and black.
  const std::array<glm::u8vec3, 16> three =
      decodeBc1Block(0x0000ull | (0xffffull << 16) | (std::uint64_t(0xe4e4e4e4u) << 32));
  CHECK(three[2] == glm::u8vec3(127));
  CHECK(three[3] == glm::u8vec3(0));
}

TEST_CASE("matrix: the GPU product equals the CPU product (dense, compressed by GL and by the shader)",
          "[lightmap][matrix]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Setup s = makeSetup(scene, 32);
  MatrixOptions options;
  options.hemicubeResolution = 32;
  options.storage = MatrixStorage::Compressed;
  auto solution = std::make_shared<MatrixSolution>(precomputeMatrix(scene, s.atlas, s.patches, options));
  REQUIRE(solution->direct == MatrixDirect::Rays);
  const std::size_t n = solution->size();
  std::mt19937 random(3);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<glm::vec3> x(n);
  for (glm::vec3& v : x) v = glm::vec3(uniform(random), uniform(random), uniform(random));
  const auto worstRelative = [](const std::vector<glm::vec3>& a, const std::vector<glm::vec3>& b) {
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i)
      for (int c = 0; c < 3; ++c)
        worst =
            std::max(worst, std::abs(double(a[i][c]) - double(b[i][c])) / std::max(double(std::abs(b[i][c])), 1e-6));
    return worst;
  };
  {
    MatrixRelighter dense(scene, solution, MatrixStorage::Dense);
    const double error = worstRelative(dense.multiply(x), multiplyOnCpu(*solution, MatrixStorage::Dense, x));
    std::printf("GPU vs CPU product, %zu patches: dense %.2e\n", n, error);
    CHECK(error < 1e-4);
    // The whole relight: L = L_e + e + N e in the atlas texture.
    const std::vector<glm::vec3> e = dense.emissionVector({});
    dense.relightWith(e);
    const std::vector<glm::vec3> expected =
        assembleRadiance(*solution, e, multiplyOnCpu(*solution, MatrixStorage::Dense, e));
    const std::vector<glm::vec3> actual = dense.readRadiance();
    CHECK(worstRelative(actual, expected) < 1e-4);
  }
  {
    MatrixRelighter software(scene, solution, MatrixStorage::Compressed, MatrixRelighter::Bc1Decoder::Shader);
    CHECK_FALSE(software.hardwareBc1());
    const double error = worstRelative(software.multiply(x), multiplyOnCpu(*solution, MatrixStorage::Compressed, x));
    std::printf("GPU vs CPU product: compressed, shader BC1 decoding %.2e\n", error);
    CHECK(error < 1e-4);
  }
  {
    MatrixRelighter hardware(scene, solution, MatrixStorage::Compressed, MatrixRelighter::Bc1Decoder::Hardware);
    const double error = worstRelative(hardware.multiply(x), multiplyOnCpu(*solution, MatrixStorage::Compressed, x));
    std::printf("GPU vs CPU product: compressed, %s BC1 decoding %.2e\n", hardware.hardwareBc1() ? "GL" : "shader",
                error);
    // The GL's BC1 interpolants may round differently by one 8-bit step (a factor e^{R/255}
    // on one entry); summed over a row that stays well below 1%.
    CHECK(error < 1e-2);
  }
}

TEST_CASE("matrix: chained products of the one-bounce matrix on the GPU equal one product of the k-bounce matrix",
          "[lightmap][matrix]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Setup s = makeSetup(scene, 24);
  MatrixOptions options;
  options.hemicubeResolution = 16;
  options.bounces = 1;
  auto one = std::make_shared<MatrixSolution>(precomputeMatrix(scene, s.atlas, s.patches, options));
  options.bounces = 6;
  auto six = std::make_shared<MatrixSolution>(precomputeMatrix(scene, s.atlas, s.patches, options));
  MatrixRelighter oneBounce(scene, one, MatrixStorage::Dense);
  MatrixRelighter sixBounces(scene, six, MatrixStorage::Dense);
  const std::vector<glm::vec3> e = oneBounce.emissionVector({});
  const std::vector<glm::vec3> chained = oneBounce.multiply(e, 6);
  const std::vector<glm::vec3> single = sixBounces.multiply(e, 1);
  const double difference = relativeRms(chained, single, [](std::size_t) { return true; });
  std::printf("6 chained products vs one 6-bounce product, %zu patches: relative RMS difference %.2e\n", one->size(),
              difference);
  CHECK(difference < 1e-5);
}

TEST_CASE("matrix: moving the Cornell light by 50 mm changes only the emission vector and matches a fresh solve",
          "[lightmap][matrix]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  for (const scene::MeshInstance& instance : scene.instances) REQUIRE(instance.objectToWorld == glm::mat4(1.0f));
  const glm::vec3 offset(50.0f, 0.0f, 0.0f);  // mm, along the ceiling
  const scene::Scene moved = translateLights(scene, std::vector<glm::vec3>{offset});
  const Setup s = makeSetup(scene, 32);
  const Setup sm = makeSetup(moved, 32);
  REQUIRE(s.atlas.width == sm.atlas.width);
  REQUIRE(s.atlas.height == sm.atlas.height);
  REQUIRE(s.patches.valid == sm.patches.valid);  // the same texels: the light's chart only moved
  MatrixOptions options;
  options.hemicubeResolution = 32;
  auto solution = std::make_shared<MatrixSolution>(precomputeMatrix(scene, s.atlas, s.patches, options));
  auto fresh = std::make_shared<MatrixSolution>(precomputeMatrix(moved, sm.atlas, sm.patches, options));
  MatrixRelighter relighter(scene, solution, MatrixStorage::Dense);
  REQUIRE(relighter.lights().size() == 1);
  relighter.relight({});
  const std::vector<glm::vec3> before = relighter.readRadiance();
  const std::vector<glm::vec3> offsets = {offset};
  const RelightTiming timing = relighter.relight(offsets);
  const std::vector<glm::vec3> after = relighter.readRadiance();
  MatrixRelighter freshRelighter(moved, fresh, MatrixStorage::Dense);
  freshRelighter.relight({});
  const std::vector<glm::vec3> expected = freshRelighter.readRadiance();
  // Compare the texels that do not emit (the light's own texels moved).
  const auto surface = [&](std::size_t t) {
    return s.patches.valid[t] && !glm::any(glm::greaterThan(s.patches.emission[t], glm::vec3(0.0f)));
  };
  const double mismatch = relativeRms(after, expected, surface);
  const double change = relativeRms(before, expected, surface);
  std::printf(
      "moved light: relit vs fresh solve of the moved scene %.3f%% relative RMS, unmoved vs moved %.2f%% "
      "(direct %.1f ms, product %.1f ms)\n",
      100.0 * mismatch, 100.0 * change, timing.directMs, timing.productMs);
  CHECK(mismatch < 0.01);
  CHECK(change > 5.0 * mismatch);
  // Only the emission vector changed: the relit lightmap is L_e + e' + N e' with the same N.
  const std::vector<glm::vec3> e = relighter.emissionVector(offsets);
  const std::vector<glm::vec3> cpu = assembleRadiance(*solution, e, multiplyOnCpu(*solution, MatrixStorage::Dense, e));
  CHECK(relativeRms(after, cpu, [&](std::size_t t) { return s.patches.valid[t] != 0; }) < 1e-5);
}

TEST_CASE("matrix: the Cornell box agrees with the gathering solver on the same atlas", "[lightmap][matrix]") {
  // Two solvers of the same radiance system that share nothing but the atlas and the hemicube
  // form factors of the indirect light: the direct light here comes from shadow rays, there from
  // the first hemicube gather; the bounces here from one product, there from Jacobi iterations.
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Setup s = makeSetup(scene, 48);
  MatrixOptions options;
  options.hemicubeResolution = 32;
  options.bounces = 12;
  const MatrixResult matrix = solveMatrix(scene, s.atlas, s.patches, options);
  GatherOptions gatherOptions;
  gatherOptions.maxIterations = 13;  // the same paths: up to k + 1 bounces
  const GatherResult gather = solveGather(scene, s.atlas, s.patches, gatherOptions);
  const auto surface = [&](std::size_t t) {
    return s.patches.valid[t] && !glm::any(glm::greaterThan(s.patches.emission[t], glm::vec3(0.0f)));
  };
  const double difference = relativeRms(matrix.lightmap.radiance, gather.lightmap.radiance, surface);
  // Power per channel leaving the non-emitting texels: Σ π L A.
  glm::dvec3 a(0.0), b(0.0);
  for (std::size_t t = 0; t < s.patches.texelCount(); ++t) {
    if (!surface(t)) continue;
    a += glm::dvec3(matrix.lightmap.radiance[t]) * double(s.patches.area[t]);
    b += glm::dvec3(gather.lightmap.radiance[t]) * double(s.patches.area[t]);
  }
  std::printf(
      "Cornell, %zu patches: matrix vs gathering solver %.2f%% relative RMS per texel, reflected power ratio "
      "%.4f %.4f %.4f\n",
      matrix.solution->size(), 100.0 * difference, a.r / b.r, a.g / b.g, a.b / b.b);
  CHECK(difference < 0.05);
  for (int c = 0; c < 3; ++c) CHECK(a[c] / b[c] == Approx(1.0).epsilon(0.02));
}

TEST_CASE("matrix: the ray-traced direct light under a rectangle light is rho L F, moved or not",
          "[lightmap][matrix]") {
  rays::test::PlaneUnderLight setup;
  const scene::Scene scene = rays::test::makePlaneUnderLight(setup);
  const Setup s = makeSetup(scene, 48);
  MatrixOptions options;
  options.hemicubeResolution = 8;  // the matrix is not what this test looks at
  options.bounces = 1;
  auto solution = std::make_shared<MatrixSolution>(precomputeMatrix(scene, s.atlas, s.patches, options));
  REQUIRE(solution->direct == MatrixDirect::Rays);
  MatrixRelighter relighter(scene, solution, MatrixStorage::Dense);
  REQUIRE(relighter.lights().size() == 1);
  for (const glm::vec3 offset : {glm::vec3(0.0f), glm::vec3(0.3f, -0.2f, 0.5f)}) {
    rays::test::PlaneUnderLight moved = setup;
    moved.x0 += offset.x, moved.x1 += offset.x, moved.y0 += offset.y, moved.y1 += offset.y;
    moved.height += offset.z;
    const std::vector<glm::vec3> offsets = {offset};
    const std::vector<glm::vec3> e = relighter.emissionVector(offsets);
    double worst = 0.0, sum = 0.0;
    int checked = 0;
    for (std::size_t i = 0; i < solution->size(); ++i) {
      const glm::vec3 p = solution->position[i];
      if (solution->normal[i].z < 0.5f || std::abs(p.x) > 3.0f || std::abs(p.y) > 3.0f)
        continue;  // the plane, near the light
      const double f = rays::test::formFactor(moved, p.x, p.y);
      for (int c = 0; c < 3; ++c) {
        const double expected = double(setup.albedo[c]) * double(setup.radiance[c]) * f;
        const double error = std::abs(double(e[i][c]) / expected - 1.0);
        worst = std::max(worst, error);
        sum += error;
      }
      ++checked;
    }
    std::printf(
        "direct light by rays, light moved by (%.1f, %.1f, %.1f): %d patches, mean deviation from rho L F "
        "%.3f%%, worst %.3f%%\n",
        offset.x, offset.y, offset.z, checked, 100.0 * sum / (3.0 * checked), 100.0 * worst);
    REQUIRE(checked > 30);
    CHECK(sum / (3.0 * checked) < 0.005);
    CHECK(worst < 0.02);
  }
}

TEST_CASE("matrix: the matrix file round trip, and truncated, corrupt or foreign files are refused by name",
          "[lightmap][matrix]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Setup s = makeSetup(scene, 24);
  MatrixOptions options;
  options.hemicubeResolution = 16;
  options.storage = MatrixStorage::Compressed;
  MatrixSolution solution = precomputeMatrix(scene, s.atlas, s.patches, options);
  solution.atlasOptions.targetSize = 24;
  const std::filesystem::path folder = test::outputDir("matrix_file");
  const std::filesystem::path file = folder / "cornell.ibrrmatrix";
  saveMatrix(file, solution);
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    CHECK(entry.path() == file);  // no temporary left
  const MatrixSolution loaded = loadMatrix(file, scene);
  CHECK(loaded.width == solution.width);
  CHECK(loaded.height == solution.height);
  CHECK(loaded.atlasOptions.targetSize == 24);
  CHECK(loaded.atlasOptions.texelsPerUnit == solution.atlasOptions.texelsPerUnit);
  CHECK(loaded.bounces == solution.bounces);
  CHECK(loaded.direct == solution.direct);
  CHECK(loaded.texels == solution.texels);
  CHECK(loaded.albedo == solution.albedo);
  CHECK(loaded.emission == solution.emission);
  CHECK(loaded.position == solution.position);
  CHECK(loaded.dense == solution.dense);
  REQUIRE(loaded.compressed);
  CHECK(loaded.compressed->blocks == solution.compressed->blocks);
  CHECK(loaded.compressed->rowOrder == solution.compressed->rowOrder);
  CHECK(loaded.compressed->exactValue == solution.compressed->exactValue);
  CHECK(loaded.settingsJson == solution.settingsJson);
  CHECK_NOTHROW(checkMatrixAtlas(loaded, s.atlas, s.patches, file));
  const Setup other = makeSetup(scene, 32);
  CHECK_THROWS_WITH(checkMatrixAtlas(loaded, other.atlas, other.patches, file), Catch::Contains(file.string()));
  // Saved without the dense matrix: the compressed one alone relights.
  const std::filesystem::path small = folder / "small.ibrrmatrix";
  saveMatrix(small, solution, false);
  CHECK(std::filesystem::file_size(small) < std::filesystem::file_size(file) / 3);
  auto compressedOnly = std::make_shared<MatrixSolution>(loadMatrix(small, scene));
  CHECK(compressedOnly->dense[0].empty());
  {
    // It relights as the original's compressed matrix does.
    MatrixRelighter relighter(scene, compressedOnly, MatrixStorage::Compressed, MatrixRelighter::Bc1Decoder::Shader);
    const std::vector<glm::vec3> e = relighter.emissionVector({});
    CHECK(relativeRms(relighter.multiply(e), multiplyOnCpu(solution, MatrixStorage::Compressed, e),
                      [](std::size_t) { return true; }) < 1e-5);
    CHECK_THROWS_WITH(MatrixRelighter(scene, compressedOnly, MatrixStorage::Dense), Catch::Contains("dense"));
  }

  const std::string bytes = test::readText(file);
  const auto refuses = [&](const std::string& name, const std::string& content, const char* what,
                           const scene::Scene& against) {
    const std::filesystem::path bad = folder / name;
    test::writeText(bad, content);
    CHECK_THROWS_WITH(loadMatrix(bad, against), Catch::Contains(bad.string()) && Catch::Contains(what));
  };
  refuses("truncated.ibrrmatrix", bytes.substr(0, bytes.size() / 2), "truncated", scene);
  std::string flipped = bytes;
  flipped[flipped.size() / 3] ^= 0x10;
  refuses("flipped.ibrrmatrix", flipped, "corrupt", scene);
  refuses("other.ibrrmatrix", "{\"format\": \"ibrr lightmap\"}", "not a form-factor matrix", scene);
  const scene::Scene furnace = scene::loadScene(test::sceneDir() / "furnace.json");
  refuses("copy.ibrrmatrix", bytes, "another scene", furnace);
  CHECK_THROWS_WITH(loadMatrix(folder / "missing.ibrrmatrix", scene), Catch::Contains("missing.ibrrmatrix"));
}

// Found by tests/fuzz/fuzz_matrix: an array of no entries (here the exact entries of a compression that kept
// none) was read by a memcpy to a null pointer, which UBSan reports as undefined behaviour.
TEST_CASE("matrix: a compressed matrix with no exact entries round-trips through its file", "[lightmap][matrix]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  MatrixSolution solution;
  solution.width = solution.height = 8;
  solution.sceneFingerprint = scene.fingerprint();
  solution.bounces = 1;
  solution.texels = {0, 1, 2};
  solution.position = solution.normal = solution.albedo = solution.emission =
      std::vector<glm::vec3>(3, glm::vec3(0.5f));
  auto compressed = std::make_shared<CompressedMatrix>();
  compressed->paddedSize = 4;
  compressed->rowOrder = compressed->columnOrder = {0, 1, 2};
  compressed->rowScale.assign(3, glm::vec3(1.0f));
  compressed->blocks.assign(1, 0);
  compressed->exactStart.assign(4, 0);  // no exact entries in any row
  solution.compressed = compressed;
  const std::filesystem::path file = test::outputDir("matrix_no_exact") / "no_exact.ibrrmatrix";
  saveMatrix(file, solution);
  const MatrixSolution loaded = loadMatrix(file, scene);
  REQUIRE(loaded.compressed);
  CHECK(loaded.compressed->exactColumn.empty());
  CHECK(loaded.compressed->exactValue.empty());
  CHECK(loaded.compressed->exactStart == compressed->exactStart);
}

TEST_CASE("matrix: compression keeps the top entries exact and reordering lowers the error", "[lightmap][matrix]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const Setup s = makeSetup(scene, 32);
  MatrixOptions options;
  options.hemicubeResolution = 32;
  auto solution = std::make_shared<MatrixSolution>(precomputeMatrix(scene, s.atlas, s.patches, options));
  const std::size_t n = solution->size();
  MatrixRelighter dense(scene, solution, MatrixStorage::Dense);
  const std::vector<glm::vec3> e = dense.emissionVector({});
  const std::vector<glm::vec3> exact = multiplyOnCpu(*solution, MatrixStorage::Dense, e);
  std::array<CompressionError, 3> errors;
  std::array<double, 3> relightErrors{};
  const MatrixReorder orders[] = {MatrixReorder::None, MatrixReorder::Rows, MatrixReorder::RowsColumns};
  for (int k = 0; k < 3; ++k) {
    compressMatrix(*solution, options.exactFraction, options.logRange, orders[k]);
    errors[std::size_t(k)] = compressionError(*solution);
    // The radiance with the compressed matrix against the dense one.
    const std::vector<glm::vec3> l =
        assembleRadiance(*solution, e, multiplyOnCpu(*solution, MatrixStorage::Compressed, e));
    const std::vector<glm::vec3> l0 = assembleRadiance(*solution, e, exact);
    relightErrors[std::size_t(k)] = relativeRms(l, l0, [&](std::size_t t) { return s.patches.valid[t] != 0; });
    std::printf(
        "compression (%s), %zu patches: mean %.3e, max %.3e, total %.4g; relit radiance %.3f%% off; %zu of %zu "
        "bytes\n",
        matrixReorderName(orders[k]), n, errors[std::size_t(k)].mean, errors[std::size_t(k)].max,
        errors[std::size_t(k)].total, 100.0 * relightErrors[std::size_t(k)], solution->compressed->bytes(),
        solution->denseBytes());
  }
  // The exact entries are exact: an entry of the top list decodes to its dense value.
  const CompressedMatrix& c = *solution->compressed;
  for (std::uint32_t e0 = c.exactStart[1]; e0 < std::min(c.exactStart[2], c.exactStart[1] + 8); ++e0) {
    const std::uint32_t i = c.rowOrder[1], j = c.exactColumn[e0];
    const glm::vec3 v = decodedEntry(c, i, j);
    for (int ch = 0; ch < 3; ++ch) CHECK(v[ch] == Approx(solution->dense[std::size_t(ch)][i * n + j]).epsilon(1e-5));
  }
  CHECK(errors[2].total < errors[0].total);
  CHECK(3 * solution->compressed->bytes() < solution->denseBytes());  // the target: 3× smaller at least
  CHECK(relightErrors[2] < 0.02);
}

TEST_CASE("matrix: too many patches, or rays where everything emits, are refused naming the flags",
          "[lightmap][matrix]") {
  CHECK(parseMatrixReorder("rows-columns") == MatrixReorder::RowsColumns);  // (the bad words: test_solvers.cpp)
  // Too many patches for the dense matrix: the message names the atlas flags.
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "furnace.json");
  const Setup s = makeSetup(scene, 16);
  MatrixOptions options;
  options.maxPatches = 10;
  CHECK_THROWS_WITH(precomputeMatrix(scene, s.atlas, s.patches, options),
                    Catch::Contains("--max-patches") && Catch::Contains("--atlas"));
  // Rays need something that does not emit.
  options = MatrixOptions{};
  options.direct = MatrixDirect::Rays;
  CHECK_THROWS_WITH(precomputeMatrix(scene, s.atlas, s.patches, options), Catch::Contains("--direct matrix"));
}

TEST_CASE("matrix: translateLights moves only the light, as scenes/cornell_light_moved.json does",
          "[lightmap][matrix]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const scene::Scene manifest = scene::loadScene(test::sceneDir() / "cornell_light_moved.json");
  const std::vector<MatrixLight> lights = matrixLights(scene);
  REQUIRE(lights.size() == 1);
  const std::vector<std::string> moves = {"0:50,0,0"};
  const std::vector<glm::vec3> offsets = parseLightMoves(moves, lights);
  REQUIRE(offsets == std::vector<glm::vec3>{glm::vec3(50.0f, 0.0f, 0.0f)});
  const scene::Scene moved = translateLights(scene, offsets);
  REQUIRE(moved.triangleCount() == scene.triangleCount());
  REQUIRE(manifest.triangleCount() == scene.triangleCount());
  // Every triangle's corners, in order: the emitters' moved by 50 mm along x, the rest unchanged,
  // and all of them where the moved-light manifest has them.
  const scene::TriangleMesh &a = scene.meshes[0], &b = moved.meshes[0], &c = manifest.meshes[0];
  for (std::size_t t = 0; t < a.triangles.size(); ++t) {
    const bool emits = scene.materials[a.triangleMaterials[t]].isEmissive();
    for (int k = 0; k < 3; ++k) {
      const glm::vec3 expected = a.positions[a.triangles[t][k]] + (emits ? offsets[0] : glm::vec3(0.0f));
      CHECK(b.positions[b.triangles[t][k]] == expected);
      CHECK(c.positions[c.triangles[t][k]] == expected);
    }
  }
  CHECK(moved.emitters().size() == 2);
  REQUIRE(moved.emitters().size() == manifest.emitters().size());
  for (std::size_t e = 0; e < moved.emitters().size(); ++e) {
    CHECK(moved.emitters()[e].v0 == manifest.emitters()[e].v0);
    CHECK(moved.emitters()[e].v2 == manifest.emitters()[e].v2);
  }
  // The atlas moves its emitters' vertices alike, and nothing else.
  test::glContext();
  AtlasOptions atlasOptions;
  atlasOptions.targetSize = 32;
  const LightmapAtlas atlas = buildAtlas(scene, atlasOptions);
  const LightmapAtlas movedAtlas = translateAtlasLights(scene, atlas, offsets);
  const LightmapAtlas manifestAtlas = buildAtlas(manifest, atlasOptions);
  REQUIRE(movedAtlas.vertices.size() == manifestAtlas.vertices.size());
  for (std::size_t v = 0; v < movedAtlas.vertices.size(); ++v) {
    CHECK(movedAtlas.vertices[v].position == manifestAtlas.vertices[v].position);
    CHECK(movedAtlas.vertices[v].lightmapUv == atlas.vertices[v].lightmapUv);
  }
  CHECK(translateLights(scene, {}).fingerprint() == scene.fingerprint());

  const auto refused = [&](const std::string& move, const char* what) {
    const std::vector<std::string> bad = {move};
    CHECK_THROWS_WITH(parseLightMoves(bad, lights), Catch::Contains("--move-light") && Catch::Contains(what));
  };
  refused("0:50,0", "LIGHT:DX,DY,DZ");
  refused("0 50,0,0", "LIGHT:DX,DY,DZ");
  refused("a:50,0,0", "LIGHT:DX,DY,DZ");
  refused("0:50,0,0x", "LIGHT:DX,DY,DZ");
  refused("0:nan,0,0", "LIGHT:DX,DY,DZ");
  refused("1:50,0,0", "0: light (instance 0)");  // lists the movable lights
  refused("-1:50,0,0", "no light -1");
  const std::vector<std::string> twice = {"0:1,0,0", "0:2,0,0"};
  CHECK_THROWS_WITH(parseLightMoves(twice, lights), Catch::Contains("moved twice"));
}

TEST_CASE("matrix: ibrr render --matrix --move-light equals the library's relight of the moved light",
          "[lightmap][matrix][cli]") {
  test::glContext();
  const std::filesystem::path folder = test::outputDir("matrix_cli_render");
  const std::filesystem::path matrix = folder / "cornell.ffmatrix";
  const test::CommandResult bake =
      test::runIbrr({"bake", "cornell", "--method", "matrix", "--atlas", "32", "--hemicube", "16", "--light-samples",
                     "32", "--save-matrix", matrix.string(), "-o", (folder / "cornell.lightmap").string()});
  INFO(bake.err);
  REQUIRE(bake.exitCode == 0);
  CHECK_THAT(bake.out, Catch::Contains("0: light (instance 0)"));
  const std::filesystem::path image = folder / "moved.pfm";
  const test::CommandResult render = test::runIbrr({"render", "cornell", "--matrix", matrix.string(), "--move-light",
                                                    "0:50,0,-20", "--size", "40x40", "-o", image.string()});
  INFO(render.err);
  REQUIRE(render.exitCode == 0);
  CHECK_THAT(render.out, Catch::Contains("without recomputing") && Catch::Contains("0 by (50, 0, -20)") &&
                             Catch::Contains("relight: "));

  // The same relight through the library, rendered with the light drawn where it went.
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  auto solution = std::make_shared<MatrixSolution>(loadMatrix(matrix, scene));
  const LightmapAtlas atlas = buildAtlas(scene, solution->atlasOptions);
  const PatchList patches = rasterizePatches(scene, atlas);
  MatrixRelighter relighter(scene, solution, MatrixStorage::Dense);
  const std::vector<glm::vec3> offsets = {glm::vec3(50.0f, 0.0f, -20.0f)};
  relighter.relight(offsets);
  const Lightmap lightmap = matrixLightmap(*solution, relighter.readRadiance());
  display::RenderSettings settings;
  settings.lightmap = &lightmap;
  const LightmapAtlas movedAtlas = translateAtlasLights(scene, atlas, offsets);
  settings.lightmapAtlas = &movedAtlas;
  settings.lightmapPatches = &patches;
  const scene::Scene moved = translateLights(scene, offsets);
  const Image expected =
      display::renderOnce(display::makeLightmapPass, {moved, moved.camera(""), 40, 40, settings}).image;
  const Image got = readImage(image);
  REQUIRE(got.pixels.size() == expected.pixels.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < got.pixels.size(); ++i)
    worst = std::max(worst, double(glm::length(got.pixels[i] - expected.pixels[i])));
  CHECK(worst < 1e-5);
  // The light moved: the picture differs from the unmoved relight, and the light's pixels moved too.
  const test::CommandResult still = test::runIbrr(
      {"render", "cornell", "--matrix", matrix.string(), "--size", "40x40", "-o", (folder / "still.pfm").string()});
  REQUIRE(still.exitCode == 0);
  const Image unmoved = readImage(folder / "still.pfm");
  double change = 0.0;
  for (std::size_t i = 0; i < got.pixels.size(); ++i)
    change = std::max(change, double(glm::length(got.pixels[i] - unmoved.pixels[i])));
  CHECK(change > 1.0);

  // Clear errors, before any work.
  struct Case {
    std::vector<std::string> arguments;
    std::vector<std::string> named;
  };
  const std::string out = (folder / "bad.png").string();
  const Case cases[] = {
      {{"render", "cornell", "--matrix", matrix.string(), "--move-light", "1:50,0,0", "-o", out},
       {"--move-light", "0: light (instance 0)"}},
      {{"render", "cornell", "--matrix", matrix.string(), "--move-light", "0:50;0;0", "-o", out},
       {"--move-light", "LIGHT:DX,DY,DZ"}},
      {{"render", "furnace", "--matrix", matrix.string(), "-o", out}, {matrix.string(), "another scene"}},
      {{"render", "cornell", "--move-light", "0:50,0,0", "-o", out}, {"--move-light needs --matrix"}},
      {{"render", "cornell", "--matrix", (folder / "missing.ffmatrix").string(), "-o", out}, {"missing.ffmatrix"}},
      {{"render", "cornell", "--matrix", matrix.string(), "--lightmap", (folder / "cornell.lightmap").string(), "-o",
        out},
       {"not both"}},
  };
  for (const Case& c : cases) {
    const test::CommandResult result = test::runIbrr(c.arguments);
    INFO(c.named[0] << ": " << result.err);
    CHECK(result.exitCode != 0);
    for (const std::string& named : c.named) CHECK_THAT(result.err, Catch::Contains(named));
  }
  CHECK_FALSE(std::filesystem::exists(out));
}

}  // namespace ibrr::lightmap
