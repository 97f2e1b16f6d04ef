#include "bake/direct_light.hpp"

#include "bake/layer_points.hpp"
#include "ibrr/error.hpp"
#include "rays/sampler.hpp"
#include "rays/warp.hpp"
#include "util/stopwatch.hpp"

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cmath>
#include <optional>

namespace ibrr::bake {
namespace {

constexpr std::uint32_t kDirectStream = 0x44495243U;  // "DIRC"

// The irradiance at surface point x from light `light`; point k of the layer's points, whose light samples are
// numbers k·S .. k·S + S − 1 of the layer's Sobol set for that light (S = samplesPerLight).
glm::vec3 lightIrradiance(const rays::EmbreeScene& embree, const rays::LightSet& lights, std::uint32_t light,
                          const rays::SurfacePoint& x, std::uint32_t k, std::uint32_t layerStream,
                          const DirectLightOptions& options, std::uint64_t& rays) {
  const scene::Scene& scene = embree.scene();
  const std::uint32_t local = lights.localIndex(light);
  // I(ω)·cosθx/r² for a point or spot light at `position`, with its shadow ray.
  auto deltaLight = [&](const glm::vec3& position, auto intensityTowards) {
    const glm::vec3 toLight = position - x.position;
    const float r2 = glm::dot(toLight, toLight);
    if (!(r2 > 0.0f)) return glm::vec3(0.0f);
    const glm::vec3 omega = toLight / std::sqrt(r2);
    const float cosX = glm::dot(x.shadingNormal, omega);
    if (!(cosX > 0.0f) || glm::dot(x.geometricNormal, omega) <= 0.0f) return glm::vec3(0.0f);
    const glm::vec3 intensity = intensityTowards(-omega);
    if (!glm::any(glm::greaterThan(intensity, glm::vec3(0.0f)))) return glm::vec3(0.0f);
    ++rays;
    return embree.visibleLight(embree.offsetOrigin(x, toLight), position, glm::vec3(0.0f)) ? intensity * (cosX / r2)
                                                                                           : glm::vec3(0.0f);
  };
  switch (lights.kind(light)) {
    case rays::LightKind::Point: {
      const scene::PointLight& point = scene.pointLights[local];
      return deltaLight(point.position, [&](const glm::vec3&) { return point.intensity; });
    }
    case rays::LightKind::Spot: {
      const scene::SpotLight& spot = scene.spotLights[local];
      const glm::vec3 axis = glm::normalize(spot.direction);
      return deltaLight(spot.position, [&](const glm::vec3& away) {
        return spot.intensity * rays::spotProfile(spot, glm::dot(axis, away));
      });
    }
    case rays::LightKind::Triangle:
      break;
  }
  // An emissive triangle: Σ_s L_e cosθx cosθy / r² · A / S over uniform points y_s on it (pdf 1/A).
  const scene::EmissiveTriangle& emitter = scene.emitters()[local];
  const std::uint32_t stream = rays::hashCombine(layerStream, light);
  glm::vec3 sum(0.0f);
  for (std::uint32_t s = 0; s < options.samplesPerLight; ++s) {
    const glm::vec2 b = rays::squareToTriangleBarycentrics(rays::sobolPair(k * options.samplesPerLight + s, stream, 0));
    const glm::vec3 y = b.x * emitter.v0 + b.y * emitter.v1 + (1.0f - b.x - b.y) * emitter.v2;
    const glm::vec3 toLight = y - x.position;
    const float r2 = glm::dot(toLight, toLight);
    if (!(r2 > 0.0f)) continue;
    const glm::vec3 omega = toLight / std::sqrt(r2);
    const float cosX = glm::dot(x.shadingNormal, omega);
    const float cosY = -glm::dot(emitter.normal, omega);
    if (!(cosX > 0.0f) || !(cosY > 0.0f) || glm::dot(x.geometricNormal, omega) <= 0.0f) continue;
    ++rays;
    if (embree.visibleLight(embree.offsetOrigin(x, toLight), y, emitter.normal)) sum += glm::vec3(cosX * cosY / r2);
  }
  return emitter.radiance * sum * (emitter.area / float(options.samplesPerLight));
}

// E of one layer: the mean over its points that found the surface; `foundSurface` false when none did.
glm::vec3 layerDirectLight(const rays::EmbreeScene& embree, const rays::LightSet& lights, const LayeredDepthCube& store,
                           std::uint32_t pixel, std::uint32_t layerIndex, const DirectLightOptions& options,
                           std::uint64_t& rays, bool& foundSurface) {
  const std::uint32_t stream = rays::hashCombine(rays::hashCombine(kDirectStream, options.seed), layerIndex);
  glm::vec3 sum(0.0f);
  std::uint32_t found = 0;
  for (std::uint32_t k = 0; k < options.points; ++k) {
    const glm::vec2 jitter = rays::sobolPair(k, stream, 0);
    const std::optional<rays::SurfacePoint> x = layerSurfacePoint(embree, store, pixel, layerIndex, jitter, rays);
    if (!x) continue;
    ++found;
    for (std::uint32_t light = 0; light < lights.size(); ++light)
      sum += lightIrradiance(embree, lights, light, *x, k, stream, options, rays);
  }
  foundSurface = found > 0;
  return found > 0 ? sum / float(found) : glm::vec3(0.0f);
}

}  // namespace

std::vector<glm::vec3> directLightPerLayer(const LayeredDepthCube& store, const rays::EmbreeScene& embree,
                                           const rays::LightSet& lights, const DirectLightOptions& options,
                                           DirectLightStats& stats, const ProgressObserver& progress) {
  IBRR_CHECK(options.points > 0 && options.samplesPerLight > 0, "the direct light needs points and samples");
  const Stopwatch time;
  std::vector<glm::vec3> direct(store.layers().size(), glm::vec3(0.0f));
  tbb::combinable<std::uint64_t> rays([] { return std::uint64_t{0}; });
  std::atomic<std::uint64_t> withoutSurface{0}, done{0};
  const std::span<const std::uint32_t> offsets = store.offsets();
  const std::uint64_t total = store.layers().size();
  tbb::parallel_for(tbb::blocked_range<std::uint32_t>(0, store.frame().pixelCount(), 256),
                    [&](const tbb::blocked_range<std::uint32_t>& range) {
                      if (interruptRequested()) return;
                      std::uint64_t& localRays = rays.local();
                      std::uint64_t count = 0;
                      for (std::uint32_t pixel = range.begin(); pixel != range.end(); ++pixel)
                        for (std::uint32_t k = offsets[pixel]; k < offsets[pixel + 1]; ++k, ++count) {
                          bool found = false;
                          direct[k] = layerDirectLight(embree, lights, store, pixel, k, options, localRays, found);
                          if (!found) withoutSurface.fetch_add(1, std::memory_order_relaxed);
                        }
                      if (count == 0) return;
                      const std::uint64_t now = done.fetch_add(count) + count;
                      if (progress) progress({kDirectLightPhase, now, total, "layers", {}});
                    });
  throwIfInterrupted();
  stats.rays += rays.combine(std::plus<>());
  stats.layersWithoutSurface = withoutSurface.load();
  stats.seconds = time.seconds();
  return direct;
}

}  // namespace ibrr::bake
