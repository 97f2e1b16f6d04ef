#include "rays/rays_bench.hpp"

#include "rays/embree_scene.hpp"
#include "rays/reference.hpp"
#include "rays/sampler.hpp"
#include "rays/warp.hpp"
#include "scene/load.hpp"

#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace ibrr::rays {

namespace {

// Incoherent rays: origins uniform in the scene bounds (shrunk a little), directions uniform on
// the sphere; occlusion rays end after a quarter of the scene's diagonal.
std::vector<Ray> randomRays(const scene::Scene& scene, std::uint32_t count, bool finite) {
  const scene::Bounds& bounds = scene.bounds();
  const glm::vec3 lo = bounds.min + 0.05f * bounds.extent();
  const glm::vec3 size = 0.9f * bounds.extent();
  std::vector<Ray> rays(count);
  tbb::parallel_for(std::uint32_t(0), count, [&](std::uint32_t i) {
    const glm::vec2 a = sobolPair(i, 17, 0), b = sobolPair(i, 17, 1);
    Ray& ray = rays[i];
    ray.origin = lo + glm::vec3(a.x, a.y, b.x) * size;
    ray.direction = squareToUniformSphere(sobolPair(i, 17, 2));
    ray.tFar = finite ? 0.25f * bounds.diagonal() : kInfinity;
  });
  return rays;
}

struct Throughput {
  double single = 0.0;  // rays/s, one ray at a time
  double stream = 0.0;  // rays/s, rtcIntersect1M / rtcOccluded1M in chunks
};

Throughput measure(const EmbreeScene& embree, const std::vector<Ray>& rays, bool occlusion) {
  constexpr std::size_t kChunk = 4096;
  std::atomic<std::uint64_t> sink{0};
  auto time = [&](auto&& body) {
    const auto start = std::chrono::steady_clock::now();
    tbb::parallel_for(std::size_t(0), (rays.size() + kChunk - 1) / kChunk, body);
    return double(rays.size()) / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  Throughput result;
  result.single = time([&](std::size_t chunk) {
    std::uint64_t hits = 0;
    const std::size_t end = std::min(rays.size(), (chunk + 1) * kChunk);
    for (std::size_t i = chunk * kChunk; i < end; ++i)
      hits += occlusion ? std::uint64_t(embree.occluded(rays[i])) : std::uint64_t(embree.intersect(rays[i]).valid());
    sink += hits;
  });
  result.stream = time([&](std::size_t chunk) {
    const std::size_t begin = chunk * kChunk, end = std::min(rays.size(), (chunk + 1) * kChunk);
    std::span<const Ray> slice(rays.data() + begin, end - begin);
    if (occlusion) {
      std::vector<std::uint8_t> blocked(slice.size());
      embree.occluded(slice, blocked);
      std::uint64_t hits = 0;
      for (std::uint8_t b : blocked) hits += b;
      sink += hits;
    } else {
      std::vector<Hit> hits(slice.size());
      embree.intersect(slice, hits);
      sink += hits.size();
    }
  });
  return result;
}

void printThroughput(std::ostream& out, const char* what, const EmbreeScene& embree, const std::vector<Ray>& closest,
                     const std::vector<Ray>& shadow) {
  char line[256];
  const Throughput hit = measure(embree, closest, false);
  const Throughput occ = measure(embree, shadow, true);
  std::snprintf(line, sizeof line,
                "  %-10s closest hit %7.2f Mrays/s (stream %7.2f)   occlusion %7.2f Mrays/s (stream %7.2f)\n",
                what, hit.single * 1e-6, hit.stream * 1e-6, occ.single * 1e-6, occ.stream * 1e-6);
  out << line;
}

}  // namespace

int runRaysBenchmark(std::ostream& out) { return runRaysBenchmark(out, RaysBenchOptions{}); }

int runRaysBenchmark(std::ostream& out, const RaysBenchOptions& options) {
  const scene::Scene cornell = scene::loadScene(scene::resolveScenePath("cornell"));
  const EmbreeScene embree(cornell);
  const int threads = tbb::info::default_concurrency();
  char line[256];
  std::snprintf(line, sizeof line, "rays: Cornell box, %zu triangles, BVH built in %.2f ms; %d threads\n",
                embree.triangleCount(), embree.buildSeconds() * 1e3, threads);
  out << line;

  const std::vector<Ray> closest = randomRays(cornell, options.rayCount, false);
  const std::vector<Ray> shadow = randomRays(cornell, options.rayCount, true);
  tbb::task_arena one(1);
  one.execute([&] { printThroughput(out, "1 thread", embree, closest, shadow); });
  printThroughput(out, (std::to_string(threads) + " threads").c_str(), embree, closest, shadow);

  ReferenceOptions reference;
  reference.width = reference.height = options.referenceSize;
  reference.spp = options.referenceSpp;
  reference.showProgress = false;
  const ReferenceImage image = renderReference(embree, reference);
  std::snprintf(line, sizeof line, "reference: Cornell %dx%d at %u spp in %.1f s (%.2f Mrays/s, %d threads)\n",
                reference.width, reference.height, image.spp, image.seconds, image.raysPerSecond() * 1e-6, threads);
  out << line;

  if (options.convergence) {
    ReferenceOptions more = reference;
    more.spp = reference.spp * 4;
    more.seed = 1;
    const ReferenceImage high = renderReference(embree, more);
    // relRMSE between the two and what independent errors of variance v1 + v4 would give.
    double squaredError = 0.0, squaredReference = 0.0, predicted = 0.0, predictedLow = 0.0, predictedHigh = 0.0;
    for (std::size_t i = 0; i < image.radiance.pixels.size(); ++i) {
      const glm::dvec3 d = glm::dvec3(image.radiance.pixels[i]) - glm::dvec3(high.radiance.pixels[i]);
      squaredError += glm::dot(d, d);
      squaredReference += glm::dot(glm::dvec3(high.radiance.pixels[i]), glm::dvec3(high.radiance.pixels[i]));
      const glm::dvec3 vl(image.variance.pixels[i]), vh(high.variance.pixels[i]);
      predicted += vl.r + vl.g + vl.b + vh.r + vh.g + vh.b;
      predictedLow += vl.r + vl.g + vl.b;
      predictedHigh += vh.r + vh.g + vh.b;
    }
    std::snprintf(line, sizeof line,
                  "convergence: %u vs %u spp relRMSE %.5f (predicted by the variance estimates %.5f); "
                  "estimated relRMSE of each: %.5f and %.5f, ratio %.3f (1/sqrt(spp) says 2)\n",
                  image.spp, high.spp, std::sqrt(squaredError / squaredReference),
                  std::sqrt(predicted / squaredReference), std::sqrt(predictedLow / squaredReference),
                  std::sqrt(predictedHigh / squaredReference), std::sqrt(predictedLow / predictedHigh));
    out << line;
  }
  return 0;
}

}  // namespace ibrr::rays
