#include "lightmap/progressive.hpp"

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
#include <numbers>
#include <string>
#include <utility>

namespace ibrr::lightmap {
namespace {

constexpr int kSelectGroupSize = 256;  // lightmap_shoot_select.comp local_size_x
constexpr int kUpdateGroupSize = 64;   // lightmap_shoot_update.comp local_size_x

// SSBO bindings shared by the shoot shaders.
constexpr GLuint kReceiversBinding = 0;
constexpr GLuint kResidualBinding = 1;
constexpr GLuint kClusterFirstBinding = 2;
constexpr GLuint kPartialsBinding = 3;
constexpr GLuint kResultBinding = 4;
constexpr GLuint kClusterTexelsBinding = 5;
constexpr GLuint kClusterResidualBinding = 6;
constexpr GLuint kRadianceBinding = 7;
constexpr GLuint kAxesBinding = 8;

// Uniform locations (shaders/lightmap_shoot_*).
constexpr GLint kUniformShooter = 0;
constexpr GLint kUniformToShooter = 1;
constexpr GLint kUniformCount = 3;  // update pass
constexpr GLint kUniformArea = 4;
constexpr GLint kUniformDepthEpsilon = 5;
constexpr GLint kUniformNearRadius = 6;

constexpr GLint kUniformSelectCount = 0;  // select passes

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
    throw Error("--cluster " + std::to_string(options.clusterTexels) + ": give a block side in [1, 64] texels");
  if (options.emitterClusterTexels < 1 || options.emitterClusterTexels > 64)
    throw Error("--emitter-cluster " + std::to_string(options.emitterClusterTexels) +
                ": give a block side in [1, 64] texels");
  if (options.hemisphereResolution < 16 || options.hemisphereResolution > 4096)
    throw Error("--hemisphere " + std::to_string(options.hemisphereResolution) +
                ": the visibility buffer's side must be in [16, 4096] pixels");
  if (!(options.maxEdgeFraction >= 0.0 && options.maxEdgeFraction <= 1.0))
    throw Error("--max-edge " + std::to_string(options.maxEdgeFraction) +
                ": give a fraction of the scene diagonal in [0, 1] (0 = no tessellation)");
  if (!(options.residualFraction >= 0.0 && options.residualFraction < 1.0))
    throw Error("--residual " + std::to_string(options.residualFraction) +
                ": give a fraction of the emitted power in [0, 1) (e.g. 0.01; 0 = off)");
  if (!(options.timeBudgetSeconds >= 0.0) || !std::isfinite(options.timeBudgetSeconds))
    throw Error("--time-budget " + std::to_string(options.timeBudgetSeconds) + ": give seconds ≥ 0 (0 = none)");
  if (options.residualFraction == 0.0 && options.maxShots == 0 && options.timeBudgetSeconds == 0.0)
    throw Error("--residual 0 with no --shots and no --time-budget would never stop: give one of them");
}

std::string progressiveSettingsJson(const ProgressiveOptions& options) {
  const nlohmann::json json = {
      {"cluster", options.clusterTexels},           {"emitter_cluster", options.emitterClusterTexels},
      {"hemisphere", options.hemisphereResolution}, {"max_edge", options.maxEdgeFraction},
      {"residual", options.residualFraction},       {"shots", options.maxShots},
      {"time_budget_s", options.timeBudgetSeconds}};
  return json.dump();
}

void checkProgressiveScene(const scene::Scene& scene) { checkShootingScene(scene, "progressive refinement"); }

std::uint64_t shotsToResidual(const ProgressiveResult& result, double fraction) {
  for (std::size_t k = 0; k < result.shotResiduals.size(); ++k)
    if (double(result.shotResiduals[k]) <= fraction) return k;  // k shots had been made
  if (!result.checkpoints.empty() && result.checkpoints.back().residualFraction <= fraction) return result.shots;
  return result.shots + 1;
}

ProgressiveResult solveProgressive(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                   const ProgressiveOptions& options, const ProgressiveCheckpointCallback& onCheckpoint,
                                   const ProgressiveProgressCallback& onProgress) {
  validateProgressiveOptions(options);
  const Stopwatch solveTime;
  checkProgressiveScene(scene);
  const std::vector<std::uint32_t> texels = solverTexels(atlas, patches);

  gpu::DebugGroup group("progressive refinement");
  const ShooterClusters clusters =
      buildShooterClusters(atlas, patches, texels, options.clusterTexels, options.emitterClusterTexels);
  const std::size_t clusterCount = clusters.area.size();
  const std::size_t texelCount = texels.size();

  // Per valid texel: the receiver record, L = L_e and ΔL = L_e; the emitted power
  // Φ_e = Σ π mean_rgb(L_e) A (W, averaged over RGB: the unit of every residual figure).
  const ShootReceivers shootReceivers = makeShootReceivers(atlas, patches, texels, clusters.ofTexel);
  std::vector<glm::vec4> initial(texelCount);
  double emittedPower = 0.0;
  for (std::size_t i = 0; i < texelCount; ++i) {
    const std::uint32_t t = texels[i];
    initial[i] = glm::vec4(patches.emission[t], 0.0f);
    emittedPower += std::numbers::pi * double(meanRgb(patches.emission[t])) * double(patches.area[t]);
  }
  if (!(emittedPower > 0.0))
    throw Error(scene.sourcePath.string() +
                ": no texel emits light (the lightmap would be black); give the scene an "
                "emissive surface or quad light");

  const gpu::Buffer receiverBuffer = makeStorageBuffer(shootReceivers.receivers);
  const gpu::Buffer residualBuffer = makeStorageBuffer(initial);
  const gpu::Buffer radianceBuffer = makeStorageBuffer(initial, GL_MAP_READ_BIT);
  const gpu::Buffer axesBuffer = makeStorageBuffer(shootReceivers.axes);
  const gpu::Buffer clusterFirstBuffer = makeStorageBuffer(clusters.first);
  const gpu::Buffer clusterTexelBuffer = makeStorageBuffer(clusters.texels);
  const gpu::Buffer clusterResidualBuffer = makeStorageBuffer(std::vector<glm::vec4>(clusterCount));
  const std::size_t partialCount = (clusterCount + kSelectGroupSize - 1) / kSelectGroupSize;
  const gpu::Buffer partialBuffer = makeStorageBuffer(std::vector<GpuChoice>(partialCount));
  const gpu::Buffer resultBuffer = makeStorageBuffer(std::vector<GpuChoice>(1));
  // Bound before every shot: a checkpoint callback may draw with other buffers on these points.
  const auto bindBuffers = [&] {
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kReceiversBinding, receiverBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kResidualBinding, residualBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kRadianceBinding, radianceBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kAxesBinding, axesBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kClusterFirstBinding, clusterFirstBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kClusterTexelsBinding, clusterTexelBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kClusterResidualBinding, clusterResidualBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kPartialsBinding, partialBuffer.id());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kResultBinding, resultBuffer.id());
  };

  // The visibility pass: the tessellated scene by hemispherical projection from the shooter.
  const HemisphereVisibility visibility(scene, atlas, options.maxEdgeFraction, options.hemisphereResolution);

  const gpu::Program selectProgram = gpu::loadProgram({"lightmap_shoot_select.comp"});
  const gpu::Program selectFinalProgram = gpu::loadProgram({"lightmap_shoot_select.comp"}, {"FINAL_STAGE"});
  const gpu::Program updateProgram = gpu::loadProgram({"lightmap_shoot_update.comp"});
  const gpu::Program zeroProgram = gpu::loadProgram({"lightmap_shoot_zero.comp"});
  glProgramUniform1ui(updateProgram.id(), kUniformCount, GLuint(texelCount));
  glProgramUniform1f(updateProgram.id(), kUniformDepthEpsilon, visibility.depthEpsilon());
  glProgramUniform1ui(selectProgram.id(), kUniformSelectCount, GLuint(clusterCount));
  glProgramUniform1ui(selectFinalProgram.id(), kUniformSelectCount, GLuint(partialCount));

  ProgressiveResult result;
  result.clusters = clusterCount;
  result.sceneTriangles = atlas.triangleCount();
  result.visibilityTriangles = visibility.triangles();
  result.emittedPower = emittedPower;

  std::vector<glm::vec4> readBack;
  std::vector<glm::vec3> radiance(patches.texelCount(), glm::vec3(0.0f));
  const auto checkpoint = [&](double residualFraction) {
    const glm::dvec3 mean = readTexelRadiance(radianceBuffer, texels, readBack, radiance);
    ProgressiveCheckpoint stats;
    stats.shots = result.shots;
    stats.seconds = solveTime.seconds();
    stats.residualFraction = residualFraction;
    stats.meanRadiance = mean;
    result.checkpoints.push_back(stats);
    if (onCheckpoint) onCheckpoint(stats, radiance);
  };

  const Stopwatch shootTime;
  double residualFraction = 1.0;
  while (true) {
    throwIfInterrupted();
    bindBuffers();
    // 1. The next shooter: per-cluster residual, then the largest and the total (16 bytes back).
    selectProgram.use();
    glDispatchCompute(GLuint(partialCount), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    selectFinalProgram.use();
    glDispatchCompute(1, 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
    GpuChoice choice;
    glGetNamedBufferSubData(resultBuffer.id(), 0, sizeof(GpuChoice), &choice);
    residualFraction = double(choice.totalPower) / emittedPower;
    if (options.residualFraction > 0.0 && residualFraction < options.residualFraction) {
      result.stopReason = "residual";
      break;
    }
    if (!(choice.maxPower > 0.0f) || choice.cluster >= clusterCount) {  // nothing left to shoot
      result.stopReason = "residual";
      break;
    }
    if (options.maxShots > 0 && result.shots >= options.maxShots) {
      result.stopReason = "shots";
      break;
    }
    if (options.timeBudgetSeconds > 0.0 && solveTime.seconds() >= options.timeBudgetSeconds) {
      result.stopReason = "time";
      break;
    }
    if (options.checkpointShots > 0 && result.shots > 0 && result.shots % options.checkpointShots == 0) {
      checkpoint(residualFraction);
      bindBuffers();
    }

    // 2. Visibility from the cluster's centroid, lifted off its surface by the near plane.
    const std::uint32_t c = choice.cluster;
    const glm::vec3 shooter = clusters.centroid[c];
    visibility.render(shooter, clusters.normal[c]);
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
    const glm::mat3 toShooter = shooterFrame(clusters.normal[c]);  // uploaded column-major, as GLSL reads it

    // 3. Every receiver in one pass, then the shooter's residual is zeroed.
    updateProgram.use();
    glProgramUniform3fv(updateProgram.id(), kUniformShooter, 1, &shooter.x);
    glProgramUniformMatrix3fv(updateProgram.id(), kUniformToShooter, 1, GL_FALSE, &toShooter[0][0]);
    glProgramUniform1f(updateProgram.id(), kUniformArea, clusters.area[c]);
    glProgramUniform1f(updateProgram.id(), kUniformNearRadius, kNearFieldSides * std::sqrt(clusters.area[c]));
    glBindTextureUnit(0, visibility.texture());
    glDispatchCompute(GLuint((texelCount + kUpdateGroupSize - 1) / kUpdateGroupSize), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    zeroProgram.use();
    const std::uint32_t members = clusters.first[c + 1] - clusters.first[c];
    glDispatchCompute(GLuint((members + kUpdateGroupSize - 1) / kUpdateGroupSize), 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    ++result.shots;
    result.shotPowers.push_back(choice.maxPower);
    result.shotResiduals.push_back(float(residualFraction));
    if (onProgress) onProgress(result.shots, residualFraction);
  }
  result.shootSeconds = shootTime.seconds();
  gpu::checkGlError("progressive refinement");
  checkpoint(residualFraction);

  result.lightmap = solvedLightmap(scene, atlas, std::move(radiance), "progressive", progressiveSettingsJson(options));
  result.seconds = solveTime.seconds();
  return result;
}

}  // namespace ibrr::lightmap
