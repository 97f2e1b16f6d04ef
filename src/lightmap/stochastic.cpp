#include "lightmap/stochastic.hpp"

#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/shooting.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>

namespace ibrr::lightmap {
namespace {

constexpr int kGroupSize = 64;         // local_size_x of the power, select and update passes
constexpr int kPyramidGroupSide = 8;   // lightmap_stochastic_pyramid.comp local size 8 × 8
constexpr int kMaxShooters = 64;       // one select workgroup
constexpr int kMaxClusterTexels = 16;  // B: up to 256 texels per cluster

// SSBO bindings of shaders/lightmap_stochastic_*.comp.
constexpr GLuint kReceiversBinding = 0;
constexpr GLuint kEmissionBinding = 1;
constexpr GLuint kAxesBinding = 2;
constexpr GLuint kRadianceBinding = 3;
constexpr GLuint kPyramidBinding = 4;
constexpr GLuint kAtlasTexelBinding = 5;
constexpr GLuint kCompactOfBinding = 6;
constexpr GLuint kLevelsBinding = 7;
constexpr GLuint kRandomBinding = 8;
constexpr GLuint kShotsBinding = 9;
constexpr GLuint kFramesBinding = 10;
constexpr GLuint kIterateBinding = 11;
constexpr GLuint kClusterFirstBinding = 12;
constexpr GLuint kClusterTexelsBinding = 13;
constexpr GLuint kMemberShotsBinding = 14;

// What the select pass writes per shooter (std430, 32 bytes).
struct GpuShot {
  std::uint32_t cluster = 0;
  float probability = 0.0f;  // P_c
  std::uint32_t first = 0, count = 0;
  glm::vec4 radiance{0.0f};  // L_shot,c
};

// The frame the update pass measures directions in: the rows of shooterFrame() (std430, 64 bytes).
struct GpuShotFrame {
  glm::vec4 position;  // the cluster's centroid, its area A_c
  glm::vec4 tangent;
  glm::vec4 bitangent;
  glm::vec4 normal;
};

// Level k of the selection pyramid in one buffer: offset, width, height (ceil halving to 1 × 1).
std::vector<glm::uvec4> pyramidLevels(int width, int height) {
  std::vector<glm::uvec4> levels;
  std::uint32_t offset = 0, w = std::uint32_t(width), h = std::uint32_t(height);
  while (true) {
    levels.emplace_back(offset, w, h, 0u);
    offset += w * h;
    if (w == 1 && h == 1) break;
    w = (w + 1) / 2;
    h = (h + 1) / 2;
  }
  return levels;
}

// ξ in [0, 1) from the top 24 bits of a 64-bit draw: exactly representable as a float, and the
// same on every standard library (std::uniform_real_distribution is not).
float uniformFloat(std::mt19937_64& random) { return float(random() >> 40) * 0x1.0p-24f; }

}  // namespace

void validateStochasticOptions(const StochasticOptions& options) {
  if (options.shootersPerIteration < 1 || options.shootersPerIteration > kMaxShooters)
    throw Error("--shooters " + std::to_string(options.shootersPerIteration) + ": give shooters per iteration in [1, " +
                std::to_string(kMaxShooters) + "]");
  if (options.clusterTexels < 1 || options.clusterTexels > kMaxClusterTexels)
    throw Error("--cluster " + std::to_string(options.clusterTexels) + ": give a block side in [1, " +
                std::to_string(kMaxClusterTexels) + "] texels");
  if (options.emitterClusterTexels < 1 || options.emitterClusterTexels > kMaxClusterTexels)
    throw Error("--emitter-cluster " + std::to_string(options.emitterClusterTexels) + ": give a block side in [1, " +
                std::to_string(kMaxClusterTexels) + "] texels");
  if (options.hemisphereResolution < 16 || options.hemisphereResolution > 4096)
    throw Error("--hemisphere " + std::to_string(options.hemisphereResolution) +
                ": the visibility buffer's side must be in [16, 4096] pixels");
  if (!(options.maxEdgeFraction >= 0.0 && options.maxEdgeFraction <= 1.0))
    throw Error("--max-edge " + std::to_string(options.maxEdgeFraction) +
                ": give a fraction of the scene diagonal in [0, 1] (0 = no tessellation)");
  if (!(options.timeBudgetSeconds >= 0.0) || !std::isfinite(options.timeBudgetSeconds))
    throw Error("--time-budget " + std::to_string(options.timeBudgetSeconds) + ": give seconds ≥ 0 (0 = none)");
  if (options.iterations == 0 && options.timeBudgetSeconds == 0.0)
    throw Error("--iterations 0 with no --time-budget would never stop: give one of them");
}

std::string stochasticSettingsJson(const StochasticOptions& options) {
  const nlohmann::json json = {{"shooters", options.shootersPerIteration},
                               {"cluster", options.clusterTexels},
                               {"emitter_cluster", options.emitterClusterTexels},
                               {"hemisphere", options.hemisphereResolution},
                               {"max_edge", options.maxEdgeFraction},
                               {"iterations", options.iterations},
                               {"time_budget_s", options.timeBudgetSeconds},
                               {"seed", options.seed},
                               {"shoot", options.shootFrom == StochasticShootFrom::LastIterate ? "iterate" : "average"},
                               {"warmup", options.warmupIterations}};
  return json.dump();
}

StochasticResult solveStochastic(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                 const StochasticOptions& options, const StochasticCheckpointCallback& onCheckpoint,
                                 const StochasticProgressCallback& onProgress) {
  validateStochasticOptions(options);
  const Stopwatch solveTime;
  checkShootingScene(scene, "stochastic iteration");
  const std::vector<std::uint32_t> texels = solverTexels(atlas, patches);
  const std::size_t texelCount = texels.size();
  const int shooters = options.shootersPerIteration;

  gpu::DebugGroup group("stochastic iteration");
  // Shooters are clusters (chartShooter.y): the update pass skips a shot's own cluster.
  const ShooterClusters clusters =
      buildShooterClusters(atlas, patches, texels, options.clusterTexels, options.emitterClusterTexels);
  const std::uint32_t maxMembers = clusters.largest();
  const ShootReceivers shootReceivers = makeShootReceivers(atlas, patches, texels, clusters.ofTexel);
  std::vector<glm::vec4> emission(texelCount);
  std::vector<std::uint32_t> compactOf(patches.texelCount(), 0xffffffffu);
  bool anyEmission = false;
  for (std::size_t i = 0; i < texelCount; ++i) {
    emission[i] = glm::vec4(patches.emission[texels[i]], 0.0f);
    compactOf[texels[i]] = std::uint32_t(i);
    anyEmission = anyEmission || meanRgb(patches.emission[texels[i]]) > 0.0f;
  }
  if (!anyEmission)
    throw Error(scene.sourcePath.string() +
                ": no texel emits light (the lightmap would be black); give the scene an emissive surface or quad "
                "light");
  const std::vector<glm::uvec4> levels = pyramidLevels(patches.width, patches.height);
  const std::uint32_t pyramidSize = levels.back().x + 1;

  const gpu::Buffer receiverBuffer = makeStorageBuffer(shootReceivers.receivers);
  const gpu::Buffer emissionBuffer = makeStorageBuffer(emission);
  const gpu::Buffer axesBuffer = makeStorageBuffer(shootReceivers.axes);
  const gpu::Buffer radianceBuffer = makeStorageBuffer(emission);  // L̃_0 = L_e
  const gpu::Buffer iterateBuffer = makeStorageBuffer(emission);   // L_0 = L_e
  const bool shootIterate = options.shootFrom == StochasticShootFrom::LastIterate;
  const GLuint sourceBuffer = shootIterate ? iterateBuffer.id() : radianceBuffer.id();
  const gpu::Buffer pyramidBuffer = makeStorageBuffer(std::vector<float>(pyramidSize, 0.0f));
  const gpu::Buffer atlasTexelBuffer = makeStorageBuffer(texels);
  const gpu::Buffer compactOfBuffer = makeStorageBuffer(compactOf);
  const gpu::Buffer levelsBuffer = makeStorageBuffer(levels);
  const gpu::Buffer randomBuffer(GLsizeiptr(kMaxShooters * sizeof(float)), nullptr, GL_DYNAMIC_STORAGE_BIT);
  const gpu::Buffer shotBuffer = makeStorageBuffer(std::vector<GpuShot>(kMaxShooters));
  const gpu::Buffer frameBuffer(GLsizeiptr(kMaxShooters * sizeof(GpuShotFrame)), nullptr, GL_DYNAMIC_STORAGE_BIT);
  const gpu::Buffer clusterFirstBuffer = makeStorageBuffer(clusters.first);
  const gpu::Buffer clusterTexelBuffer = makeStorageBuffer(clusters.texels);
  const gpu::Buffer memberShotBuffer =
      makeStorageBuffer(std::vector<glm::vec4>(std::size_t(shooters) * std::size_t(maxMembers)));
  // Bound before every iteration: a checkpoint callback may draw with other buffers on these points.
  const auto bindBuffers = [&] {
    const std::pair<GLuint, GLuint> bindings[] = {
        {kReceiversBinding, receiverBuffer.id()},   {kEmissionBinding, emissionBuffer.id()},
        {kAxesBinding, axesBuffer.id()},            {kRadianceBinding, radianceBuffer.id()},
        {kPyramidBinding, pyramidBuffer.id()},      {kAtlasTexelBinding, atlasTexelBuffer.id()},
        {kCompactOfBinding, compactOfBuffer.id()},  {kLevelsBinding, levelsBuffer.id()},
        {kRandomBinding, randomBuffer.id()},        {kShotsBinding, shotBuffer.id()},
        {kFramesBinding, frameBuffer.id()},         {kIterateBinding, iterateBuffer.id()},
        {kClusterFirstBinding, clusterFirstBuffer.id()}, {kClusterTexelsBinding, clusterTexelBuffer.id()},
        {kMemberShotsBinding, memberShotBuffer.id()}};
    for (const auto& [binding, buffer] : bindings) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, binding, buffer);
  };

  const HemisphereVisibility visibility(scene, atlas, options.maxEdgeFraction, options.hemisphereResolution,
                                        shooters);
  const gpu::Program powerProgram = gpu::loadProgram({"lightmap_stochastic_power.comp"});
  const gpu::Program pyramidProgram = gpu::loadProgram({"lightmap_stochastic_pyramid.comp"});
  const gpu::Program selectProgram = gpu::loadProgram({"lightmap_stochastic_select.comp"});
  const gpu::Program updateProgram = gpu::loadProgram({"lightmap_stochastic_update.comp"});
  glProgramUniform1ui(powerProgram.id(), 0, GLuint(texelCount));
  glProgramUniform1ui(selectProgram.id(), 0, GLuint(shooters));
  glProgramUniform1ui(selectProgram.id(), 1, GLuint(levels.size()));
  glProgramUniform1ui(selectProgram.id(), 2, GLuint(maxMembers));
  glProgramUniform1ui(updateProgram.id(), 6, GLuint(maxMembers));
  glProgramUniform1ui(updateProgram.id(), 0, GLuint(texelCount));
  glProgramUniform1ui(updateProgram.id(), 1, GLuint(shooters));
  glProgramUniform1f(updateProgram.id(), 3, visibility.depthEpsilon());
  glProgramUniform1f(updateProgram.id(), 4, kNearFieldSides);
  glProgramUniform1i(updateProgram.id(), 5, shootIterate ? 1 : 0);

  StochasticResult result;
  result.sceneTriangles = atlas.triangleCount();
  result.visibilityTriangles = visibility.triangles();
  result.pyramidLevels = int(levels.size());
  result.clusters = clusters.size();

  std::vector<glm::vec4> readBack;
  std::vector<glm::vec3> radiance(patches.texelCount(), glm::vec3(0.0f));
  const auto checkpoint = [&] {
    const glm::dvec3 mean = readTexelRadiance(radianceBuffer, texels, readBack, radiance);
    StochasticCheckpoint stats;
    stats.iterations = result.iterations;
    stats.seconds = solveTime.seconds();
    stats.meanRadiance = mean;
    result.checkpoints.push_back(stats);
    if (onCheckpoint) onCheckpoint(stats, radiance);
  };

  std::mt19937_64 random(options.seed);
  std::vector<float> xi(std::size_t(shooters), 0.0f);
  std::vector<GpuShot> shots(static_cast<std::size_t>(shooters));
  std::vector<GpuShotFrame> frames(static_cast<std::size_t>(shooters));
  const Stopwatch iterateTime;
  while (true) {
    throwIfInterrupted();
    if (options.iterations > 0 && result.iterations >= options.iterations) {
      result.stopReason = "iterations";
      break;
    }
    if (options.timeBudgetSeconds > 0.0 && solveTime.seconds() >= options.timeBudgetSeconds) {
      result.stopReason = "time";
      break;
    }
    if (options.checkpointIterations > 0 && result.iterations > 0 &&
        result.iterations % options.checkpointIterations == 0)
      checkpoint();
    bindBuffers();
    const std::uint64_t m = result.iterations + 1;

    // 1. The selection pyramid of lum(L_src) A, then S descents; the shots come back.
    const Stopwatch selectTime;
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kRadianceBinding, sourceBuffer);
    powerProgram.use();
    glDispatchCompute(GLuint((texelCount + kGroupSize - 1) / kGroupSize), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    pyramidProgram.use();
    for (std::size_t k = 0; k + 1 < levels.size(); ++k) {
      const glm::uvec4& in = levels[k];
      const glm::uvec4& out = levels[k + 1];
      glProgramUniform3ui(pyramidProgram.id(), 0, in.x, in.y, in.z);
      glProgramUniform3ui(pyramidProgram.id(), 1, out.x, out.y, out.z);
      glDispatchCompute((out.y + kPyramidGroupSide - 1) / kPyramidGroupSide,
                        (out.z + kPyramidGroupSide - 1) / kPyramidGroupSide, 1);
      glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    }
    // Stratified: ξ_s uniform in [s/S, (s + 1)/S). Each shot alone is still drawn with P_c (so the
    // estimate stays unbiased), and the S of an iteration spread over the power's distribution
    // (the pyramid walk maps ξ monotonically onto the atlas, emitters and reflectors in proportion).
    for (std::size_t k = 0; k < xi.size(); ++k)
      xi[k] = std::min((float(k) + uniformFloat(random)) / float(shooters), std::nextafter(1.0f, 0.0f));
    glNamedBufferSubData(randomBuffer.id(), 0, GLsizeiptr(xi.size() * sizeof(float)), xi.data());
    selectProgram.use();
    glDispatchCompute(1, 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
    glGetNamedBufferSubData(shotBuffer.id(), 0, GLsizeiptr(shots.size() * sizeof(GpuShot)), shots.data());
    result.selectSeconds += selectTime.seconds();

    // 2. One hemisphere per shot, from its cluster's centroid into layer s.
    for (int s = 0; s < shooters; ++s) {
      const std::uint32_t c = std::min<std::uint32_t>(shots[std::size_t(s)].cluster, std::uint32_t(clusters.size() - 1));
      const glm::vec3& centroid = clusters.centroid[c];
      const glm::vec3& normal = clusters.normal[c];
      visibility.render(centroid, normal, s);
      const glm::mat3 rows = glm::transpose(shooterFrame(normal));  // columns of the transpose = its rows
      frames[std::size_t(s)] = {glm::vec4(centroid, clusters.area[c]), glm::vec4(rows[0], 0.0f),
                                glm::vec4(rows[1], 0.0f), glm::vec4(rows[2], 0.0f)};
      result.emitterShots += emission[clusters.texels[clusters.first[c]]] != glm::vec4(0.0f) ? 1 : 0;
    }
    glNamedBufferSubData(frameBuffer.id(), 0, GLsizeiptr(frames.size() * sizeof(GpuShotFrame)), frames.data());
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);

    // 3. Every texel: the transported radiance of the S shots and the running average.
    bindBuffers();
    updateProgram.use();
    // n, the iterates in the average: m, or m − W after the warm-up (during it, L̃ = L_m).
    const std::uint64_t averaged = shootIterate ? (m > options.warmupIterations ? m - options.warmupIterations : 1) : m;
    glProgramUniform1f(updateProgram.id(), 2, float(averaged));
    glBindTextureUnit(0, visibility.texture());
    glDispatchCompute(GLuint((texelCount + kGroupSize - 1) / kGroupSize), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    result.iterations = m;
    result.shots += std::uint64_t(shooters);
    if (onProgress) onProgress(m);
  }
  result.iterateSeconds = iterateTime.seconds();
  gpu::checkGlError("stochastic iteration");
  checkpoint();

  result.lightmap = solvedLightmap(scene, atlas, std::move(radiance), "stochastic", stochasticSettingsJson(options));
  result.seconds = solveTime.seconds();
  return result;
}

}  // namespace ibrr::lightmap
