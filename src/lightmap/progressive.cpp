#include "lightmap/progressive.hpp"

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
#include <cstdio>
#include <cmath>
#include <numbers>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

namespace ibrr::lightmap {
namespace {

constexpr int kSelectGroupSize = 256;  // lightmap_shoot_select.comp local_size_x
constexpr int kUpdateGroupSize = 64;   // lightmap_shoot_update.comp local_size_x

// What the selection writes for the CPU (std430, 16 bytes).
struct GpuChoice {
  float maxPower = 0.0f;
  std::uint32_t cluster = 0;
  float totalPower = 0.0f;
  float unused = 0.0f;
};

}  // namespace

void validateProgressiveOptions(const ProgressiveOptions& options) {
  if (options.clusterTexels < 1 || options.clusterTexels > 64)
    throw OptionError("--cluster " + std::to_string(options.clusterTexels) + ": give a block side in [1, 64] texels");
  if (options.emitterClusterTexels < 1 || options.emitterClusterTexels > 64)
    throw OptionError("--emitter-cluster " + std::to_string(options.emitterClusterTexels) +
                ": give a block side in [1, 64] texels");
  if (options.hemisphereResolution < 16 || options.hemisphereResolution > 4096)
    throw OptionError("--hemisphere " + std::to_string(options.hemisphereResolution) +
                ": the visibility buffer's side must be in [16, 4096] pixels");
  if (!(options.maxEdgeFraction >= 0.0 && options.maxEdgeFraction <= 1.0))
    throw OptionError("--max-edge " + std::to_string(options.maxEdgeFraction) +
                ": give a fraction of the scene diagonal in [0, 1] (0 = no tessellation)");
  if (!(options.residualFraction >= 0.0 && options.residualFraction < 1.0))
    throw OptionError("--residual " + std::to_string(options.residualFraction) +
                ": give a fraction of the emitted power in [0, 1) (e.g. 0.01; 0 = off)");
  if (!(options.timeBudgetSeconds >= 0.0) || !std::isfinite(options.timeBudgetSeconds))
    throw OptionError("--time-budget " + std::to_string(options.timeBudgetSeconds) + ": give seconds ≥ 0 (0 = none)");
  if (options.adaptive.depth > 0) validateQuadtreeOptions(options.adaptive);
  if (options.splitEveryShots < 1) throw OptionError("--split-every 0: give a number of shots ≥ 1");
  if (options.residualFraction == 0.0 && options.maxShots == 0 && options.timeBudgetSeconds == 0.0)
    throw OptionError("--residual 0 with no --shots and no --time-budget would never stop: give one of them");
}

std::string progressiveSettingsJson(const ProgressiveOptions& options) {
  nlohmann::json json = {
      {"cluster", options.clusterTexels},           {"emitter_cluster", options.emitterClusterTexels},
      {"hemisphere", options.hemisphereResolution}, {"max_edge", options.maxEdgeFraction},
      {"residual", options.residualFraction},       {"shots", options.maxShots},
      {"time_budget_s", options.timeBudgetSeconds}};
  if (options.adaptive.depth > 0) {
    json["adaptive"] = {{"max_depth", options.adaptive.depth},
                        {"leaf_texels", options.adaptive.leafElements},
                        {"split_gradient", options.adaptive.splitThreshold},
                        {"max_texels", options.adaptive.maxElements},
                        {"split_every", options.splitEveryShots},
                        {"leaf_borders", options.drawLeafBorders}};
  }
  return json.dump();
}

void checkProgressiveScene(const scene::Scene& scene) { checkShootingScene(scene, "progressive refinement"); }

std::uint64_t shotsToResidual(const ProgressiveResult& result, double fraction) {
  for (std::size_t k = 0; k < result.shotResiduals.size(); ++k)
    if (double(result.shotResiduals[k]) <= fraction) return k;  // k shots had been made
  if (!result.checkpoints.empty() && result.checkpoints.back().residualFraction <= fraction) return result.shots;
  return result.shots + 1;
}

namespace {

// The solver's unknowns as the shoot shaders read them (per element: its receiver record, texel
// axes and L_e) and the shooters' members: the atlas's valid texels, or the quadtree's elements.
struct ShootElements {
  std::vector<GpuReceiver> receivers;
  std::vector<GpuTexelAxes> axes;
  std::vector<glm::vec4> emission;
  std::vector<std::uint32_t> clusterFirst;  // C + 1 offsets into clusterMembers
  std::vector<std::uint32_t> clusterMembers;
  [[nodiscard]] std::size_t size() const { return receivers.size(); }
};

ShootElements texelElements(const LightmapAtlas& atlas, const PatchList& patches, std::span<const std::uint32_t> texels,
                            const ShooterClusters& clusters) {
  ShootReceivers records = makeShootReceivers(atlas, patches, texels, clusters.ofTexel);
  ShootElements out;
  out.receivers = std::move(records.receivers);
  out.axes = std::move(records.axes);
  for (const std::uint32_t t : texels) out.emission.emplace_back(patches.emission[t], 0.0f);
  out.clusterFirst = clusters.first;
  out.clusterMembers = clusters.texels;
  return out;
}

// The quadtree's elements; each belongs to the shooter of its first texel (the shooters' blocks
// are whole roots, so an element never straddles two). An element of side s has s times a texel's axes.
ShootElements quadtreeElements(const LightmapAtlas& atlas, const PatchList& patches, const LightmapQuadtree& quadtree,
                               const ShooterClusters& clusters, std::span<const std::uint32_t> compactOfTexel) {
  ShootElements out;
  const std::vector<QuadtreeElement>& elements = quadtree.elements();
  std::vector<std::uint32_t> clusterOf(elements.size());
  std::vector<std::uint32_t> count(clusters.size() + 1, 0);
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const QuadtreeElement& e = elements[i];
    clusterOf[i] = clusters.ofTexel[compactOfTexel[e.firstTexel]];
    ++count[clusterOf[i] + 1];
    const std::uint32_t chart = quadtree.leaves()[e.leaf].chart;
    out.receivers.push_back({glm::vec4(e.position, float(e.area)), glm::vec4(e.normal, 0.0f),
                             glm::vec4(e.albedo, 0.0f), glm::uvec4(chart, clusterOf[i], 0u, 0u)});
    GpuTexelAxes axes = triangleTexelAxes(atlas, patches.triangle[e.firstTexel]);
    axes.u *= float(e.side), axes.v *= float(e.side);
    out.axes.push_back(axes);
    out.emission.emplace_back(e.emission, 0.0f);
  }
  std::partial_sum(count.begin(), count.end(), count.begin());
  out.clusterFirst = count;
  out.clusterMembers.resize(elements.size());
  for (std::uint32_t i = 0; i < elements.size(); ++i) out.clusterMembers[count[clusterOf[i]]++] = i;
  return out;
}

// The buffers sized by the elements (re-made when a split changes them).
struct ElementBuffers {
  gpu::Buffer receivers, residual, radiance, axes, clusterFirst, clusterMembers, lastShot;
  std::size_t count = 0;

  ElementBuffers(const ShootElements& elements, const std::vector<glm::vec4>& radianceValues,
                 const std::vector<glm::vec4>& residualValues, bool recordShot)
      : receivers(makeStorageBuffer(elements.receivers)),
        residual(makeStorageBuffer(residualValues)),
        radiance(makeStorageBuffer(radianceValues, GL_MAP_READ_BIT)),
        axes(makeStorageBuffer(elements.axes)),
        clusterFirst(makeStorageBuffer(elements.clusterFirst)),
        clusterMembers(makeStorageBuffer(elements.clusterMembers)),
        count(elements.size()) {
    if (recordShot) lastShot = makeStorageBuffer(std::vector<glm::vec4>(count), GL_DYNAMIC_STORAGE_BIT);
  }
  void bind() const {
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_RECEIVERS, receivers.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_RESIDUAL, residual.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_RADIANCE, radiance.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_AXES, axes.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_CLUSTER_FIRST, clusterFirst.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_CLUSTER_TEXELS, clusterMembers.id());
    if (lastShot.id() != 0) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_LAST_SHOT, lastShot.id());
  }
};

std::vector<glm::vec4> readVec4s(const gpu::Buffer& buffer, std::size_t count) {
  std::vector<glm::vec4> out(count);
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  glGetNamedBufferSubData(buffer.id(), 0, GLsizeiptr(count * sizeof(glm::vec4)), out.data());
  return out;
}

// One progressive refinement solve: the set-up, then shots until a stop (ProgressiveSolver::run).
class ProgressiveSolver {
public:
  ProgressiveSolver(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                    const ProgressiveOptions& options);
  ProgressiveResult run(const ProgressiveCheckpointCallback& onCheckpoint,
                        const ProgressObserver& onProgress);

private:
  [[nodiscard]] bool adaptive() const { return m_quadtree.has_value(); }
  void bindBuffers() const;
  GpuChoice selectShooter() const;
  [[nodiscard]] std::string stopReason(const GpuChoice& choice, double residualFraction) const;
  void shoot(std::uint32_t cluster);
  void dispatchUpdate(const gpu::Program& program, std::size_t count) const;
  void splitAfterShot();
  // The current L per atlas texel (0 on padding) and its mean over the valid texels.
  std::vector<glm::vec3> atlasRadiance(glm::dvec3& mean);

  const scene::Scene& m_scene;
  const LightmapAtlas& m_atlas;
  const PatchList& m_patches;
  const ProgressiveOptions m_options;
  const Stopwatch m_solveTime;
  std::vector<std::uint32_t> m_texels;          // the valid texels, atlas indices
  std::vector<std::uint32_t> m_compactOfTexel;  // atlas index → index into m_texels
  ShooterClusters m_clusters;
  std::optional<LightmapQuadtree> m_quadtree;
  std::optional<ElementBuffers> m_elements;
  double m_emittedPower = 0.0;
  gpu::Buffer m_clusterResidual, m_partials, m_result, m_subset;
  std::size_t m_partialCount = 0;
  std::optional<HemisphereVisibility> m_visibility;
  gpu::Program m_select, m_selectFinal, m_update, m_updateSubset, m_zero;
  ProgressiveResult m_out;
};

ProgressiveSolver::ProgressiveSolver(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                     const ProgressiveOptions& options)
    : m_scene(scene), m_atlas(atlas), m_patches(patches), m_options(options) {
  validateProgressiveOptions(options);
  checkProgressiveScene(scene);
  m_texels = solverTexels(atlas, patches);
  m_compactOfTexel.assign(patches.texelCount(), 0);
  for (std::uint32_t i = 0; i < m_texels.size(); ++i) m_compactOfTexel[m_texels[i]] = i;
  // Adaptive: the shooters' blocks count roots (2^D texels a side), as the uniform ones count texels.
  const int rootSide = options.adaptive.depth > 0 ? 1 << options.adaptive.depth : 1;
  m_clusters = buildShooterClusters(atlas, patches, m_texels, options.clusterTexels * rootSide,
                                    options.emitterClusterTexels * rootSide);
  ShootElements elements;
  if (options.adaptive.depth > 0) {
    m_quadtree.emplace(atlas, patches, options.adaptive);
    elements = quadtreeElements(atlas, patches, *m_quadtree, m_clusters, m_compactOfTexel);
  } else {
    elements = texelElements(atlas, patches, m_texels, m_clusters);
  }
  // Per element L = L_e and ΔL = L_e; the emitted power Φ_e = Σ π mean_rgb(L_e) A (W, averaged
  // over RGB: the unit of every residual figure).
  for (std::size_t i = 0; i < elements.size(); ++i)
    m_emittedPower += std::numbers::pi * double(meanRgb(glm::vec3(elements.emission[i]))) *
                      double(elements.receivers[i].positionArea.w);
  if (!(m_emittedPower > 0.0))
    throw Error(scene.sourcePath.string() +
                ": no texel emits light (the lightmap would be black); give the scene an "
                "emissive surface or quad light");
  m_elements.emplace(elements, elements.emission, elements.emission, adaptive());
  m_clusterResidual = makeStorageBuffer(std::vector<glm::vec4>(m_clusters.size()));
  m_partialCount = (m_clusters.size() + kSelectGroupSize - 1) / kSelectGroupSize;
  m_partials = makeStorageBuffer(std::vector<GpuChoice>(m_partialCount));
  m_result = makeStorageBuffer(std::vector<GpuChoice>(1));

  // The visibility pass: the tessellated scene by hemispherical projection from the shooter.
  m_visibility.emplace(scene, atlas, options.maxEdgeFraction, options.hemisphereResolution);
  m_select = gpu::loadProgram({"lightmap_shoot_select.comp"});
  m_selectFinal = gpu::loadProgram({"lightmap_shoot_select.comp"}, {"FINAL_STAGE"});
  m_update = adaptive() ? gpu::loadProgram({"lightmap_shoot_update.comp"}, {"RECORD_SHOT"})
                        : gpu::loadProgram({"lightmap_shoot_update.comp"});
  if (adaptive()) m_updateSubset = gpu::loadProgram({"lightmap_shoot_update.comp"}, {"RECORD_SHOT", "SUBSET"});
  m_zero = gpu::loadProgram({"lightmap_shoot_zero.comp"});
  for (const gpu::Program* program : {&m_update, &m_updateSubset})
    if (program->id() != 0) glProgramUniform1f(program->id(), IBRR_U_SHOOT_DEPTH_EPSILON, m_visibility->depthEpsilon());
  glProgramUniform1ui(m_select.id(), IBRR_U_SHOOT_SELECT_COUNT, GLuint(m_clusters.size()));
  glProgramUniform1ui(m_selectFinal.id(), IBRR_U_SHOOT_SELECT_COUNT, GLuint(m_partialCount));

  m_out.clusters = m_clusters.size();
  m_out.sceneTriangles = atlas.triangleCount();
  m_out.visibilityTriangles = m_visibility->triangles();
  m_out.emittedPower = m_emittedPower;
}

// Bound before every shot: a checkpoint callback may draw with other buffers on these points.
void ProgressiveSolver::bindBuffers() const {
  m_elements->bind();
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_CLUSTER_RESIDUAL, m_clusterResidual.id());
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_PARTIALS, m_partials.id());
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_RESULT, m_result.id());
}

// 1. The next shooter: per-cluster residual, then the largest and the total (16 bytes back).
GpuChoice ProgressiveSolver::selectShooter() const {
  m_select.use();
  glDispatchCompute(GLuint(m_partialCount), 1, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  m_selectFinal.use();
  glDispatchCompute(1, 1, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
  GpuChoice choice;
  glGetNamedBufferSubData(m_result.id(), 0, sizeof(GpuChoice), &choice);
  return choice;
}

// Why the solve stops before this shot ("residual", "shots", "time"), or "" to go on.
std::string ProgressiveSolver::stopReason(const GpuChoice& choice, double residualFraction) const {
  if (m_options.residualFraction > 0.0 && residualFraction < m_options.residualFraction) return "residual";
  if (!(choice.maxPower > 0.0f) || choice.cluster >= m_clusters.size()) return "residual";  // nothing left
  if (m_options.maxShots > 0 && m_out.shots >= m_options.maxShots) return "shots";
  if (m_options.timeBudgetSeconds > 0.0 && m_solveTime.seconds() >= m_options.timeBudgetSeconds) return "time";
  return "";
}

void ProgressiveSolver::dispatchUpdate(const gpu::Program& program, std::size_t count) const {
  program.use();
  glProgramUniform1ui(program.id(), IBRR_U_SHOOT_COUNT, GLuint(count));
  glDispatchCompute(GLuint((count + kUpdateGroupSize - 1) / kUpdateGroupSize), 1, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

// 2. Visibility from the cluster's centroid, lifted off its surface by the near plane; 3. every
// receiver in one pass (adaptive: then the leaves that need it split, their children taking the
// shot again), then the shooter's residual is zeroed.
void ProgressiveSolver::shoot(std::uint32_t c) {
  const glm::vec3 shooter = m_clusters.centroid[c];
  m_visibility->render(shooter, m_clusters.normal[c]);
  glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
  const glm::mat3 toShooter = shooterFrame(m_clusters.normal[c]);  // uploaded column-major, as GLSL reads it
  for (const gpu::Program* program : {&m_update, &m_updateSubset}) {
    if (program->id() == 0) continue;
    glProgramUniform3fv(program->id(), IBRR_U_SHOOT_SHOOTER, 1, &shooter.x);
    glProgramUniformMatrix3fv(program->id(), IBRR_U_SHOOT_TO_SHOOTER, 1, GL_FALSE, &toShooter[0][0]);
    glProgramUniform1f(program->id(), IBRR_U_SHOOT_AREA, m_clusters.area[c]);
    glProgramUniform1f(program->id(), IBRR_U_SHOOT_NEAR_RADIUS, kNearFieldSides * std::sqrt(m_clusters.area[c]));
  }
  glBindTextureUnit(IBRR_T_SHOOT_HEMISPHERE, m_visibility->texture());
  if (adaptive()) glClearNamedBufferData(m_elements->lastShot.id(), GL_RGBA32F, GL_RGBA, GL_FLOAT, nullptr);
  dispatchUpdate(m_update, m_elements->count);
  if (adaptive() && m_out.shots % m_options.splitEveryShots == 0) splitAfterShot();
  m_zero.use();
  const std::uint32_t members = m_clusters.first[c + 1] - m_clusters.first[c];
  glDispatchCompute(GLuint((members + kUpdateGroupSize - 1) / kUpdateGroupSize), 1, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

// Splits the leaves whose radiance has a large second difference. A child starts from its
// parent's L and ΔL before this shot (a split moves no energy: Σ L·A and Σ ΔL·A are kept) and then
// takes this shot at its own size.
void ProgressiveSolver::splitAfterShot() {
  const Stopwatch time;
  const std::size_t count = m_elements->count;
  const std::vector<glm::vec4> radiance = readVec4s(m_elements->radiance, count);
  const QuadtreeSplit split = m_quadtree->split(std::vector<glm::vec3>(radiance.begin(), radiance.end()));
  if (split.splitLeaves > 0) {
    const std::vector<glm::vec4> residual = readVec4s(m_elements->residual, count);
    const std::vector<glm::vec4> lastShot = readVec4s(m_elements->lastShot, count);
    std::vector<glm::vec4> newRadiance(split.source.size()), newResidual(split.source.size());
    for (std::size_t i = 0; i < split.source.size(); ++i) {
      const std::uint32_t s = split.source[i];
      const glm::vec4 undo = split.isNew[i] ? lastShot[s] : glm::vec4(0.0f);
      newRadiance[i] = radiance[s] - undo;
      newResidual[i] = residual[s] - undo;
    }
    const ShootElements elements = quadtreeElements(m_atlas, m_patches, *m_quadtree, m_clusters, m_compactOfTexel);
    m_elements.emplace(elements, newRadiance, newResidual, true);
    m_subset = makeStorageBuffer(split.newElements);
    bindBuffers();
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_SHOOT_SUBSET, m_subset.id());
    dispatchUpdate(m_updateSubset, split.newElements.size());
    m_out.leafSplits += split.splitLeaves;
  }
  m_out.splitSeconds += time.seconds();
}

std::vector<glm::vec3> ProgressiveSolver::atlasRadiance(glm::dvec3& mean) {
  std::vector<glm::vec3> radiance(m_patches.texelCount(), glm::vec3(0.0f));
  if (!adaptive()) {
    std::vector<glm::vec4> scratch;
    mean = readTexelRadiance(m_elements->radiance, m_texels, scratch, radiance);
    return radiance;
  }
  std::vector<glm::vec3> perElement;
  for (const glm::vec4& value : readVec4s(m_elements->radiance, m_elements->count)) perElement.emplace_back(value);
  radiance = m_quadtree->atlasRadiance(perElement);
  glm::dvec3 sum(0.0);
  for (const std::uint32_t t : m_texels) sum += glm::dvec3(radiance[t]);
  mean = m_texels.empty() ? sum : sum / double(m_texels.size());
  return radiance;
}

ProgressiveResult ProgressiveSolver::run(const ProgressiveCheckpointCallback& onCheckpoint,
                                         const ProgressObserver& onProgress) {
  gpu::DebugGroup group("progressive refinement");
  std::vector<glm::vec3> radiance;
  const auto checkpoint = [&](double residualFraction) {
    ProgressiveCheckpoint stats;
    radiance = atlasRadiance(stats.meanRadiance);
    stats.shots = m_out.shots;
    stats.seconds = m_solveTime.seconds();
    stats.residualFraction = residualFraction;
    m_out.checkpoints.push_back(stats);
    if (onCheckpoint) onCheckpoint(stats, radiance);
  };
  const Stopwatch shootTime;
  double residualFraction = 1.0;
  while (true) {
    throwIfInterrupted();
    bindBuffers();
    const GpuChoice choice = selectShooter();
    residualFraction = double(choice.totalPower) / m_emittedPower;
    m_out.stopReason = stopReason(choice, residualFraction);
    if (!m_out.stopReason.empty()) break;
    if (m_options.checkpointShots > 0 && m_out.shots > 0 && m_out.shots % m_options.checkpointShots == 0) {
      checkpoint(residualFraction);
      bindBuffers();
    }
    shoot(choice.cluster);
    ++m_out.shots;
    m_out.shotPowers.push_back(choice.maxPower);
    m_out.shotResiduals.push_back(float(residualFraction));
    if (onProgress) {
      char residual[48];
      std::snprintf(residual, sizeof residual, "residual %.4f", residualFraction);
      onProgress({"progressive", m_out.shots, m_options.maxShots, "shots", residual});
    }
  }
  m_out.shootSeconds = shootTime.seconds();
  gpu::checkGlError("progressive refinement");
  checkpoint(residualFraction);
  m_out.elements = m_elements->count;
  if (adaptive()) {
    m_out.leaves = m_quadtree->leaves();
    if (m_options.drawLeafBorders) m_quadtree->drawLeafBorders(radiance);
  }
  m_out.lightmap =
      solvedLightmap(m_scene, m_atlas, std::move(radiance), "progressive", progressiveSettingsJson(m_options));
  m_out.seconds = m_solveTime.seconds();
  return std::move(m_out);
}

}  // namespace

ProgressiveResult solveProgressive(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                   const ProgressiveOptions& options, const ProgressiveCheckpointCallback& onCheckpoint,
                                   const ProgressObserver& onProgress) {
  ProgressiveSolver solver(scene, atlas, patches, options);
  return solver.run(onCheckpoint, onProgress);
}

}  // namespace ibrr::lightmap
