// The form-factor matrix's GPU relighter (lightmap/matrix.hpp, MatrixRelighter): the emission vector, one
// matrix-vector product per relight (dense or BC1-compressed) and the transfer into the radiance atlas.
#include "lightmap/matrix.hpp"

#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "lightmap/matrix_internal.hpp"
#include "rays/embree_scene.hpp"
#include "shaders/interface.glsl"
#include "util/error.hpp"
#include "util/stopwatch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

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

}  // namespace

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


}  // namespace ibrr::lightmap
