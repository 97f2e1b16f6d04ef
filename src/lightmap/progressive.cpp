#include "lightmap/progressive.hpp"

#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "lightmap/gather.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <unordered_map>
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
constexpr GLint kUniformNearFar = 2;
constexpr GLint kUniformCount = 3;  // update pass
constexpr GLint kUniformArea = 4;
constexpr GLint kUniformDepthEpsilon = 5;
constexpr GLint kUniformNearRadius = 6;

// Receivers closer to the shooting cluster than this many times √A_c (its side, for a square)
// take the exact per-texel polygon form factors instead of the disc formula, whose relative
// under-estimate A_c / (π d² + A_c) is then below 2% (lightmap_shoot_update.comp).
constexpr float kNearFieldSides = 4.0f;
constexpr GLint kUniformSelectCount = 0;  // select passes

// One valid texel as the shaders read it (std430, 64 bytes).
struct GpuReceiver {
  glm::vec4 positionArea;
  glm::vec4 normal;
  glm::vec4 albedo;
  glm::uvec4 chartCluster;
};

// What the selection writes for the CPU (std430, 16 bytes).
struct GpuChoice {
  float maxPower = 0.0f;
  std::uint32_t cluster = 0;
  float totalPower = 0.0f;
  float unused = 0.0f;
};

// The world displacement of one texel step along the atlas x and y axes (std430, 32 bytes).
struct GpuTexelAxes {
  glm::vec4 u;
  glm::vec4 v;
};

// ∂P/∂u and ∂P/∂v of an atlas triangle: [p1 − p0, p2 − p0] · [uv1 − uv0, uv2 − uv0]⁻¹.
GpuTexelAxes triangleAxes(const LightmapAtlas& atlas, std::uint32_t triangle) {
  const LightmapVertex* v = &atlas.vertices[3 * std::size_t(triangle)];
  const glm::mat2 uv(v[1].lightmapUv - v[0].lightmapUv, v[2].lightmapUv - v[0].lightmapUv);
  const glm::mat2x3 position(v[1].position - v[0].position, v[2].position - v[0].position);
  const float determinant = glm::determinant(uv);
  if (std::abs(determinant) < 1e-20f) return {glm::vec4(0.0f), glm::vec4(0.0f)};
  const glm::mat2x3 axes = position * glm::inverse(uv);
  return {glm::vec4(axes[0], 0.0f), glm::vec4(axes[1], 0.0f)};
}

// A vertex of the visibility pass.
struct VisibilityVertex {
  glm::vec3 position;
  std::uint32_t chart;
};

// Shooters: blocks of B×B texels of one chart (aligned to the chart's footprint), emitting and
// reflecting texels apart. Geometry is fixed; the residual per cluster lives on the GPU.
struct Clusters {
  std::vector<std::uint32_t> first;    // C + 1 offsets into texels
  std::vector<std::uint32_t> texels;   // compact valid-texel indices
  std::vector<std::uint32_t> ofTexel;  // per compact texel
  std::vector<glm::vec3> centroid;     // area-weighted mean position (scene units)
  std::vector<glm::vec3> normal;       // area-weighted mean normal, unit
  std::vector<float> area;             // Σ A (scene units²)
};

float meanRgb(const glm::vec3& c) { return (c.r + c.g + c.b) / 3.0f; }

Clusters buildClusters(const LightmapAtlas& atlas, const PatchList& patches, const std::vector<std::uint32_t>& texels,
                       const ProgressiveOptions& options) {
  Clusters clusters;
  std::unordered_map<std::uint64_t, std::uint32_t> idOfKey;
  std::vector<std::vector<std::uint32_t>> members;
  clusters.ofTexel.resize(texels.size());
  for (std::size_t i = 0; i < texels.size(); ++i) {
    const std::uint32_t t = texels[i];
    const std::uint32_t chart = atlas.triangleChart[patches.triangle[t]];
    // Blocks are aligned to the chart's footprint (an atlas built by hand may have none: the origin).
    const LightmapAtlas::Footprint footprint =
        chart < atlas.chartFootprints.size() ? atlas.chartFootprints[chart] : LightmapAtlas::Footprint{};
    const bool emitter = meanRgb(patches.emission[t]) > 0.0f;
    const int block = emitter ? options.emitterClusterTexels : options.clusterTexels;
    const int x = int(t % std::uint32_t(patches.width)) - footprint.x;
    const int y = int(t / std::uint32_t(patches.width)) - footprint.y;
    const std::uint64_t key = (std::uint64_t(chart) << 33) | (std::uint64_t(emitter) << 32) |
                              (std::uint64_t(std::uint32_t(std::max(y, 0) / block)) << 16) |
                              std::uint64_t(std::uint32_t(std::max(x, 0) / block));
    const auto [it, inserted] = idOfKey.try_emplace(key, std::uint32_t(members.size()));
    if (inserted) members.emplace_back();
    members[it->second].push_back(std::uint32_t(i));
    clusters.ofTexel[i] = it->second;
  }
  clusters.first.push_back(0);
  for (const std::vector<std::uint32_t>& m : members) {
    glm::dvec3 centroid(0.0), normal(0.0);
    double area = 0.0;
    for (const std::uint32_t i : m) {
      const std::uint32_t t = texels[i];
      const double a = patches.area[t];
      centroid += a * glm::dvec3(patches.position[t]);
      normal += a * glm::dvec3(patches.normal[t]);
      area += a;
      clusters.texels.push_back(i);
    }
    clusters.first.push_back(std::uint32_t(clusters.texels.size()));
    const std::uint32_t t0 = texels[m.front()];
    clusters.centroid.push_back(area > 0.0 ? glm::vec3(centroid / area) : patches.position[t0]);
    clusters.normal.push_back(glm::length(normal) > 0.0 ? glm::vec3(glm::normalize(normal)) : patches.normal[t0]);
    clusters.area.push_back(float(area));
  }
  return clusters;
}

// Row-major frame of the shooter: rows tangent, bitangent, normal (so M · v = v in its frame).
glm::mat3 shooterFrame(const glm::vec3& normal) {
  const glm::vec3 helper = std::abs(normal.x) < 0.9f ? glm::vec3(1, 0, 0) : glm::vec3(0, 1, 0);
  const glm::vec3 tangent = glm::normalize(glm::cross(helper, normal));
  const glm::vec3 bitangent = glm::cross(normal, tangent);
  return glm::transpose(glm::mat3(tangent, bitangent, normal));  // GLM is column-major
}

template <typename T>
gpu::Buffer makeBuffer(const std::vector<T>& data, GLbitfield flags = 0) {
  return gpu::Buffer(GLsizeiptr(std::max<std::size_t>(data.size(), 1) * sizeof(T)),
                     data.empty() ? nullptr : data.data(), flags);
}

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

TessellatedTriangles tessellateTriangles(std::span<const glm::vec3> corners, float maxEdge) {
  TessellatedTriangles out;
  for (std::size_t tri = 0; tri + 2 < corners.size(); tri += 3) {
    const glm::vec3 a = corners[tri], b = corners[tri + 1], c = corners[tri + 2];
    const float longest = std::max({glm::length(b - a), glm::length(c - b), glm::length(a - c)});
    const int k = maxEdge > 0.0f ? std::clamp(int(std::ceil(longest / maxEdge)), 1, 256) : 1;
    // Barycentric grid of step 1/k: k² triangles, k(k+1)/2 upright and k(k−1)/2 inverted.
    const auto at = [&](int i, int j) { return a + (b - a) * (float(i) / float(k)) + (c - a) * (float(j) / float(k)); };
    for (int j = 0; j < k; ++j) {
      for (int i = 0; i + j < k; ++i) {
        out.corners.insert(out.corners.end(), {at(i, j), at(i + 1, j), at(i, j + 1)});
        out.source.push_back(std::uint32_t(tri / 3));
        if (i + j + 1 < k) {
          out.corners.insert(out.corners.end(), {at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)});
          out.source.push_back(std::uint32_t(tri / 3));
        }
      }
    }
  }
  return out;
}

void checkProgressiveScene(const scene::Scene& scene) {
  if (!scene.pointLights.empty() || !scene.spotLights.empty())
    throw Error(scene.sourcePath.string() +
                ": progressive refinement shoots from emissive surfaces only (texels of the lightmap); replace its "
                "point and spot lights by quad lights or emissive materials");
  if (scene.emitters().empty())
    throw Error(scene.sourcePath.string() +
                ": progressive refinement needs emissive surfaces (an emissive material, Ke, or a quad light in the "
                "manifest)");
}

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
  const Clusters clusters = buildClusters(atlas, patches, texels, options);
  const std::size_t clusterCount = clusters.area.size();
  const std::size_t texelCount = texels.size();

  // Per valid texel: the receiver record, L = L_e and ΔL = L_e; the emitted power
  // Φ_e = Σ π mean_rgb(L_e) A (W, averaged over RGB: the unit of every residual figure).
  std::vector<GpuReceiver> receivers(texelCount);
  std::vector<glm::vec4> initial(texelCount);
  std::vector<GpuTexelAxes> axes(texelCount);
  double emittedPower = 0.0;
  for (std::size_t i = 0; i < texelCount; ++i) {
    const std::uint32_t t = texels[i];
    receivers[i] = {glm::vec4(patches.position[t], patches.area[t]), glm::vec4(patches.normal[t], 0.0f),
                    glm::vec4(patches.albedo[t], 0.0f),
                    glm::uvec4(atlas.triangleChart[patches.triangle[t]], clusters.ofTexel[i], 0u, 0u)};
    initial[i] = glm::vec4(patches.emission[t], 0.0f);
    axes[i] = triangleAxes(atlas, patches.triangle[t]);
    emittedPower += std::numbers::pi * double(meanRgb(patches.emission[t])) * double(patches.area[t]);
  }
  if (!(emittedPower > 0.0))
    throw Error(scene.sourcePath.string() +
                ": no texel emits light (the lightmap would be black); give the scene an "
                "emissive surface or quad light");

  const gpu::Buffer receiverBuffer = makeBuffer(receivers);
  const gpu::Buffer residualBuffer = makeBuffer(initial);
  const gpu::Buffer radianceBuffer = makeBuffer(initial, GL_MAP_READ_BIT);
  const gpu::Buffer axesBuffer = makeBuffer(axes);
  const gpu::Buffer clusterFirstBuffer = makeBuffer(clusters.first);
  const gpu::Buffer clusterTexelBuffer = makeBuffer(clusters.texels);
  const gpu::Buffer clusterResidualBuffer = makeBuffer(std::vector<glm::vec4>(clusterCount));
  const std::size_t partialCount = (clusterCount + kSelectGroupSize - 1) / kSelectGroupSize;
  const gpu::Buffer partialBuffer = makeBuffer(std::vector<GpuChoice>(partialCount));
  const gpu::Buffer resultBuffer = makeBuffer(std::vector<GpuChoice>(1));
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

  // The visibility pass's geometry: every atlas triangle, tessellated, with its chart.
  const float diagonal = std::max(scene.bounds().diagonal(), 1e-6f);
  std::vector<glm::vec3> corners(atlas.vertices.size());
  for (std::size_t v = 0; v < corners.size(); ++v) corners[v] = atlas.vertices[v].position;
  const TessellatedTriangles tessellated = tessellateTriangles(corners, float(options.maxEdgeFraction) * diagonal);
  std::vector<VisibilityVertex> visibilityVertices(tessellated.corners.size());
  for (std::size_t v = 0; v < visibilityVertices.size(); ++v)
    visibilityVertices[v] = {tessellated.corners[v], atlas.triangleChart[tessellated.source[v / 3]]};
  const gpu::Buffer visibilityBuffer = makeBuffer(visibilityVertices);
  const gpu::VertexArray visibilityArray = gpu::VertexArray::create();
  glVertexArrayVertexBuffer(visibilityArray.id(), 0, visibilityBuffer.id(), 0, sizeof(VisibilityVertex));
  glEnableVertexArrayAttrib(visibilityArray.id(), 0);
  glVertexArrayAttribFormat(visibilityArray.id(), 0, 3, GL_FLOAT, GL_FALSE, offsetof(VisibilityVertex, position));
  glVertexArrayAttribBinding(visibilityArray.id(), 0, 0);
  glEnableVertexArrayAttrib(visibilityArray.id(), 1);
  glVertexArrayAttribIFormat(visibilityArray.id(), 1, 1, GL_UNSIGNED_INT, offsetof(VisibilityVertex, chart));
  glVertexArrayAttribBinding(visibilityArray.id(), 1, 0);

  const int resolution = options.hemisphereResolution;
  const gpu::Texture hemisphere(GL_RG32F, resolution, resolution);
  const gpu::Renderbuffer hemisphereDepth(GL_DEPTH_COMPONENT32F, resolution, resolution);
  const gpu::Framebuffer framebuffer = gpu::Framebuffer::create();
  glNamedFramebufferTexture(framebuffer.id(), GL_COLOR_ATTACHMENT0, hemisphere.id(), 0);
  glNamedFramebufferRenderbuffer(framebuffer.id(), GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, hemisphereDepth.id());

  const gpu::Program visibilityProgram =
      gpu::loadProgram({"lightmap_shoot_hemisphere.vert", "lightmap_shoot_hemisphere.frag"});
  const gpu::Program selectProgram = gpu::loadProgram({"lightmap_shoot_select.comp"});
  const gpu::Program selectFinalProgram = gpu::loadProgram({"lightmap_shoot_select.comp"}, {"FINAL_STAGE"});
  const gpu::Program updateProgram = gpu::loadProgram({"lightmap_shoot_update.comp"});
  const gpu::Program zeroProgram = gpu::loadProgram({"lightmap_shoot_zero.comp"});
  // Clip the visibility pass at a near plane just above the shooter (its own plane stays out)
  // and beyond the scene; the depth test's absolute slack is of the same order.
  const float nearPlane = 1e-5f * diagonal;
  const float farPlane = 2.0f * diagonal;
  const float depthEpsilon = 1e-4f * diagonal;
  glProgramUniform2f(visibilityProgram.id(), kUniformNearFar, nearPlane, farPlane);
  glProgramUniform1ui(updateProgram.id(), kUniformCount, GLuint(texelCount));
  glProgramUniform1f(updateProgram.id(), kUniformDepthEpsilon, depthEpsilon);
  glProgramUniform1ui(selectProgram.id(), kUniformSelectCount, GLuint(clusterCount));
  glProgramUniform1ui(selectFinalProgram.id(), kUniformSelectCount, GLuint(partialCount));

  ProgressiveResult result;
  result.clusters = clusterCount;
  result.sceneTriangles = atlas.triangleCount();
  result.visibilityTriangles = tessellated.source.size();
  result.emittedPower = emittedPower;

  std::vector<glm::vec4> readBack(texelCount);
  std::vector<glm::vec3> radiance(patches.texelCount(), glm::vec3(0.0f));
  const auto checkpoint = [&](double residualFraction) {
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    glGetNamedBufferSubData(radianceBuffer.id(), 0, GLsizeiptr(texelCount * sizeof(glm::vec4)), readBack.data());
    glm::dvec3 sum(0.0);
    for (std::size_t i = 0; i < texelCount; ++i) {
      radiance[texels[i]] = glm::vec3(readBack[i]);
      sum += glm::dvec3(readBack[i]);
    }
    ProgressiveCheckpoint stats;
    stats.shots = result.shots;
    stats.seconds = solveTime.seconds();
    stats.residualFraction = residualFraction;
    stats.meanRadiance = sum / double(texelCount);
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
    const glm::mat3 toShooter = shooterFrame(clusters.normal[c]);  // uploaded column-major, as GLSL reads it
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer.id());
    const float clearDistance[4] = {1e30f, -1.0f, 0.0f, 0.0f};
    glClearNamedFramebufferfv(framebuffer.id(), GL_COLOR, 0, clearDistance);
    glClearNamedFramebufferfi(framebuffer.id(), GL_DEPTH_STENCIL, 0, 1.0f, 0);
    glViewport(0, 0, resolution, resolution);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDisable(GL_CULL_FACE);
    visibilityProgram.use();
    glProgramUniform3fv(visibilityProgram.id(), kUniformShooter, 1, &shooter.x);
    glProgramUniformMatrix3fv(visibilityProgram.id(), kUniformToShooter, 1, GL_FALSE, &toShooter[0][0]);
    glBindVertexArray(visibilityArray.id());
    glDrawArrays(GL_TRIANGLES, 0, GLsizei(visibilityVertices.size()));
    glBindVertexArray(0);
    glDisable(GL_DEPTH_TEST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);

    // 3. Every receiver in one pass, then the shooter's residual is zeroed.
    updateProgram.use();
    glProgramUniform3fv(updateProgram.id(), kUniformShooter, 1, &shooter.x);
    glProgramUniformMatrix3fv(updateProgram.id(), kUniformToShooter, 1, GL_FALSE, &toShooter[0][0]);
    glProgramUniform1f(updateProgram.id(), kUniformArea, clusters.area[c]);
    glProgramUniform1f(updateProgram.id(), kUniformNearRadius, kNearFieldSides * std::sqrt(clusters.area[c]));
    glBindTextureUnit(0, hemisphere.id());
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

  Lightmap& lightmap = result.lightmap;
  lightmap.atlasOptions.texelsPerUnit = atlas.texelsPerUnit;
  lightmap.width = atlas.width;
  lightmap.height = atlas.height;
  lightmap.radiance = std::move(radiance);
  lightmap.method = "progressive";
  lightmap.settingsJson = progressiveSettingsJson(options);
  lightmap.sceneFingerprint = scene.fingerprint();
  result.seconds = solveTime.seconds();
  return result;
}

}  // namespace ibrr::lightmap
