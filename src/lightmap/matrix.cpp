// The form-factor matrix solver (lightmap/matrix.hpp): the k-bounce matrix by binary powering of the
// one-bounce matrix (blocked dense products on the CPU), the precompute, the CPU product and the solved
// lightmap. Its other parts: the options (matrix_options.cpp), the lights and their moves
// (matrix_lights.cpp), the direct light (matrix_direct.cpp), the GPU relighter (matrix_relighter.cpp), the
// compression (matrix_compress.cpp) and the file (matrix_file.cpp).
#include "lightmap/matrix.hpp"

#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/gl.hpp"
#include "lightmap/form_factors.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/matrix_internal.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <tbb/blocked_range.h>
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace ibrr::lightmap {
namespace {

// ---- dense products -------------------------------------------------------------------------

constexpr std::size_t kStrip = 32;  // columns per register block
constexpr std::size_t kRows = 4;    // rows per register block

std::size_t roundUp(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

// C[i0..i0+4, j0..j0+32] = Σ_k A[i, k] B[k, j] over k < depth, matrices with row stride `stride`.
// 4 × 32 accumulators stay in registers; each B row segment is used by four rows.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("arch=haswell", "default")))
#endif
void multiplyBlock(const float* a, const float* b, float* c, std::size_t depth, std::size_t stride, std::size_t i0,
                   std::size_t j0) {
  float acc[kRows][kStrip] = {};
  const float* a0 = a + i0 * stride;
  for (std::size_t k = 0; k < depth; ++k) {
    const float* bk = b + k * stride + j0;
    for (std::size_t r = 0; r < kRows; ++r) {
      const float ar = a0[r * stride + k];
      for (std::size_t j = 0; j < kStrip; ++j) acc[r][j] += ar * bk[j];
    }
  }
  for (std::size_t r = 0; r < kRows; ++r)
    for (std::size_t j = 0; j < kStrip; ++j) c[(i0 + r) * stride + j0 + j] = acc[r][j];
}

// C = A · B for square matrices padded to `stride` (a multiple of kStrip; padding rows and
// columns are zero, so they stay zero).
void multiplyPadded(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c,
                    std::size_t stride) {
  c.assign(stride * stride, 0.0f);
  tbb::parallel_for(tbb::blocked_range2d<std::size_t>(0, stride / kRows, 4, 0, stride / kStrip, 4),
                    [&](const tbb::blocked_range2d<std::size_t>& range) {
                      for (std::size_t jb = range.cols().begin(); jb != range.cols().end(); ++jb)
                        for (std::size_t ib = range.rows().begin(); ib != range.rows().end(); ++ib)
                          multiplyBlock(a.data(), b.data(), c.data(), stride, stride, ib * kRows, jb * kStrip);
                    });
}


MatrixDirect resolveDirect(const PatchList& patches, const std::vector<std::uint32_t>& texels, MatrixDirect direct) {
  if (direct != MatrixDirect::Auto) return direct;
  for (const std::uint32_t t : texels)
    if (!glm::any(glm::greaterThan(patches.emission[t], glm::vec3(0.0f)))) return MatrixDirect::Rays;
  return MatrixDirect::Matrix;
}


}  // namespace

// ---- k-bounce matrix --------------------------------------------------------------------------

void multiplyMatrices(std::span<const float> a, std::span<const float> b, std::span<float> c, std::size_t n) {
  const std::size_t stride = roundUp(std::max<std::size_t>(n, 1), kStrip);
  const auto pad = [&](std::span<const float> m) {
    std::vector<float> p(stride * stride, 0.0f);
    for (std::size_t i = 0; i < n; ++i) std::copy_n(m.data() + i * n, n, p.data() + i * stride);
    return p;
  };
  const std::vector<float> pa = pad(a), pb = pad(b);
  std::vector<float> pc;
  multiplyPadded(pa, pb, pc, stride);
  for (std::size_t i = 0; i < n; ++i) std::copy_n(pc.data() + i * stride, n, c.data() + i * n);
}

std::vector<float> computeBounceMatrix(std::span<const float> formFactors, std::span<const float> albedo, std::size_t n,
                                       int bounces) {
  const std::size_t stride = roundUp(std::max<std::size_t>(n, 1), kStrip);
  // T = diag(ρ) F, padded.
  std::vector<float> t(stride * stride, 0.0f);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) t[i * stride + j] = albedo[i] * formFactors[i * n + j];
  // S_m = Σ_{h<m} T^h and P = T^m, m from 1 to k + 1 along the bits of k + 1 (highest first).
  std::vector<int> bits;
  for (int m = bounces + 1; m > 1; m >>= 1) bits.push_back(m & 1);
  std::reverse(bits.begin(), bits.end());
  std::vector<float> s(stride * stride, 0.0f), p = t, product;
  for (std::size_t i = 0; i < n; ++i) s[i * stride + i] = 1.0f;
  bool sIsIdentity = true;
  const auto addIdentity = [&](std::vector<float>& m) {
    for (std::size_t i = 0; i < n; ++i) m[i * stride + i] += 1.0f;
  };
  for (std::size_t b = 0; b < bits.size(); ++b) {
    throwIfInterrupted();  // each step is one to four n³ products
    const bool last = b + 1 == bits.size();
    // S_{2m} = S_m + T^m S_m
    if (sIsIdentity) {
      for (std::size_t e = 0; e < s.size(); ++e) s[e] += p[e];
      sIsIdentity = false;
    } else {
      multiplyPadded(p, s, product, stride);
      for (std::size_t e = 0; e < s.size(); ++e) s[e] += product[e];
    }
    if (!last) {
      multiplyPadded(p, p, product, stride);
      std::swap(p, product);
    }
    if (bits[b]) {  // S_{m+1} = I + T S_m
      multiplyPadded(t, s, product, stride);
      std::swap(s, product);
      addIdentity(s);
      if (!last) {
        multiplyPadded(t, p, product, stride);
        std::swap(p, product);
      }
    }
  }
  // N_k = S_{k+1} − I, unpadded.
  std::vector<float> result(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    std::copy_n(s.data() + i * stride, n, result.data() + i * n);
    result[i * n + i] -= 1.0f;
  }
  return result;
}

// ---- precompute ---------------------------------------------------------------------------------

MatrixSolution precomputeMatrix(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                const MatrixOptions& options, const ProgressObserver& progress) {
  validateMatrixOptions(options);
  const std::vector<std::uint32_t> texels = solverTexels(atlas, patches);
  const MatrixDirect direct = resolveDirect(patches, texels, options.direct);
  checkMatrixScene(scene, direct);
  const std::size_t n = texels.size();
  if (n > options.maxPatches)
    throw Error("the atlas has " + std::to_string(n) + " valid texels, more than --max-patches " +
                std::to_string(options.maxPatches) + " (the dense k-bounce matrix would take " +
                std::to_string(12 * n * n / 1000000) +
                " MB): choose a coarser --atlas or --texel-density, or raise --max-patches");

  MatrixSolution solution;
  solution.atlasOptions.texelsPerUnit = atlas.texelsPerUnit;
  solution.width = atlas.width;
  solution.height = atlas.height;
  solution.sceneFingerprint = scene.fingerprint();
  solution.bounces = options.bounces;
  solution.direct = direct;
  solution.texels = texels;
  for (const std::uint32_t t : texels) {
    solution.position.push_back(patches.position[t]);
    solution.normal.push_back(patches.normal[t]);
    solution.albedo.push_back(patches.albedo[t]);
    solution.emission.push_back(patches.emission[t]);
  }
  solution.settingsJson = matrixSettingsJson(options, direct);

  gpu::DebugGroup group("form-factor matrix");
  Stopwatch watch;
  gpu::ContextInfo gpuInfo;
  gpuInfo.renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const int layers = options.layersPerBatch > 0
                         ? options.layersPerBatch
                         : automaticLayersPerBatch(options.hemicubeResolution, gpuInfo.isSoftware());
  const TexelFormFactors factors =
      computeTexelFormFactors(scene, atlas, patches, options.hemicubeResolution, options.seed, true, layers);
  std::vector<float> f(n * n, 0.0f);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = factors.rowStart[i]; k < factors.rowStart[i + 1]; ++k)
      f[i * n + factors.column[k]] += factors.factor[k];
  solution.formFactorSeconds = watch.seconds();
  const std::uint64_t planned = options.storage == MatrixStorage::Compressed ? 5 : 4;
  std::uint64_t done = 0;
  const auto stageDone = [&] {
    if (progress) progress({"matrix", ++done, planned, "stages", {}});
  };
  stageDone();

  watch.restart();
  for (int c = 0; c < 3; ++c) {
    throwIfInterrupted();
    std::vector<float> albedo(n);
    for (std::size_t i = 0; i < n; ++i) albedo[i] = solution.albedo[i][c];
    solution.dense[std::size_t(c)] = computeBounceMatrix(f, albedo, n, options.bounces);
    stageDone();
  }
  solution.powerSeconds = watch.seconds();

  if (options.storage == MatrixStorage::Compressed) {
    throwIfInterrupted();
    watch.restart();
    compressMatrix(solution, options.exactFraction, options.logRange, options.reorder);
    solution.compressSeconds = watch.seconds();
    stageDone();
  }
  return solution;
}

// ---- CPU product ------------------------------------------------------------------------------

std::vector<glm::vec3> multiplyOnCpu(const MatrixSolution& solution, MatrixStorage storage,
                                     std::span<const glm::vec3> e) {
  const std::size_t n = solution.size();
  if (e.size() != n)
    throw Error("multiplyOnCpu: the vector has " + std::to_string(e.size()) + " entries, not " + std::to_string(n));
  std::vector<glm::vec3> r(n, glm::vec3(0.0f));
  if (storage == MatrixStorage::Dense) {
    if (solution.dense[0].size() != n * n) throw Error("the matrix has no dense form (saved without it)");
    tbb::parallel_for(std::size_t(0), n, [&](std::size_t i) {
      glm::dvec3 sum(0.0);
      for (int c = 0; c < 3; ++c) {
        const float* row = solution.dense[std::size_t(c)].data() + i * n;
        double s = 0.0;
        for (std::size_t j = 0; j < n; ++j) s += double(row[j]) * double(e[j][c]);
        sum[c] = s;
      }
      r[i] = glm::vec3(sum);
    });
    return r;
  }
  if (!solution.compressed) throw Error("the matrix has no compressed form (precompute with --storage compressed)");
  const CompressedMatrix& m = *solution.compressed;
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t row) {
    const std::vector<glm::vec3> decoded = decodeStoredRow(m, row);
    glm::dvec3 sum(0.0);
    for (std::size_t col = 0; col < n; ++col) sum += glm::dvec3(decoded[col]) * glm::dvec3(e[m.columnOrder[col]]);
    r[m.rowOrder[row]] = glm::vec3(sum);
  });
  return r;
}

std::vector<glm::vec3> assembleRadiance(const MatrixSolution& solution, std::span<const glm::vec3> e,
                                        std::span<const glm::vec3> r) {
  std::vector<glm::vec3> radiance(std::size_t(solution.width) * std::size_t(solution.height), glm::vec3(0.0f));
  const float s = solution.direct == MatrixDirect::Rays ? 1.0f : 0.0f;
  for (std::size_t i = 0; i < solution.size(); ++i)
    radiance[solution.texels[i]] = solution.emission[i] + s * e[i] + r[i];
  return radiance;
}


// ---- whole bake -------------------------------------------------------------------------------

Lightmap matrixLightmap(const MatrixSolution& solution, std::vector<glm::vec3> radiance) {
  if (radiance.size() != std::size_t(solution.width) * std::size_t(solution.height))
    throw Error("matrixLightmap: " + std::to_string(radiance.size()) + " texels for a " +
                std::to_string(solution.width) + "×" + std::to_string(solution.height) + " atlas");
  Lightmap lightmap;
  lightmap.atlasOptions = solution.atlasOptions;
  lightmap.width = solution.width;
  lightmap.height = solution.height;
  lightmap.radiance = std::move(radiance);
  lightmap.method = "matrix";
  lightmap.settingsJson = solution.settingsJson;
  lightmap.sceneFingerprint = solution.sceneFingerprint;
  return lightmap;
}

MatrixResult solveMatrix(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                         const MatrixOptions& options, const ProgressObserver& progress) {
  const Stopwatch watch;
  MatrixResult result;
  result.solution = std::make_shared<MatrixSolution>(precomputeMatrix(scene, atlas, patches, options, progress));
  MatrixRelighter relighter(scene, result.solution, options.storage);
  result.timing = relighter.relight({});
  result.lightmap = matrixLightmap(*result.solution, relighter.readRadiance());
  result.seconds = watch.seconds();
  return result;
}

MatrixStorage relightStorage(const MatrixSolution& solution) {
  return solution.dense[0].empty() ? MatrixStorage::Compressed : MatrixStorage::Dense;
}

std::unique_ptr<MatrixRelighter> relighterFor(const scene::Scene& scene, std::shared_ptr<const MatrixSolution> solution,
                                              const LightmapAtlas& atlas, const PatchList& patches,
                                              const std::filesystem::path& path) {
  checkMatrixAtlas(*solution, atlas, patches, path);
  const MatrixStorage storage = relightStorage(*solution);
  return std::make_unique<MatrixRelighter>(scene, std::move(solution), storage);
}


}  // namespace ibrr::lightmap
