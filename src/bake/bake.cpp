#include "bake/bake.hpp"

#include "bake/hemicube.hpp"
#include "gpu/scene_renderer.hpp"
#include "ibrr/hemicube_samples.hpp"
#include "ibrr/ldc_builder.hpp"
#include "ibrr/surface_seeds.hpp"
#include "rays/embree_scene.hpp"
#include "rays/vpl.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <glm/gtc/constants.hpp>

#include <cmath>
#include <memory>

namespace ibrr::bake {
namespace {

// A batch of read-back hemicubes waiting to be warped together (more parallel work per insertion).
struct Batch {
  std::vector<HemicubeCapture> captures;
  std::vector<glm::vec3> powers;  // Φ of each capture's VPL
  std::size_t used = 0;
  std::size_t pixels = 0;
  void clear() {
    used = 0;
    pixels = 0;
  }
};

// Seeds the builder's layers from every triangle of the scene (ibrr/surface_seeds.hpp), a slice of
// triangles at a time so the seed samples never take much memory.
void seedLayersFromGeometry(const scene::Scene& scene, LdcBuilder& builder) {
  constexpr std::size_t kTrianglesPerSlice = 1u << 18;
  std::vector<SeedTriangle> slice;
  slice.reserve(kTrianglesPerSlice);
  HemicubeSamples seeds;
  auto flush = [&] {
    seeds.clear();
    appendSurfaceSeeds(builder.frame(), slice, seeds);
    builder.seedLayers(seeds.view());
    slice.clear();
  };
  for (const scene::MeshInstance& instance : scene.instances) {
    const scene::TriangleMesh& mesh = scene.meshes[instance.mesh];
    const glm::mat3 normalToWorld = glm::transpose(glm::inverse(glm::mat3(instance.objectToWorld)));
    const bool hasNormals = mesh.normals.size() == mesh.positions.size();
    for (const glm::uvec3& t : mesh.triangles) {
      SeedTriangle& tri = slice.emplace_back();
      for (int k = 0; k < 3; ++k) {
        tri.positions[k] = glm::vec3(instance.objectToWorld * glm::vec4(mesh.positions[t[k]], 1.0f));
        tri.normals[k] = hasNormals ? normalToWorld * mesh.normals[t[k]] : glm::vec3(0.0f);
      }
      if (slice.size() == kTrianglesPerSlice) flush();
    }
  }
  if (!slice.empty()) flush();
}

constexpr std::size_t kBatchPixels = 1u << 20;  // flush a batch at about a million hemicube pixels
constexpr std::size_t kBatchHemicubes = 64;

// Covered atlas pixels of one capture → store samples: value Φ·g (g clamped if asked), footprint
// A = dω·r²/cosθx from the pixel's solid angle (ibrr::footprintArea).
void captureToSamples(const HemicubeCapture& capture, const glm::vec3& power, float geometryClamp,
                      HemicubeSamples& samples) {
  samples.clear();
  samples.centre = capture.centre;
  const int width = capture.width();
  for (const HemicubeFace& face : capture.faces) {
    for (int row = 0; row < face.rows; ++row) {
      for (int x = 0; x < width; ++x) {
        const std::size_t index = std::size_t(face.firstRow + row) * width + x;
        const glm::vec4& position = capture.positions[index];
        if (position.w < 0.5f) continue;
        const glm::vec4& normalGeometry = capture.normalsGeometry[index];
        float g = normalGeometry.w;
        if (geometryClamp > 0.0f) g = std::min(g, geometryClamp);
        if (!(g > 0.0f)) continue;  // back-facing to the VPL or outside a spot's cone: no light
        const glm::vec3 p(position);
        const glm::vec3 n(normalGeometry);
        const glm::vec3 toCentre = capture.centre - p;
        const float distance = glm::length(toCentre);
        const float cosTheta = distance > 0.0f ? glm::dot(n, toCentre) / distance : 1.0f;
        const float solidAngle = atlasPixelSolidAngle(face, capture.resolution, x, row);
        samples.add(p, n, power * g, footprintArea(solidAngle, distance, cosTheta));
      }
    }
  }
}

}  // namespace

HemicubeSource hemicubeSourceFor(const rays::Vpl& vpl, const scene::Scene& scene) {
  HemicubeSource source;
  source.position = vpl.position;
  source.axis = vpl.normal;
  switch (vpl.kind) {
    case rays::VplKind::Surface:
      source.profile = EmissionProfile::LambertianSurface;
      break;
    case rays::VplKind::Point:
      source.profile = EmissionProfile::IsotropicPoint;
      break;
    case rays::VplKind::Spot: {
      source.profile = EmissionProfile::Spot;
      const scene::SpotLight& spot = scene.spotLights.at(vpl.light);
      source.spotCosInner = spot.cosInner;
      source.spotCosOuter = spot.cosOuter;
      break;
    }
  }
  return source;
}

float geometryClampFor(const scene::Scene& scene, const BakeOptions& options) {
  if (options.geometryClamp >= 0.0f) return options.geometryClamp;
  const float distance = kAutoClampDistance * std::max(scene.bounds().diagonal(), 1e-12f);
  return 1.0f / (glm::pi<float>() * distance * distance);
}

int hemicubeResolutionFor(const rays::Vpl& vpl, const BakeOptions& options) {
  return vpl.bounce == 0 ? options.hemicubeResolution : options.indirectHemicubeResolution;
}

rays::VplSet generateBakeVpls(const scene::Scene& scene, const BakeOptions& options) {
  const rays::EmbreeScene embree(scene);
  rays::VplOptions vplOptions;
  vplOptions.pathCount = options.paths;
  vplOptions.seed = options.seed;
  vplOptions.maxBounces = options.maxBounces;
  return rays::generateVpls(embree, vplOptions);
}

void validateBakeOptions(const BakeOptions& options) {
  auto even = [](int value) { return value >= 2 && value <= 4096 && value % 2 == 0; };
  if (options.paths == 0) throw Error("--paths must be at least 1");
  if (!(options.timeBudgetSeconds >= 0.0) || !std::isfinite(options.timeBudgetSeconds))
    throw Error("--budget must be a non-negative number of seconds");
  if (!even(options.hemicubeResolution))
    throw Error("--hemicube " + std::to_string(options.hemicubeResolution) + ": must be even, in [2, 4096]");
  if (!even(options.indirectHemicubeResolution))
    throw Error("--indirect-hemicube " + std::to_string(options.indirectHemicubeResolution) +
                ": must be even, in [2, 4096]");
  if (options.maxBounces > 1000) throw Error("--max-bounces must be at most 1000");
  if (!std::isfinite(options.geometryClamp)) throw Error("--clamp must be finite (0 = off, negative = automatic)");
  if (options.ldcResolution < kMinResolution || options.ldcResolution > kMaxResolution)
    throw Error("--ldc " + std::to_string(options.ldcResolution) + ": must be in [" + std::to_string(kMinResolution) +
                ", " + std::to_string(kMaxResolution) + "] (the paper used 128-512)");
}

BakeResult bakeStore(const scene::Scene& scene, const BakeOptions& options, const BakeProgress& progress,
                     const BakeCheckpoints* checkpoints) {
  validateBakeOptions(options);
  const Stopwatch bakeTime;
  BakeStats stats;

  LdcParams params;
  params.bounds = {scene.bounds().min, scene.bounds().max};
  params.resolution = options.ldcResolution;
  params.epsDistance = options.epsDistance;
  params.epsNormal = options.epsNormal;
  params.sceneFingerprint = scene.fingerprint();
  LdcBuilder builder(params, options.splat);  // validates R and ε
  if (options.seedLayersFromGeometry) {
    const Stopwatch seedTime;
    seedLayersFromGeometry(scene, builder);
    stats.seedSamples = builder.stats().seedSamples;
    stats.seedSeconds = seedTime.seconds();
  }

  // Light paths (CPU, Embree).
  const Stopwatch vplTime;
  const rays::VplSet vpls = generateBakeVpls(scene, options);
  const float geometryClamp = geometryClampFor(scene, options);
  stats.vplSeconds = vplTime.seconds();
  stats.vplsPerBounce = vpls.countPerBounce;

  const gpu::SceneRenderer renderer(scene);
  HemicubeRenderer hemicubes(renderer, scene, std::max(options.hemicubeResolution, options.indirectHemicubeResolution));

  // Two batches: the GL thread fills one while a TBB task warps the other.
  Batch batches[2];
  int filling = 0;
  tbb::task_group warpGroup;
  bool warpPending = false;
  std::vector<double> warpSeconds(2, 0.0), insertSeconds(2, 0.0);
  auto launchWarp = [&](int index) {
    Batch& batch = batches[index];
    warpGroup.run([&, index] {
      const Stopwatch warpTime;
      std::vector<HemicubeSamples> samples(batch.used);
      std::vector<HemicubeSampleView> views(batch.used);
      tbb::parallel_for(std::size_t(0), batch.used, [&](std::size_t i) {
        captureToSamples(batch.captures[i], batch.powers[i], geometryClamp, samples[i]);
        views[i] = samples[i].view();
      });
      const Stopwatch insertTime;
      builder.insert(views);
      insertSeconds[index] += insertTime.seconds();
      warpSeconds[index] += warpTime.seconds();
    });
  };
  auto waitForWarp = [&] {
    if (!warpPending) return;
    const Stopwatch waitTime;
    warpGroup.wait();
    stats.waitSeconds += waitTime.seconds();
    warpPending = false;
  };

  const std::uint64_t total = vpls.vpls.size();
  // Checkpoints and the time budget act between light paths: VPLs come in path order, so when VPL i
  // belongs to path P, paths 0 .. P−1 are complete once the batches in flight are warped.
  double checkpointSeconds = 0.0;  // spent in callbacks, left out of the bake's times
  std::size_t nextCheckpoint = 0;
  std::uint32_t pathsCompleted = options.paths;
  auto bakeSeconds = [&] { return bakeTime.seconds() - checkpointSeconds; };
  auto flushAndWait = [&] {
    if (batches[filling].used > 0) {
      waitForWarp();
      launchWarp(filling);
      warpPending = true;
      filling = 1 - filling;
      batches[filling].clear();
    }
    waitForWarp();
  };
  try {
    for (std::uint64_t i = 0; i < total; ++i) {
      throwIfInterrupted();
      const rays::Vpl& vpl = vpls.vpls[i];
      if (i > 0 && vpl.path != vpls.vpls[i - 1].path) {
        if (options.timeBudgetSeconds > 0.0 && bakeSeconds() > options.timeBudgetSeconds) {
          pathsCompleted = vpl.path;
          break;
        }
        while (checkpoints && nextCheckpoint < checkpoints->paths.size() &&
               checkpoints->paths[nextCheckpoint] <= vpl.path) {
          const std::uint32_t paths = checkpoints->paths[nextCheckpoint++];
          if (paths == 0) continue;
          flushAndWait();
          const double at = bakeSeconds();
          const Stopwatch callbackTime;
          checkpoints->onCheckpoint(scaleRadiosity(builder.finalize(), float(options.paths) / float(paths)), paths, at);
          checkpointSeconds += callbackTime.seconds();
        }
      }
      const int resolution = hemicubeResolutionFor(vpl, options);
      Batch& batch = batches[filling];
      if (batch.captures.size() <= batch.used) batch.captures.emplace_back();
      if (batch.powers.size() <= batch.used) batch.powers.emplace_back();
      HemicubeCapture& capture = batch.captures[batch.used];
      hemicubes.render(hemicubeSourceFor(vpl, scene), resolution, capture);
      batch.powers[batch.used] = vpl.power;
      ++batch.used;
      batch.pixels += capture.positions.size();
      stats.renderSeconds += hemicubes.lastRenderSeconds();
      stats.readbackSeconds += hemicubes.lastReadbackSeconds();
      stats.trianglesSubmitted += hemicubes.lastTrianglesSubmitted();
      stats.hemicubePixels += capture.positions.size();
      ++stats.hemicubes;
      if (batch.pixels >= kBatchPixels || batch.used >= kBatchHemicubes || i + 1 == total) {
        waitForWarp();  // the other batch is free again once its warp is done
        launchWarp(filling);
        warpPending = true;
        filling = 1 - filling;
        batches[filling].clear();
      }
      if (progress) progress(i + 1, total);
    }
    flushAndWait();
  } catch (...) {
    warpGroup.wait();  // never leave a task running on the builder
    throw;
  }

  stats.warpSeconds = warpSeconds[0] + warpSeconds[1];
  stats.insertSeconds = insertSeconds[0] + insertSeconds[1];
  stats.samplesInserted = builder.stats().samples - builder.stats().droppedSamples;
  stats.pathsCompleted = pathsCompleted;
  LayeredDepthCube store = builder.finalize();
  if (pathsCompleted < options.paths) {
    if (pathsCompleted == 0) throw Error("the time budget ended the bake before its first light path was done");
    store = scaleRadiosity(store, float(options.paths) / float(pathsCompleted));
  }
  BakeResult result{std::move(store), stats};
  result.stats.totalSeconds = bakeSeconds();
  return result;
}

}  // namespace ibrr::bake
