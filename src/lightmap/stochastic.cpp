#include "lightmap/stochastic.hpp"

#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "lightmap/gather.hpp"
#include "lightmap/shooting.hpp"
#include "shaders/interface.glsl"
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
    throw OptionError("--shooters " + std::to_string(options.shootersPerIteration) + ": give shooters per iteration in [1, " +
                std::to_string(kMaxShooters) + "]");
  if (options.clusterTexels < 1 || options.clusterTexels > kMaxClusterTexels)
    throw OptionError("--cluster " + std::to_string(options.clusterTexels) + ": give a block side in [1, " +
                std::to_string(kMaxClusterTexels) + "] texels");
  if (options.emitterClusterTexels < 1 || options.emitterClusterTexels > kMaxClusterTexels)
    throw OptionError("--emitter-cluster " + std::to_string(options.emitterClusterTexels) + ": give a block side in [1, " +
                std::to_string(kMaxClusterTexels) + "] texels");
  if (options.hemisphereResolution < 16 || options.hemisphereResolution > 4096)
    throw OptionError("--hemisphere " + std::to_string(options.hemisphereResolution) +
                ": the visibility buffer's side must be in [16, 4096] pixels");
  if (!(options.maxEdgeFraction >= 0.0 && options.maxEdgeFraction <= 1.0))
    throw OptionError("--max-edge " + std::to_string(options.maxEdgeFraction) +
                ": give a fraction of the scene diagonal in [0, 1] (0 = no tessellation)");
  if (!(options.timeBudgetSeconds >= 0.0) || !std::isfinite(options.timeBudgetSeconds))
    throw OptionError("--time-budget " + std::to_string(options.timeBudgetSeconds) + ": give seconds ≥ 0 (0 = none)");
  if (options.iterations == 0 && options.timeBudgetSeconds == 0.0)
    throw OptionError("--iterations 0 with no --time-budget would never stop: give one of them");
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

namespace {

// Per compact texel (the solver's valid texels in order): L_e, and per atlas texel its compact index.
struct CompactTexels {
  std::vector<glm::vec4> emission;
  std::vector<std::uint32_t> compactOf;  // 0xffffffff where the atlas texel is not solved for
};

CompactTexels compactTexels(const scene::Scene& scene, const PatchList& patches,
                            const std::vector<std::uint32_t>& texels) {
  CompactTexels compact{std::vector<glm::vec4>(texels.size()), std::vector<std::uint32_t>(patches.texelCount(), 0xffffffffu)};
  bool anyEmission = false;
  for (std::size_t i = 0; i < texels.size(); ++i) {
    compact.emission[i] = glm::vec4(patches.emission[texels[i]], 0.0f);
    compact.compactOf[texels[i]] = std::uint32_t(i);
    anyEmission = anyEmission || meanRgb(patches.emission[texels[i]]) > 0.0f;
  }
  if (!anyEmission)
    throw Error(scene.sourcePath.string() +
                ": no texel emits light (the lightmap would be black); give the scene an emissive surface or quad "
                "light");
  return compact;
}

// The solver's storage buffers, bound to their points before every iteration (a checkpoint callback may draw
// with other buffers on these points).
struct StochasticBuffers {
  StochasticBuffers(const ShootReceivers& shootReceivers, const CompactTexels& compact,
                    const std::vector<std::uint32_t>& texels, const std::vector<glm::uvec4>& levels,
                    const ShooterClusters& clusters, int shooters)
      : receivers(makeStorageBuffer(shootReceivers.receivers)),
        emission(makeStorageBuffer(compact.emission)),
        axes(makeStorageBuffer(shootReceivers.axes)),
        radiance(makeStorageBuffer(compact.emission)),  // L̃_0 = L_e
        iterate(makeStorageBuffer(compact.emission)),   // L_0 = L_e
        pyramid(makeStorageBuffer(std::vector<float>(levels.back().x + 1, 0.0f))),
        atlasTexels(makeStorageBuffer(texels)),
        compactOf(makeStorageBuffer(compact.compactOf)),
        levels(makeStorageBuffer(levels)),
        random(GLsizeiptr(kMaxShooters * sizeof(float)), nullptr, GL_DYNAMIC_STORAGE_BIT),
        shots(makeStorageBuffer(std::vector<GpuShot>(kMaxShooters))),
        frames(GLsizeiptr(kMaxShooters * sizeof(GpuShotFrame)), nullptr, GL_DYNAMIC_STORAGE_BIT),
        clusterFirst(makeStorageBuffer(clusters.first)),
        clusterTexels(makeStorageBuffer(clusters.texels)),
        memberShots(makeStorageBuffer(std::vector<glm::vec4>(std::size_t(shooters) * std::size_t(clusters.largest())))) {}

  void bind() const {
    const std::pair<GLuint, GLuint> bindings[] = {{IBRR_B_STOCHASTIC_RECEIVERS, receivers.id()},
                                                  {IBRR_B_STOCHASTIC_EMISSION, emission.id()},
                                                  {IBRR_B_STOCHASTIC_AXES, axes.id()},
                                                  {IBRR_B_STOCHASTIC_RADIANCE, radiance.id()},
                                                  {IBRR_B_STOCHASTIC_PYRAMID, pyramid.id()},
                                                  {IBRR_B_STOCHASTIC_ATLAS_TEXEL, atlasTexels.id()},
                                                  {IBRR_B_STOCHASTIC_COMPACT_OF, compactOf.id()},
                                                  {IBRR_B_STOCHASTIC_LEVELS, levels.id()},
                                                  {IBRR_B_STOCHASTIC_RANDOM, random.id()},
                                                  {IBRR_B_STOCHASTIC_SHOTS, shots.id()},
                                                  {IBRR_B_STOCHASTIC_FRAMES, frames.id()},
                                                  {IBRR_B_STOCHASTIC_ITERATE, iterate.id()},
                                                  {IBRR_B_STOCHASTIC_CLUSTER_FIRST, clusterFirst.id()},
                                                  {IBRR_B_STOCHASTIC_CLUSTER_TEXELS, clusterTexels.id()},
                                                  {IBRR_B_STOCHASTIC_MEMBER_SHOTS, memberShots.id()}};
    for (const auto& [binding, buffer] : bindings) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, binding, buffer);
  }

  gpu::Buffer receivers, emission, axes, radiance, iterate, pyramid, atlasTexels, compactOf, levels, random, shots,
      frames, clusterFirst, clusterTexels, memberShots;
};

// The four compute passes of an iteration, with their fixed uniforms set.
struct StochasticPrograms {
  StochasticPrograms(std::size_t texelCount, int shooters, std::size_t levelCount, std::uint32_t maxMembers,
                     float depthEpsilon, bool shootIterate)
      : power(gpu::loadProgram({"lightmap_stochastic_power.comp"})),
        pyramid(gpu::loadProgram({"lightmap_stochastic_pyramid.comp"})),
        select(gpu::loadProgram({"lightmap_stochastic_select.comp"})),
        update(gpu::loadProgram({"lightmap_stochastic_update.comp"})) {
    glProgramUniform1ui(power.id(), IBRR_U_STOCHASTIC_POWER_COUNT, GLuint(texelCount));
    glProgramUniform1ui(select.id(), IBRR_U_STOCHASTIC_SELECT_SHOOTERS, GLuint(shooters));
    glProgramUniform1ui(select.id(), IBRR_U_STOCHASTIC_SELECT_LEVELS, GLuint(levelCount));
    glProgramUniform1ui(select.id(), IBRR_U_STOCHASTIC_SELECT_MAX_MEMBERS, GLuint(maxMembers));
    glProgramUniform1ui(update.id(), IBRR_U_STOCHASTIC_MAX_MEMBERS, GLuint(maxMembers));
    glProgramUniform1ui(update.id(), IBRR_U_STOCHASTIC_COUNT, GLuint(texelCount));
    glProgramUniform1ui(update.id(), IBRR_U_STOCHASTIC_SHOOTERS, GLuint(shooters));
    glProgramUniform1f(update.id(), IBRR_U_STOCHASTIC_DEPTH_EPSILON, depthEpsilon);
    glProgramUniform1f(update.id(), IBRR_U_STOCHASTIC_NEAR_FIELD_SIDES, kNearFieldSides);
    glProgramUniform1i(update.id(), IBRR_U_STOCHASTIC_STORE_ITERATE, shootIterate ? 1 : 0);
  }
  gpu::Program power, pyramid, select, update;
};

// Step 1 of an iteration: the selection pyramid of lum(L_src)·A over `source`, then S descents with stratified
// ξ_s uniform in [s/S, (s + 1)/S): each shot alone is still drawn with P_c (so the estimate stays unbiased), and
// the S of an iteration spread over the power's distribution (the pyramid walk maps ξ monotonically onto the
// atlas, emitters and reflectors in proportion). The shots come back into `shots`.
void selectShots(const StochasticPrograms& programs, const StochasticBuffers& buffers, GLuint source,
                 std::size_t texelCount, const std::vector<glm::uvec4>& levels, std::mt19937_64& random,
                 std::vector<float>& xi, std::vector<GpuShot>& shots) {
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_STOCHASTIC_RADIANCE, source);
  programs.power.use();
  glDispatchCompute(GLuint((texelCount + kGroupSize - 1) / kGroupSize), 1, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  programs.pyramid.use();
  for (std::size_t k = 0; k + 1 < levels.size(); ++k) {
    const glm::uvec4& in = levels[k];
    const glm::uvec4& out = levels[k + 1];
    glProgramUniform3ui(programs.pyramid.id(), IBRR_U_STOCHASTIC_PYRAMID_INPUT, in.x, in.y, in.z);
    glProgramUniform3ui(programs.pyramid.id(), IBRR_U_STOCHASTIC_PYRAMID_OUTPUT, out.x, out.y, out.z);
    glDispatchCompute((out.y + kPyramidGroupSide - 1) / kPyramidGroupSide,
                      (out.z + kPyramidGroupSide - 1) / kPyramidGroupSide, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  }
  const float shooters = float(xi.size());
  for (std::size_t k = 0; k < xi.size(); ++k)
    xi[k] = std::min((float(k) + uniformFloat(random)) / shooters, std::nextafter(1.0f, 0.0f));
  glNamedBufferSubData(buffers.random.id(), 0, GLsizeiptr(xi.size() * sizeof(float)), xi.data());
  programs.select.use();
  glDispatchCompute(1, 1, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
  glGetNamedBufferSubData(buffers.shots.id(), 0, GLsizeiptr(shots.size() * sizeof(GpuShot)), shots.data());
}

// Step 2: one hemisphere per shot, from its cluster's centroid into layer s, and the shots' frames uploaded.
// Returns how many shots left an emitter.
std::uint64_t renderShots(const HemisphereVisibility& visibility, const ShooterClusters& clusters,
                          const std::vector<glm::vec4>& emission, const std::vector<GpuShot>& shots,
                          std::vector<GpuShotFrame>& frames, const gpu::Buffer& frameBuffer) {
  std::uint64_t emitterShots = 0;
  for (std::size_t s = 0; s < shots.size(); ++s) {
    const std::uint32_t c = std::min<std::uint32_t>(shots[s].cluster, std::uint32_t(clusters.size() - 1));
    const glm::vec3& centroid = clusters.centroid[c];
    const glm::vec3& normal = clusters.normal[c];
    visibility.render(centroid, normal, int(s));
    const glm::mat3 rows = glm::transpose(shooterFrame(normal));  // columns of the transpose = its rows
    frames[s] = {glm::vec4(centroid, clusters.area[c]), glm::vec4(rows[0], 0.0f), glm::vec4(rows[1], 0.0f),
                 glm::vec4(rows[2], 0.0f)};
    emitterShots += emission[clusters.texels[clusters.first[c]]] != glm::vec4(0.0f) ? 1 : 0;
  }
  glNamedBufferSubData(frameBuffer.id(), 0, GLsizeiptr(frames.size() * sizeof(GpuShotFrame)), frames.data());
  glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
  return emitterShots;
}

}  // namespace

void checkStochasticScene(const scene::Scene& scene) { checkShootingScene(scene, "stochastic iteration"); }

StochasticResult solveStochastic(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                 const StochasticOptions& options, const StochasticCheckpointCallback& onCheckpoint,
                                 const ProgressObserver& onProgress) {
  validateStochasticOptions(options);
  const Stopwatch solveTime;
  checkStochasticScene(scene);
  const std::vector<std::uint32_t> texels = solverTexels(atlas, patches);
  const std::size_t texelCount = texels.size();
  const int shooters = options.shootersPerIteration;

  gpu::DebugGroup group("stochastic iteration");
  // Shooters are clusters (chartShooter.y): the update pass skips a shot's own cluster.
  const ShooterClusters clusters =
      buildShooterClusters(atlas, patches, texels, options.clusterTexels, options.emitterClusterTexels);
  const ShootReceivers shootReceivers = makeShootReceivers(atlas, patches, texels, clusters.ofTexel);
  const CompactTexels compact = compactTexels(scene, patches, texels);
  const std::vector<glm::uvec4> levels = pyramidLevels(patches.width, patches.height);
  const StochasticBuffers buffers(shootReceivers, compact, texels, levels, clusters, shooters);
  const bool shootIterate = options.shootFrom == StochasticShootFrom::LastIterate;
  const GLuint sourceBuffer = shootIterate ? buffers.iterate.id() : buffers.radiance.id();
  const HemisphereVisibility visibility(scene, atlas, options.maxEdgeFraction, options.hemisphereResolution,
                                        shooters);
  const StochasticPrograms programs(texelCount, shooters, levels.size(), clusters.largest(),
                                    visibility.depthEpsilon(), shootIterate);

  StochasticResult result;
  result.sceneTriangles = atlas.triangleCount();
  result.visibilityTriangles = visibility.triangles();
  result.pyramidLevels = int(levels.size());
  result.clusters = clusters.size();

  std::vector<glm::vec4> readBack;
  std::vector<glm::vec3> radiance(patches.texelCount(), glm::vec3(0.0f));
  const auto checkpoint = [&] {
    const glm::dvec3 mean = readTexelRadiance(buffers.radiance, texels, readBack, radiance);
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
    buffers.bind();
    const std::uint64_t m = result.iterations + 1;

    const Stopwatch selectTime;
    selectShots(programs, buffers, sourceBuffer, texelCount, levels, random, xi, shots);
    result.selectSeconds += selectTime.seconds();
    result.emitterShots += renderShots(visibility, clusters, compact.emission, shots, frames, buffers.frames);

    // 3. Every texel: the transported radiance of the S shots and the running average.
    buffers.bind();
    programs.update.use();
    // n, the iterates in the average: m, or m − W after the warm-up (during it, L̃ = L_m).
    const std::uint64_t averaged = shootIterate ? (m > options.warmupIterations ? m - options.warmupIterations : 1) : m;
    glProgramUniform1f(programs.update.id(), IBRR_U_STOCHASTIC_ITERATION, float(averaged));
    glBindTextureUnit(IBRR_T_STOCHASTIC_HEMISPHERE, visibility.texture());
    glDispatchCompute(GLuint((texelCount + kGroupSize - 1) / kGroupSize), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    result.iterations = m;
    result.shots += std::uint64_t(shooters);
    if (onProgress) onProgress({"stochastic", m, options.iterations, "iterations", {}});
  }
  result.iterateSeconds = iterateTime.seconds();
  gpu::checkGlError("stochastic iteration");
  checkpoint();

  result.lightmap = solvedLightmap(scene, atlas, std::move(radiance), "stochastic", stochasticSettingsJson(options));
  result.seconds = solveTime.seconds();
  return result;
}

}  // namespace ibrr::lightmap
