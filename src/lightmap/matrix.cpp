#include "lightmap/matrix.hpp"

#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "lightmap/form_factors.hpp"
#include "lightmap/gather.hpp"
#include "rays/embree_scene.hpp"
#include "rays/light_set.hpp"
#include "rays/sampler.hpp"
#include "shaders/interface.glsl"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <tbb/blocked_range.h>
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

namespace ibrr::lightmap {
namespace {

constexpr int kGroupSize = 64;    // lightmap_matrix_transfer.comp local_size_x
constexpr int kProductGroup = 8;  // lightmap_matrix_dense.comp and _bc1.comp local_size_x
constexpr int kProductRows = 4;   // rows per invocation there (one BC1 block row)

#ifndef GL_COMPRESSED_RGB_S3TC_DXT1_EXT
#define GL_COMPRESSED_RGB_S3TC_DXT1_EXT 0x83F0
#endif

template <typename T>
gpu::Buffer makeBuffer(std::span<const T> data, GLbitfield flags = 0) {
  return gpu::Buffer(GLsizeiptr(std::max<std::size_t>(data.size(), 1) * sizeof(T)),
                     data.empty() ? nullptr : data.data(), flags);
}
template <typename T>
gpu::Buffer makeBuffer(const std::vector<T>& data, GLbitfield flags = 0) {
  return makeBuffer(std::span<const T>(data), flags);
}

std::vector<glm::vec4> toVec4(std::span<const glm::vec3> v) {
  std::vector<glm::vec4> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = glm::vec4(v[i], 0.0f);
  return out;
}

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

// ---- lights -----------------------------------------------------------------------------------

// The scene without its emissive triangles: what shadow rays to the (movable) lights test.
std::unique_ptr<scene::Scene> staticScene(const scene::Scene& scene) {
  auto result = std::make_unique<scene::Scene>();
  result->materials = scene.materials;
  result->textures = scene.textures;
  std::vector<std::int64_t> newMesh(scene.meshes.size(), -1);
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    const scene::TriangleMesh& mesh = scene.meshes[m];
    scene::TriangleMesh kept = mesh;
    kept.triangles.clear();
    kept.triangleMaterials.clear();
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
      if (scene.materials[mesh.triangleMaterials[t]].isEmissive()) continue;
      kept.triangles.push_back(mesh.triangles[t]);
      kept.triangleMaterials.push_back(mesh.triangleMaterials[t]);
    }
    if (kept.triangles.empty()) continue;
    newMesh[m] = std::int64_t(result->meshes.size());
    result->meshes.push_back(std::move(kept));
  }
  for (const scene::MeshInstance& instance : scene.instances) {
    if (newMesh[instance.mesh] < 0) continue;
    result->instances.push_back({std::uint32_t(newMesh[instance.mesh]), instance.objectToWorld});
  }
  result->cameras = scene.cameras;
  result->finalize();
  return result;
}

bool anyNonEmissiveTriangle(const scene::Scene& scene) {
  for (const scene::MeshInstance& instance : scene.instances)
    for (const std::uint32_t material : scene.meshes[instance.mesh].triangleMaterials)
      if (!scene.materials[material].isEmissive()) return true;
  return false;
}

MatrixDirect resolveDirect(const PatchList& patches, const std::vector<std::uint32_t>& texels, MatrixDirect direct) {
  if (direct != MatrixDirect::Auto) return direct;
  for (const std::uint32_t t : texels)
    if (!glm::any(glm::greaterThan(patches.emission[t], glm::vec3(0.0f)))) return MatrixDirect::Rays;
  return MatrixDirect::Matrix;
}

}  // namespace

// ---- options ------------------------------------------------------------------------------------

void validateMatrixOptions(const MatrixOptions& options) {
  if (options.bounces < 1 || options.bounces > 64)
    throw Error("--bounces " + std::to_string(options.bounces) +
                ": give k in [1, 64] (bounces in the k-bounce matrix)");
  const int h = options.hemicubeResolution;
  if (h < 2 || h % 2 != 0 || h > 1024)
    throw Error("--hemicube " + std::to_string(h) + ": the hemicube resolution must be even and in [2, 1024]");
  if (options.layersPerBatch < 0 || options.layersPerBatch > 2048)
    throw Error("--layers " + std::to_string(options.layersPerBatch) +
                ": hemicubes per batch must be in [1, 2048], or 0 for automatic");
  if (options.lightSamples < 1 || options.lightSamples > 65536)
    throw Error("--light-samples " + std::to_string(options.lightSamples) +
                ": give shadow rays per patch and light in [1, 65536]");
  if (options.maxPatches < 1 || options.maxPatches > 20000)
    throw Error("--max-patches " + std::to_string(options.maxPatches) +
                ": give a patch limit in [1, 20000] (the dense matrix takes 12·n² bytes)");
  if (!(options.exactFraction >= 0.0 && options.exactFraction <= 1.0))
    throw Error("--exact-fraction " + std::to_string(options.exactFraction) +
                ": give the fraction of each row kept exact in [0, 1] (the paper: 0.04)");
  if (!(options.logRange > 0.0f && options.logRange <= 64.0f))
    throw Error("--log-range " + std::to_string(options.logRange) +
                ": give the natural-log range kept below each row's maximum in (0, 64] (e.g. 16)");
}

const char* matrixDirectName(MatrixDirect direct) {
  switch (direct) {
    case MatrixDirect::Auto:
      return "auto";
    case MatrixDirect::Rays:
      return "rays";
    case MatrixDirect::Matrix:
      return "matrix";
  }
  return "?";
}
const char* matrixStorageName(MatrixStorage storage) {
  return storage == MatrixStorage::Dense ? "dense" : "compressed";
}
const char* matrixReorderName(MatrixReorder reorder) {
  switch (reorder) {
    case MatrixReorder::None:
      return "none";
    case MatrixReorder::Rows:
      return "rows";
    case MatrixReorder::RowsColumns:
      return "rows-columns";
  }
  return "?";
}
MatrixDirect parseMatrixDirect(const std::string& name) {
  for (const MatrixDirect d : {MatrixDirect::Auto, MatrixDirect::Rays, MatrixDirect::Matrix})
    if (name == matrixDirectName(d)) return d;
  throw Error("--direct " + name + ": give auto, rays or matrix");
}
MatrixStorage parseMatrixStorage(const std::string& name) {
  for (const MatrixStorage s : {MatrixStorage::Dense, MatrixStorage::Compressed})
    if (name == matrixStorageName(s)) return s;
  throw Error("--storage " + name + ": give dense or compressed");
}
MatrixReorder parseMatrixReorder(const std::string& name) {
  for (const MatrixReorder r : {MatrixReorder::None, MatrixReorder::Rows, MatrixReorder::RowsColumns})
    if (name == matrixReorderName(r)) return r;
  throw Error("--reorder " + name + ": give none, rows or rows-columns");
}

std::string matrixSettingsJson(const MatrixOptions& options, MatrixDirect resolvedDirect) {
  const nlohmann::json json = {{"bounces", options.bounces},
                               {"hemicube", options.hemicubeResolution},
                               {"seed", options.seed},
                               {"direct", matrixDirectName(resolvedDirect)},
                               {"light_samples", options.lightSamples},
                               {"storage", matrixStorageName(options.storage)},
                               {"exact_fraction", options.exactFraction},
                               {"log_range", options.logRange},
                               {"reorder", matrixReorderName(options.reorder)}};
  return json.dump();
}

void checkMatrixScene(const scene::Scene& scene, MatrixDirect direct) {
  if (direct == MatrixDirect::Matrix && (!scene.pointLights.empty() || !scene.spotLights.empty()))
    throw Error(scene.sourcePath.string() +
                ": --direct matrix lights the scene from emissive patches only; its point and spot lights need "
                "--direct rays");
  if (direct == MatrixDirect::Matrix && scene.emitters().empty())
    throw Error(scene.sourcePath.string() + ": --direct matrix needs emissive surfaces");
  if (direct == MatrixDirect::Rays && !anyNonEmissiveTriangle(scene))
    throw Error(scene.sourcePath.string() +
                ": every surface emits, so there is nothing for --direct rays to light; use --direct matrix");
  if (!scene.hasLights())
    throw Error(scene.sourcePath.string() +
                ": the form-factor matrix solver needs a light (an emissive surface, a quad, point or spot light)");
}

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

// ---- lights and the emission vector ------------------------------------------------------------

std::vector<MatrixLight> matrixLights(const scene::Scene& scene) {
  std::vector<MatrixLight> lights;
  std::vector<std::pair<std::uint64_t, std::size_t>> keys;  // (instance, material) → light
  const std::vector<scene::EmissiveTriangle>& emitters = scene.emitters();
  for (std::size_t e = 0; e < emitters.size(); ++e) {
    const scene::EmissiveTriangle& t = emitters[e];
    const std::uint32_t material = scene.meshes[scene.instances[t.instance].mesh].triangleMaterials[t.triangle];
    const std::uint64_t key = (std::uint64_t(t.instance) << 32) | material;
    auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first == key; });
    if (it == keys.end()) {
      keys.emplace_back(key, lights.size());
      MatrixLight light;
      light.name = scene.materials[material].name + " (instance " + std::to_string(t.instance) + ")";
      light.kind = MatrixLight::Kind::Surface;
      lights.push_back(std::move(light));
      it = keys.end() - 1;
    }
    lights[it->second].emitters.push_back(std::uint32_t(e));
  }
  for (std::size_t p = 0; p < scene.pointLights.size(); ++p) {
    MatrixLight light;
    light.name = scene.pointLights[p].name;
    light.kind = MatrixLight::Kind::Point;
    light.index = std::uint32_t(p);
    lights.push_back(std::move(light));
  }
  for (std::size_t p = 0; p < scene.spotLights.size(); ++p) {
    MatrixLight light;
    light.name = scene.spotLights[p].name;
    light.kind = MatrixLight::Kind::Spot;
    light.index = std::uint32_t(p);
    lights.push_back(std::move(light));
  }
  return lights;
}

std::string describeMatrixLights(std::span<const MatrixLight> lights) {
  if (lights.empty()) return "none";
  std::string text;
  for (std::size_t l = 0; l < lights.size(); ++l)
    text += (l ? ", " : "") + std::to_string(l) + ": " + lights[l].name;
  return text;
}

std::vector<glm::vec3> parseLightMoves(std::span<const std::string> moves, std::span<const MatrixLight> lights) {
  if (moves.empty()) return {};
  std::vector<glm::vec3> offsets(lights.size(), glm::vec3(0.0f));
  std::vector<bool> moved(lights.size(), false);
  for (const std::string& move : moves) {
    const std::string usage = "--move-light '" + move + "': give LIGHT:DX,DY,DZ, the light's index and its "
                              "translation in scene units (e.g. 0:50,0,0)";
    const std::size_t colon = move.find(':');
    if (colon == std::string::npos || colon == 0) throw Error(usage);
    std::size_t end = 0;
    long index = -1;
    try {
      index = std::stol(move.substr(0, colon), &end);
    } catch (const std::exception&) {
      throw Error(usage);
    }
    if (end != colon) throw Error(usage);
    glm::vec3 offset(0.0f);
    std::size_t at = colon + 1;
    for (int c = 0; c < 3; ++c) {
      const std::size_t stop = c < 2 ? move.find(',', at) : move.size();
      if (stop == std::string::npos || stop == at) throw Error(usage);
      try {
        offset[c] = std::stof(move.substr(at, stop - at), &end);
      } catch (const std::exception&) {
        throw Error(usage);
      }
      if (end != stop - at || !std::isfinite(offset[c])) throw Error(usage);
      at = stop + 1;
    }
    if (index < 0 || std::size_t(index) >= lights.size())
      throw Error("--move-light " + move + ": no light " + std::to_string(index) + "; the scene's movable lights are " +
                  describeMatrixLights(lights));
    if (moved[std::size_t(index)]) throw Error("--move-light " + move + ": light " + std::to_string(index) +
                                               " is moved twice; give one --move-light per light");
    moved[std::size_t(index)] = true;
    offsets[std::size_t(index)] = offset;
  }
  return offsets;
}

scene::Scene translateLights(const scene::Scene& scene, std::span<const glm::vec3> offsets) {
  const std::vector<MatrixLight> lights = matrixLights(scene);
  if (!offsets.empty() && offsets.size() != lights.size())
    throw Error("translateLights: " + std::to_string(offsets.size()) + " offsets for " + std::to_string(lights.size()) +
                " lights");
  scene::Scene moved = scene;
  for (std::size_t l = 0; l < offsets.size(); ++l) {
    const glm::vec3 offset = offsets[l];
    if (offset == glm::vec3(0.0f)) continue;
    const MatrixLight& light = lights[l];
    if (light.kind == MatrixLight::Kind::Point) {
      moved.pointLights[light.index].position += offset;
      continue;
    }
    if (light.kind == MatrixLight::Kind::Spot) {
      moved.spotLights[light.index].position += offset;
      continue;
    }
    for (const std::uint32_t e : light.emitters) {
      const scene::EmissiveTriangle& emitter = scene.emitters()[e];
      const std::uint32_t instance = emitter.instance;
      const std::uint32_t shared = moved.instances[instance].mesh;
      const bool sharedWithOthers = std::any_of(moved.instances.begin(), moved.instances.end(), [&](const auto& other) {
        return &other != &moved.instances[instance] && other.mesh == shared;
      });
      if (sharedWithOthers) {  // this instance gets its own copy, so the others stay
        moved.meshes.push_back(moved.meshes[shared]);
        moved.instances[instance].mesh = std::uint32_t(moved.meshes.size() - 1);
      }
      // The world translation in the instance's object space (affine: only the linear part acts).
      const glm::vec3 local = glm::inverse(glm::mat3(moved.instances[instance].objectToWorld)) * offset;
      scene::TriangleMesh& mesh = moved.meshes[moved.instances[instance].mesh];
      glm::uvec3& corners = mesh.triangles[emitter.triangle];
      for (int c = 0; c < 3; ++c) {
        const std::uint32_t v = corners[c];
        mesh.positions.push_back(mesh.positions[v] + local);
        if (!mesh.normals.empty()) mesh.normals.push_back(mesh.normals[v]);
        if (!mesh.texcoords.empty()) mesh.texcoords.push_back(mesh.texcoords[v]);
        corners[c] = std::uint32_t(mesh.positions.size() - 1);
      }
    }
  }
  moved.finalize();
  return moved;
}

LightmapAtlas translateAtlasLights(const scene::Scene& scene, const LightmapAtlas& atlas,
                                   std::span<const glm::vec3> offsets) {
  const std::vector<MatrixLight> lights = matrixLights(scene);
  if (!offsets.empty() && offsets.size() != lights.size())
    throw Error("translateAtlasLights: " + std::to_string(offsets.size()) + " offsets for " +
                std::to_string(lights.size()) + " lights");
  if (atlas.triangleCount() != scene.triangleCount())
    throw Error("translateAtlasLights: the atlas has " + std::to_string(atlas.triangleCount()) +
                " triangles, the scene " + std::to_string(scene.triangleCount()));
  // The atlas's first triangle of each instance (buildAtlas: instance-major, mesh order).
  std::vector<std::size_t> firstTriangle(scene.instances.size(), 0);
  for (std::size_t i = 1; i < scene.instances.size(); ++i)
    firstTriangle[i] = firstTriangle[i - 1] + scene.meshes[scene.instances[i - 1].mesh].triangles.size();
  LightmapAtlas moved = atlas;
  for (std::size_t l = 0; l < offsets.size(); ++l) {
    if (lights[l].kind != MatrixLight::Kind::Surface) continue;  // point and spot lights have no triangles
    for (const std::uint32_t e : lights[l].emitters) {
      const scene::EmissiveTriangle& emitter = scene.emitters()[e];
      const std::size_t t = firstTriangle[emitter.instance] + emitter.triangle;
      for (int k = 0; k < 3; ++k) moved.vertices[3 * t + std::size_t(k)].position += offsets[l];
    }
  }
  return moved;
}

namespace {

// D_i = ρ_i/π · E_i per patch (see the header), with shadow rays against the static scene.
std::vector<glm::vec3> directLight(const scene::Scene& scene, const rays::EmbreeScene& shadows,
                                   const MatrixSolution& solution, const std::vector<MatrixLight>& lights,
                                   std::span<const glm::vec3> offsets, int samples, std::uint32_t seed) {
  const std::size_t n = solution.size();
  const std::vector<scene::EmissiveTriangle>& emitters = scene.emitters();
  // Samples per emissive triangle of each surface light, in proportion to area (at least 1).
  std::vector<std::vector<int>> perTriangle(lights.size());
  for (std::size_t l = 0; l < lights.size(); ++l) {
    if (lights[l].kind != MatrixLight::Kind::Surface) continue;
    double area = 0.0;
    for (const std::uint32_t e : lights[l].emitters) area += emitters[e].area;
    for (const std::uint32_t e : lights[l].emitters)
      perTriangle[l].push_back(
          std::max(1, int(std::lround(double(samples) * emitters[e].area / std::max(area, 1e-30)))));
  }
  const float eps = shadows.epsilon();
  constexpr float kInvPi = std::numbers::inv_pi_v<float>;
  std::vector<glm::vec3> d(n, glm::vec3(0.0f));
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 16), [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      const glm::vec3 nrm = solution.normal[i];
      const glm::vec3 origin = solution.position[i] + 4.0f * eps * nrm;
      glm::vec3 irradiance(0.0f);
      const auto visible = [&](const glm::vec3& target) {
        rays::Ray ray;
        ray.origin = origin;
        ray.direction = target - origin;
        ray.tNear = 0.0f;
        ray.tFar = 1.0f - 1e-4f;
        return !shadows.occluded(ray);
      };
      for (std::size_t l = 0; l < lights.size(); ++l) {
        const glm::vec3 offset = l < offsets.size() ? offsets[l] : glm::vec3(0.0f);
        const MatrixLight& light = lights[l];
        if (light.kind == MatrixLight::Kind::Surface) {
          const std::uint32_t stream = rays::hashCombine(rays::hashCombine(seed, std::uint32_t(l)), std::uint32_t(i));
          for (std::size_t k = 0; k < light.emitters.size(); ++k) {
            const scene::EmissiveTriangle& t = emitters[light.emitters[k]];
            const int count = perTriangle[l][k];
            const float weight = t.area / float(count);
            const std::uint32_t triangleStream = rays::hashCombine(stream, std::uint32_t(k));
            for (int s = 0; s < count; ++s) {
              const glm::vec2 u = rays::sobolPair(std::uint32_t(s), triangleStream, 0);
              const float su = std::sqrt(u.x);
              // Uniform on the triangle: (1 − √u₁, √u₁(1 − u₂), √u₁u₂) barycentrics; pdf 1/A.
              const glm::vec3 q = t.v0 + offset + su * (1.0f - u.y) * (t.v1 - t.v0) + su * u.y * (t.v2 - t.v0);
              const glm::vec3 toLight = q - origin;
              const float r2 = glm::dot(toLight, toLight);
              if (!(r2 > 0.0f)) continue;
              const float cosReceiver = glm::dot(nrm, toLight);
              const float cosLight = -glm::dot(t.normal, toLight);
              if (cosReceiver <= 0.0f || cosLight <= 0.0f) continue;
              if (!visible(q)) continue;
              irradiance += t.radiance * (weight * cosReceiver * cosLight / (r2 * r2));
            }
          }
        } else {
          glm::vec3 position, intensity;
          float profile = 1.0f;
          if (light.kind == MatrixLight::Kind::Point) {
            position = scene.pointLights[light.index].position + offset;
            intensity = scene.pointLights[light.index].intensity;
          } else {
            const scene::SpotLight& spot = scene.spotLights[light.index];
            position = spot.position + offset;
            intensity = spot.intensity;
            const glm::vec3 away = glm::normalize(origin - position);
            profile = rays::spotProfile(spot, glm::dot(spot.direction, away));
          }
          const glm::vec3 toLight = position - origin;
          const float r2 = glm::dot(toLight, toLight);
          const float cosReceiver = glm::dot(nrm, toLight);
          if (profile <= 0.0f || cosReceiver <= 0.0f || !(r2 > 0.0f) || !visible(position)) continue;
          irradiance += intensity * (profile * cosReceiver / (r2 * std::sqrt(r2)));
        }
      }
      d[i] = solution.albedo[i] * irradiance * kInvPi;
    }
  });
  return d;
}

}  // namespace

// ---- the GPU relighter ------------------------------------------------------------------------

struct MatrixRelighter::Impl {
  const scene::Scene& scene;
  std::shared_ptr<const MatrixSolution> solution;
  MatrixStorage storage;
  std::vector<MatrixLight> lights;
  std::unique_ptr<scene::Scene> shadowScene;
  std::unique_ptr<rays::EmbreeScene> shadows;
  int lightSamples = 256;
  std::uint32_t seed = 1;
  bool hardwareBc1 = false;
  gpu::Program product, transfer;
  std::array<gpu::Buffer, 3> dense;
  gpu::Texture bc1Texture;
  gpu::Buffer blocks, rowOrder, columnOrder, rowScale, exactStart, exactColumn, exactValue;
  gpu::Buffer input, output, accumulate, patchTexel, emission;
  gpu::Texture atlas;
  std::vector<glm::vec3> lastEmission;

  Impl(const scene::Scene& s, std::shared_ptr<const MatrixSolution> m, MatrixStorage st)
      : scene(s), solution(std::move(m)), storage(st) {}

  void bindProduct(const gpu::Buffer& in, const gpu::Buffer& out) const {
    if (storage == MatrixStorage::Dense) {
      for (GLuint c = 0; c < 3; ++c) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_DENSE + c, dense[c].id());
    } else {
      if (hardwareBc1)
        glBindTextureUnit(IBRR_T_MATRIX_BLOCKS, bc1Texture.id());
      else
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_BLOCKS, blocks.id());
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_ROW_ORDER, rowOrder.id());
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_COLUMN_ORDER, columnOrder.id());
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_ROW_SCALE, rowScale.id());
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_EXACT_START, exactStart.id());
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_EXACT_COLUMN, exactColumn.id());
      glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_EXACT_VALUE, exactValue.id());
    }
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_INPUT, in.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_OUTPUT, out.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_ACCUMULATE, accumulate.id());
  }

  // acc = Σ_{h=1..repeats} N^h (input): `repeats` chained dispatches, ping-ponging input/output.
  // Overwrites `input` when repeats > 1 (the chain's intermediate vectors).
  void runProducts(int repeats) {
    const GLuint n = GLuint(solution->size());
    product.use();
    glProgramUniform1ui(product.id(), IBRR_U_MATRIX_COUNT, n);
    for (int h = 0; h < repeats; ++h) {
      const bool even = h % 2 == 0;
      bindProduct(even ? input : output, even ? output : input);
      glProgramUniform1ui(product.id(), IBRR_U_MATRIX_ACCUMULATE, h == 0 ? 0u : 1u);
      glDispatchCompute((n + kProductGroup * kProductRows - 1) / (kProductGroup * kProductRows), 1, 1);
      glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    }
  }

  void runTransfer(const gpu::Buffer& e) {
    transfer.use();
    const GLuint n = GLuint(solution->size());
    glProgramUniform1ui(transfer.id(), IBRR_U_MATRIX_COUNT, n);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_INPUT, e.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_ACCUMULATE, accumulate.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_PATCH_TEXEL, patchTexel.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_MATRIX_EMISSION, emission.id());
    glBindImageTexture(IBRR_I_MATRIX_ATLAS, atlas.id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
    glDispatchCompute((n + kGroupSize - 1) / kGroupSize, 1, 1);
    glMemoryBarrier(GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT);
  }
};

MatrixRelighter::MatrixRelighter(const scene::Scene& scene, std::shared_ptr<const MatrixSolution> solution,
                                 MatrixStorage storage, Bc1Decoder bc1)
    : m_impl(std::make_unique<Impl>(scene, std::move(solution), storage)) {
  Impl& m = *m_impl;
  const MatrixSolution& s = *m.solution;
  if (s.sceneFingerprint != scene.fingerprint())
    throw Error(scene.sourcePath.string() +
                ": the form-factor matrix was computed for another scene; precompute it again");
  const std::size_t n = s.size();
  if (n == 0) throw Error("the form-factor matrix has no patches");
  m.lights = matrixLights(scene);
  if (const auto settings = nlohmann::json::parse(s.settingsJson, nullptr, false); settings.is_object()) {
    m.lightSamples = settings.value("light_samples", 256);
    m.seed = settings.value("seed", 1u);
  }
  if (s.direct == MatrixDirect::Rays) {
    m.shadowScene = staticScene(scene);
    m.shadows = std::make_unique<rays::EmbreeScene>(*m.shadowScene);
  }
  gpu::DebugGroup group("form-factor matrix upload");
  if (storage == MatrixStorage::Dense) {
    if (s.dense[0].size() != n * n) throw Error("the form-factor matrix has no dense form: precompute it again");
    GLint64 maxBlock = 0;
    glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &maxBlock);
    if (GLint64(n * n * sizeof(float)) > maxBlock)
      throw Error("the dense form-factor matrix (" + std::to_string(n) + " patches, " +
                  std::to_string(n * n * 4 / 1000000) +
                  " MB per channel) exceeds the GL's shader storage block size (" + std::to_string(maxBlock / 1000000) +
                  " MB): use --storage compressed or a coarser atlas");
    for (std::size_t c = 0; c < 3; ++c) m.dense[c] = makeBuffer(s.dense[c]);
    m.product = gpu::loadProgram({"lightmap_matrix_dense.comp"});
  } else {
    if (!s.compressed)
      throw Error("the form-factor matrix has no compressed form: precompute with --storage compressed");
    const CompressedMatrix& c = *s.compressed;
    gpu::ContextInfo gpuInfo;
    gpuInfo.renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    const bool wanted = bc1 == Bc1Decoder::Hardware || (bc1 == Bc1Decoder::Automatic && !gpuInfo.isSoftware());
    m.hardwareBc1 = wanted && gpu::hasGlExtension("GL_EXT_texture_compression_s3tc");
    if (m.hardwareBc1) {
      m.bc1Texture = gpu::Texture(GL_COMPRESSED_RGB_S3TC_DXT1_EXT, c.paddedSize, c.paddedSize);
      glCompressedTextureSubImage2D(m.bc1Texture.id(), 0, 0, 0, c.paddedSize, c.paddedSize,
                                    GL_COMPRESSED_RGB_S3TC_DXT1_EXT, GLsizei(c.blocks.size() * sizeof(std::uint64_t)),
                                    c.blocks.data());
      m.product = gpu::loadProgram({"lightmap_matrix_bc1.comp"}, {"HARDWARE_BC1 1"});
    } else {
      m.blocks = makeBuffer(c.blocks);
      m.product = gpu::loadProgram({"lightmap_matrix_bc1.comp"});
    }
    m.rowOrder = makeBuffer(c.rowOrder);
    m.columnOrder = makeBuffer(c.columnOrder);
    m.rowScale = makeBuffer(toVec4(c.rowScale));
    m.exactStart = makeBuffer(c.exactStart);
    m.exactColumn = makeBuffer(c.exactColumn);
    m.exactValue = makeBuffer(toVec4(c.exactValue));
    glProgramUniform1ui(m.product.id(), IBRR_U_MATRIX_PADDED, GLuint(c.paddedSize));
    glProgramUniform1f(m.product.id(), IBRR_U_MATRIX_LOG_RANGE, c.logRange);
  }
  m.transfer = gpu::loadProgram({"lightmap_matrix_transfer.comp"});
  glProgramUniform1ui(m.transfer.id(), IBRR_U_MATRIX_WIDTH, GLuint(s.width));
  glProgramUniform1f(m.transfer.id(), IBRR_U_MATRIX_DIRECT_WEIGHT, s.direct == MatrixDirect::Rays ? 1.0f : 0.0f);
  const std::size_t vectorBytes = n * sizeof(glm::vec4);
  m.input = gpu::Buffer(GLsizeiptr(vectorBytes), nullptr, GL_DYNAMIC_STORAGE_BIT);
  m.output = gpu::Buffer(GLsizeiptr(vectorBytes), nullptr, GL_DYNAMIC_STORAGE_BIT);
  m.accumulate = gpu::Buffer(GLsizeiptr(vectorBytes), nullptr, GL_DYNAMIC_STORAGE_BIT);
  m.patchTexel = makeBuffer(s.texels);
  m.emission = makeBuffer(toVec4(s.emission));
  m.atlas = gpu::Texture(GL_RGBA32F, s.width, s.height);
  const glm::vec4 zero(0.0f);
  glClearTexImage(m.atlas.id(), 0, GL_RGBA, GL_FLOAT, &zero);
  gpu::checkGlError("form-factor matrix upload");
}

MatrixRelighter::~MatrixRelighter() = default;

const std::vector<MatrixLight>& MatrixRelighter::lights() const { return m_impl->lights; }
bool MatrixRelighter::hardwareBc1() const { return m_impl->hardwareBc1; }
std::uint32_t MatrixRelighter::atlasTexture() const { return m_impl->atlas.id(); }

std::vector<glm::vec3> MatrixRelighter::emissionVector(std::span<const glm::vec3> lightOffsets) const {
  const Impl& m = *m_impl;
  const MatrixSolution& s = *m.solution;
  if (!lightOffsets.empty() && lightOffsets.size() != m.lights.size())
    throw Error("relight: " + std::to_string(lightOffsets.size()) + " light offsets for " +
                std::to_string(m.lights.size()) + " lights");
  if (s.direct == MatrixDirect::Matrix) {
    for (const glm::vec3& o : lightOffsets)
      if (o != glm::vec3(0.0f))
        throw Error(
            "relight: the matrix was computed with --direct matrix, where emitters are patches and cannot "
            "move; precompute with --direct rays to move lights");
    return s.emission;
  }
  return directLight(m.scene, *m.shadows, s, m.lights, lightOffsets, m.lightSamples, m.seed);
}

RelightTiming MatrixRelighter::relight(std::span<const glm::vec3> lightOffsets) {
  const Stopwatch watch;
  const std::vector<glm::vec3> e = emissionVector(lightOffsets);
  const double direct = watch.milliseconds();
  RelightTiming timing = relightWith(e);
  timing.directMs += direct;
  return timing;
}

RelightTiming MatrixRelighter::relightWith(std::span<const glm::vec3> e) {
  Impl& m = *m_impl;
  const std::size_t n = m.solution->size();
  if (e.size() != n)
    throw Error("relight: the emission vector has " + std::to_string(e.size()) + " entries, not " + std::to_string(n));
  gpu::DebugGroup group("form-factor matrix relight");
  RelightTiming timing;
  Stopwatch watch;
  const std::vector<glm::vec4> e4 = toVec4(e);
  glNamedBufferSubData(m.input.id(), 0, GLsizeiptr(n * sizeof(glm::vec4)), e4.data());
  glFinish();
  timing.directMs = watch.milliseconds();  // the upload, to glFinish
  watch.restart();
  m.runProducts(1);
  glFinish();
  timing.productMs = watch.milliseconds();
  watch.restart();
  m.runTransfer(m.input);
  glFinish();
  timing.transferMs = watch.milliseconds();
  gpu::checkGlError("form-factor matrix relight");
  return timing;
}

std::vector<glm::vec3> MatrixRelighter::readRadiance() const {
  const MatrixSolution& s = *m_impl->solution;
  const std::vector<glm::vec4> texels = gpu::readTexture(m_impl->atlas.id(), s.width, s.height);
  std::vector<glm::vec3> radiance(texels.size());
  for (std::size_t t = 0; t < texels.size(); ++t) radiance[t] = glm::vec3(texels[t]);
  return radiance;
}

std::vector<glm::vec3> MatrixRelighter::multiply(std::span<const glm::vec3> x, int repeats) {
  Impl& m = *m_impl;
  const std::size_t n = m.solution->size();
  if (x.size() != n || repeats < 1) throw Error("multiply: a vector of one entry per patch and repeats ≥ 1");
  const std::vector<glm::vec4> x4 = toVec4(x);
  glNamedBufferSubData(m.input.id(), 0, GLsizeiptr(n * sizeof(glm::vec4)), x4.data());
  m.runProducts(repeats);
  std::vector<glm::vec4> y(n);
  glGetNamedBufferSubData(m.accumulate.id(), 0, GLsizeiptr(n * sizeof(glm::vec4)), y.data());
  gpu::checkGlError("form-factor matrix product");
  std::vector<glm::vec3> result(n);
  for (std::size_t i = 0; i < n; ++i) result[i] = glm::vec3(y[i]);
  return result;
}

double MatrixRelighter::timeProducts(int repeats, int trials) {
  Impl& m = *m_impl;
  const std::size_t n = m.solution->size();
  const std::vector<glm::vec4> ones(n, glm::vec4(1.0f, 1.0f, 1.0f, 0.0f));
  double best = 1e30;
  for (int trial = 0; trial < trials; ++trial) {
    glNamedBufferSubData(m.input.id(), 0, GLsizeiptr(n * sizeof(glm::vec4)), ones.data());
    glFinish();
    const Stopwatch watch;
    m.runProducts(repeats);
    glFinish();
    best = std::min(best, watch.milliseconds());
  }
  return best;
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
