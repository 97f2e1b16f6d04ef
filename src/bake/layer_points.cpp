#include "bake/layer_points.hpp"

#include "ibrr/octahedral.hpp"
#include "util/progress.hpp"

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <atomic>

#include <cmath>

namespace ibrr::bake {

std::optional<rays::SurfacePoint> surfaceUnder(const rays::EmbreeScene& embree, const glm::vec3& point,
                                               const glm::vec3& normal, float reach, float minCos,
                                               std::uint64_t& rays) {
  rays::Ray probe;
  probe.origin = point + reach * normal;
  probe.direction = -normal;
  probe.tFar = 2.0f * reach;
  ++rays;
  const rays::Hit hit = embree.intersect(probe);
  if (!hit.valid()) return std::nullopt;
  rays::SurfacePoint surface = embree.surface(probe, hit);
  if (!surface.frontFacing) {  // the back side's: work with that side's normals
    surface.geometricNormal = -surface.geometricNormal;
    surface.shadingNormal = -surface.shadingNormal;
    surface.frontFacing = true;
  }
  if (glm::dot(surface.shadingNormal, normal) <= minCos) return std::nullopt;
  return surface;
}

std::optional<rays::SurfacePoint> layerSurfacePoint(const rays::EmbreeScene& embree, const LayeredDepthCube& store,
                                                    std::uint32_t pixel, std::uint32_t layerIndex,
                                                    const glm::vec2& jitter, std::uint64_t& rays) {
  const LdcFrame& frame = store.frame();
  const PackedLayer& layer = store.layers()[layerIndex];
  const glm::vec3 planeNormal = octDecode(layer.normal);
  const int ldi = int(pixel / frame.pixelsPerLdi());
  const std::uint32_t inLdi = pixel % frame.pixelsPerLdi();
  const int i = int(inLdi % std::uint32_t(frame.resolution()));
  const int j = int(inLdi / std::uint32_t(frame.resolution()));
  const int u = ldiAxisU(ldi);
  const int v = ldiAxisV(ldi);
  glm::vec3 onPlane(0.0f);
  onPlane[u] = frame.origin()[u] + (float(i) + jitter.x) * frame.pixelSize();
  onPlane[v] = frame.origin()[v] + (float(j) + jitter.y) * frame.pixelSize();
  onPlane[ldi] = (layer.d - planeNormal[u] * onPlane[u] - planeNormal[v] * onPlane[v]) / planeNormal[ldi];
  const LdcParams& params = store.params();
  std::optional<rays::SurfacePoint> x =
      surfaceUnder(embree, onPlane, planeNormal, params.epsDistance, 1.0f - params.epsNormal, rays);
  if (!x || std::fabs(glm::dot(x->position, planeNormal) - layer.d) >= params.epsDistance) return std::nullopt;
  return x;
}

PerLayerValues estimatePerLayer(const LayeredDepthCube& store, std::uint32_t firstPixel, std::uint32_t endPixel,
                                const LayerEstimate& estimate, const std::function<void(std::uint64_t)>& advance) {
  PerLayerValues result;
  result.values.assign(store.layers().size(), glm::vec3(0.0f));
  tbb::combinable<std::uint64_t> rays([] { return std::uint64_t{0}; });
  std::atomic<std::uint64_t> withoutSurface{0};
  const std::span<const std::uint32_t> offsets = store.offsets();
  tbb::parallel_for(tbb::blocked_range<std::uint32_t>(firstPixel, endPixel, 256),
                    [&](const tbb::blocked_range<std::uint32_t>& range) {
                      if (interruptRequested()) return;
                      std::uint64_t& localRays = rays.local();
                      std::uint64_t done = 0;
                      for (std::uint32_t pixel = range.begin(); pixel != range.end(); ++pixel)
                        for (std::uint32_t k = offsets[pixel]; k < offsets[pixel + 1]; ++k, ++done) {
                          bool found = false;
                          result.values[k] = estimate(pixel, k, localRays, found);
                          if (!found) withoutSurface.fetch_add(1, std::memory_order_relaxed);
                        }
                      if (done > 0 && advance) advance(done);
                    });
  throwIfInterrupted();
  result.rays = rays.combine(std::plus<>());
  result.layersWithoutSurface = withoutSurface.load();
  return result;
}

namespace {

// `store` with every layer's radiosity set to combine(its radiosity, values[k]).
template <class Combine>
LayeredDepthCube withCombinedRadiosity(const LayeredDepthCube& store, const std::vector<glm::vec3>& values,
                                       Combine&& combine) {
  std::vector<PackedLayer> layers(store.layers().begin(), store.layers().end());
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const glm::vec3 r = combine(glm::vec3(layers[k].r, layers[k].g, layers[k].b), values[k]);
    layers[k].r = r.r;
    layers[k].g = r.g;
    layers[k].b = r.b;
  }
  return LayeredDepthCube(store.params(), store.vplCount(),
                          std::vector<std::uint32_t>(store.offsets().begin(), store.offsets().end()),
                          std::move(layers));
}

}  // namespace

LayeredDepthCube withAddedRadiosity(const LayeredDepthCube& store, const std::vector<glm::vec3>& added) {
  return withCombinedRadiosity(store, added, [](const glm::vec3& own, const glm::vec3& add) { return own + add; });
}

LayeredDepthCube withRadiosity(const LayeredDepthCube& store, const std::vector<glm::vec3>& values) {
  return withCombinedRadiosity(store, values, [](const glm::vec3&, const glm::vec3& value) { return value; });
}

}  // namespace ibrr::bake
