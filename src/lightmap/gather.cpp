#include "lightmap/gather.hpp"

#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/resources.hpp"
#include "lightmap/gather_hemicubes.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>

namespace ibrr::lightmap {
namespace {

constexpr int kMaxHemicubeResolution = 1024;

void requireEvenResolution(int resolution, const char* flag) {
  if (resolution < 2 || resolution % 2 != 0 || resolution > kMaxHemicubeResolution)
    throw Error(std::string(flag) + " " + std::to_string(resolution) +
                ": the hemicube resolution must be even and in [2, " + std::to_string(kMaxHemicubeResolution) + "]");
}

// A width × height RGBA32F texture holding `texels`.
gpu::Texture uploadTexels(int width, int height, const std::vector<glm::vec4>& texels) {
  gpu::Texture texture(GL_RGBA32F, width, height);
  glTextureSubImage2D(texture.id(), 0, 0, 0, width, height, GL_RGBA, GL_FLOAT, texels.data());
  return texture;
}

}  // namespace

void validateGatherOptions(const GatherOptions& options) {
  requireEvenResolution(options.hemicubeResolution, "--hemicube");
  if (options.indirectHemicubeResolution != 0) {
    requireEvenResolution(options.indirectHemicubeResolution, "--indirect-hemicube");
    if (options.indirectHemicubeResolution > options.hemicubeResolution)
      throw OptionError("--indirect-hemicube " + std::to_string(options.indirectHemicubeResolution) + " exceeds --hemicube " +
                  std::to_string(options.hemicubeResolution) +
                  ": the later gathers see only reflected light and need no finer hemicube than the first");
  }
  if (options.layersPerBatch < 0 || options.layersPerBatch > 2048)
    throw OptionError("--layers " + std::to_string(options.layersPerBatch) +
                ": hemicubes per batch must be in [1, 2048], or 0 for automatic");
  if (options.maxIterations < 1 || options.maxIterations > 100000)
    throw OptionError("--iterations " + std::to_string(options.maxIterations) + ": give at least 1 iteration");
  if (!(options.tolerance >= 0.0) || !std::isfinite(options.tolerance))
    throw OptionError("--tolerance " + std::to_string(options.tolerance) + ": give a relative change ≥ 0 (e.g. 0.01)");
  if (!(options.timeBudgetSeconds >= 0.0) || !std::isfinite(options.timeBudgetSeconds))
    throw OptionError("--time-budget " + std::to_string(options.timeBudgetSeconds) + ": give seconds ≥ 0 (0 = none)");
}

int automaticLayersPerBatch(int resolution, bool softwareRenderer) {
  // Bytes per layer: H × 3H pixels of RGBA32F colour (16 B) and 32-bit depth (4 B).
  const double layerBytes = 20.0 * 3.0 * double(resolution) * double(resolution);
  const double budget = (softwareRenderer ? 4.0 : 96.0) * 1024.0 * 1024.0;
  return std::clamp(int(budget / layerBytes), 4, 256);
}

std::string gatherSettingsJson(const GatherOptions& options, int layersPerBatch) {
  nlohmann::json json = {
      {"hemicube", options.hemicubeResolution},
      {"indirect_hemicube",
       options.indirectHemicubeResolution == 0 ? options.hemicubeResolution : options.indirectHemicubeResolution},
      {"layers", layersPerBatch},
      {"iterations", options.maxIterations},
      {"tolerance", options.tolerance},
      {"time_budget_s", options.timeBudgetSeconds},
      {"seed", options.seed},
      {"random_rotation", options.randomRotation}};
  return json.dump();
}

void checkGatherScene(const scene::Scene& scene) {
  if (!scene.pointLights.empty() || !scene.spotLights.empty())
    throw Error(scene.sourcePath.string() +
                ": the gathering solver lights the scene through emissive surfaces only (texels of the "
                "lightmap); replace its point and spot lights by quad lights or emissive materials");
  if (scene.emitters().empty())
    throw Error(scene.sourcePath.string() +
                ": the gathering solver needs emissive surfaces (an emissive material, Ke, or a quad light in "
                "the manifest)");
}

std::vector<std::uint32_t> validTexels(const PatchList& patches) {
  std::vector<std::uint32_t> texels;
  for (std::size_t i = 0; i < patches.texelCount(); ++i)
    if (patches.valid[i]) texels.push_back(std::uint32_t(i));
  return texels;
}

std::vector<std::uint32_t> solverTexels(const LightmapAtlas& atlas, const PatchList& patches) {
  if (patches.width != atlas.width || patches.height != atlas.height)
    throw Error("the patch list (" + std::to_string(patches.width) + "×" + std::to_string(patches.height) +
                ") does not belong to the atlas (" + std::to_string(atlas.width) + "×" + std::to_string(atlas.height) +
                ")");
  const std::vector<std::uint32_t> texels = validTexels(patches);
  if (texels.empty()) throw Error("the lightmap atlas has no valid texel to solve for");
  return texels;
}

namespace {

// One gather over every texel, in batches of `layers` hemicubes, each rendered through `seen` and reduced onto
// `base` into `next`; `onBatch(count)` after each. At most two batches are in flight: before submitting batch
// k + 1 it waits for batch k − 1 (an unbounded queue of seconds of GPU work made the NVIDIA driver return a
// stale lightmap).
void gatherAllTexels(GatherHemicubeRenderer& renderer, GatherReduction& reduction, std::size_t texelCount, int layers,
                     int resolution, GLuint seen, GLuint base, GLuint next, const std::function<void(int)>& onBatch) {
  gpu::Fence previousBatch;
  for (std::size_t first = 0; first < texelCount; first += std::size_t(layers)) {
    throwIfInterrupted();
    const int count = int(std::min<std::size_t>(std::size_t(layers), texelCount - first));
    renderer.render(first, count, resolution, seen);
    reduction.reduce(renderer.arrayTexture(), first, count, resolution, base, next);
    gpu::Fence batch = gpu::Fence::afterCommandsSoFar();
    previousBatch.wait();
    previousBatch = std::move(batch);
    onBatch(count);
  }
  previousBatch.wait();
}

// Takes the read-back iterate into `radiance` and returns the largest change against the previous one, relative
// to a floor of 1% of the mean radiance (`mean`, set here).
double takeIterate(const std::vector<glm::vec4>& readBack, const std::vector<std::uint32_t>& texels,
                   std::vector<glm::vec3>& radiance, glm::dvec3& mean) {
  glm::dvec3 sum(0.0);
  for (const std::uint32_t t : texels) sum += glm::dvec3(readBack[t]);
  mean = sum / double(texels.size());
  const double floor = 1e-2 * std::max({mean.x, mean.y, mean.z, 1e-30});
  double maxChange = 0.0;
  for (const std::uint32_t t : texels) {
    const glm::vec3 now(readBack[t]);
    for (int c = 0; c < 3; ++c)
      maxChange = std::max(
          maxChange, std::abs(double(now[c]) - double(radiance[t][c])) / std::max(std::abs(double(now[c])), floor));
    radiance[t] = now;
  }
  return maxChange;
}

}  // namespace

GatherResult solveGather(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                         const GatherOptions& options, const GatherIterationCallback& onIteration,
                         const ProgressObserver& onProgress) {
  validateGatherOptions(options);
  const Stopwatch solveTime;
  checkGatherScene(scene);
  const std::vector<std::uint32_t> texels = solverTexels(atlas, patches);

  const int firstResolution = options.hemicubeResolution;
  const int laterResolution =
      options.indirectHemicubeResolution == 0 ? firstResolution : options.indirectHemicubeResolution;
  const bool splitDirect = laterResolution != firstResolution;
  gpu::ContextInfo gpuInfo;
  gpuInfo.renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const int layers = options.layersPerBatch > 0 ? options.layersPerBatch
                                                : automaticLayersPerBatch(firstResolution, gpuInfo.isSoftware());

  gpu::DebugGroup group("gathering solver");
  const GatherHemicubeSetup setup = defaultHemicubeSetup(scene, atlas, options.seed, options.randomRotation);
  GatherHemicubeRenderer renderer(atlas, patches, texels, setup, firstResolution, layers, GatherTarget::Radiance);
  GatherReduction reduction(patches, texels);

  const int width = atlas.width;
  const int height = atlas.height;
  const std::size_t texelCount = patches.texelCount();
  const std::vector<std::int32_t> seenTexel = seenTexelMap(patches);
  // L_e per texel (alpha 1 on valid texels): the base of the first gather.
  std::vector<glm::vec4> texels4(texelCount, glm::vec4(0.0f));
  for (const std::uint32_t t : texels) texels4[t] = glm::vec4(patches.emission[t], 1.0f);
  const gpu::Texture emission = uploadTexels(width, height, texels4);
  gpu::Texture seen(GL_RGBA32F, width, height);              // what the hemicubes see through each texel
  gpu::Texture next = uploadTexels(width, height, texels4);  // L_k, written by the reductions
  gpu::Texture direct;                                       // L_e + D, kept after the first gather when h ≠ H
  if (splitDirect) direct = gpu::Texture(GL_RGBA32F, width, height);

  std::vector<glm::vec3> radiance(texelCount, glm::vec3(0.0f));  // L_k on the CPU; L_0 = L_e
  for (const std::uint32_t t : texels) radiance[t] = patches.emission[t];
  std::vector<glm::vec4>& readBack = texels4;

  GatherResult result;
  result.hemicubesPerIteration = texels.size();
  result.layersPerBatch = layers;
  const std::uint64_t plannedHemicubes = std::uint64_t(texels.size()) * std::uint64_t(options.maxIterations);
  std::uint64_t hemicubesDone = 0;
  for (int iteration = 1; iteration <= options.maxIterations; ++iteration) {
    const Stopwatch iterationTime;
    const bool later = iteration > 1;
    const int resolution = later ? laterResolution : firstResolution;
    // Later gathers of the split scheme see reflected light only (L_k − L_e) onto the base L_e + D.
    const bool reflectedOnly = later && splitDirect;
    for (std::size_t t = 0; t < texelCount; ++t) {
      const std::int32_t s = seenTexel[t];
      const glm::vec3 value =
          s < 0 ? glm::vec3(0.0f)
                : radiance[std::size_t(s)] - (reflectedOnly ? patches.emission[std::size_t(s)] : glm::vec3(0.0f));
      readBack[t] = glm::vec4(value, 1.0f);
    }
    glTextureSubImage2D(seen.id(), 0, 0, 0, width, height, GL_RGBA, GL_FLOAT, readBack.data());
    const GLuint base = reflectedOnly ? direct.id() : emission.id();
    gatherAllTexels(renderer, reduction, texels.size(), layers, resolution, seen.id(), base, next.id(), [&](int count) {
      hemicubesDone += std::uint64_t(count);
      if (onProgress) onProgress({"gather", hemicubesDone, plannedHemicubes, "hemicubes", {}});
    });
    glMemoryBarrier(GL_ALL_BARRIER_BITS);
    if (iteration == 1 && splitDirect)
      glCopyImageSubData(next.id(), GL_TEXTURE_2D, 0, 0, 0, 0, direct.id(), GL_TEXTURE_2D, 0, 0, 0, 0, width, height,
                         1);
    // Every valid texel of `next` has alpha 1; a read-back that leaves the marker 0 did not happen.
    for (glm::vec4& texel : readBack) texel.a = 0.0f;
    glGetTextureImage(next.id(), 0, GL_RGBA, GL_FLOAT, GLsizei(readBack.size() * sizeof(glm::vec4)), readBack.data());
    gpu::checkGlError("the gathering solver");
    if (glGetGraphicsResetStatus() != GL_NO_ERROR || readBack[texels.front()].a != 1.0f)
      throw Error(
          "the GPU lost the lightmap during the gathering solver (context reset or failed read-back); "
          "try fewer --layers per batch");

    glm::dvec3 mean(0.0);
    const double maxChange = takeIterate(readBack, texels, radiance, mean);
    GatherIterationStats stats;
    stats.iteration = iteration;
    stats.hemicubeResolution = resolution;
    stats.iterationSeconds = iterationTime.seconds();
    stats.seconds = solveTime.seconds();
    stats.maxRelativeChange = maxChange;
    stats.meanRadiance = mean;
    result.iterations.push_back(stats);
    if (onIteration) onIteration(stats, radiance);
    if (options.tolerance > 0.0 && maxChange < options.tolerance) break;
    if (options.timeBudgetSeconds > 0.0 && stats.seconds >= options.timeBudgetSeconds) break;
  }

  result.lightmap = solvedLightmap(scene, atlas, std::move(radiance), "gather", gatherSettingsJson(options, layers));
  result.seconds = solveTime.seconds();
  return result;
}

}  // namespace ibrr::lightmap
