#include "bake/bias_compensation.hpp"

#include "bake/layer_points.hpp"

#include "ibrr/error.hpp"
#include "ibrr/octahedral.hpp"
#include "rays/sampler.hpp"
#include "rays/warp.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <glm/gtc/constants.hpp>
#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <vector>

namespace ibrr::bake {
namespace {

constexpr std::uint32_t kCompensationStream = 0x42434d50U;  // "BCMP"

// H_miss at one surface point x: what it reads (the scene, its lights, where H(y) comes from, the clamp) and
// the two estimators of the header.
struct Estimator {
  const rays::EmbreeScene& embree;
  const rays::LightSet& lights;
  const IrradianceSource& irradianceAt;  // H(y)
  float clamp;     // b, 1/area in scene units
  float maxRange;  // r_max = 1/√(π b): no point farther away has g > b
  bool emittedLight;  // the lights' own VPLs were clamped too; false when the direct light came from rays

  // max(0, 1 − b/g) for g = cosθx cosθy/(π r²); 0 for grazing or back-facing pairs.
  float clampedFraction(float cosX, float cosY, float distanceSquared) const {
    if (!(cosX > 0.0f && cosY > 0.0f && distanceSquared > 0.0f)) return 0.0f;
    const float g = cosX * cosY / (glm::pi<float>() * distanceSquared);
    return g > clamp ? 1.0f - clamp / g : 0.0f;
  }

  // MIS weight of the cosine ray against the light sample for the same emitter point (power heuristic).
  float emitterWeight(const rays::Hit& hit, float cosX, float cosY, float r2) const {
    const std::int64_t light = lights.emitterAt(hit.instance, hit.triangle);
    if (light < 0) return 1.0f;
    const scene::EmissiveTriangle& emitter = embree.scene().emitters()[std::size_t(light)];
    const float lightPdf = lights.probability(std::uint32_t(light)) * r2 / (emitter.area * std::max(cosY, 1e-8f));
    return rays::powerHeuristic(rays::cosineHemispherePdf(cosX), lightPdf);
  }

  // One cosine-distributed ray from x: M(y)·max(0, 1 − b/g), the emission MIS-weighted.
  glm::vec3 cosineSample(const rays::SurfacePoint& x, const glm::vec2& u, rays::SampleStream& samples,
                         std::uint64_t& rays) const {
    const glm::vec3 direction = rays::Frame(x.shadingNormal).toWorld(rays::squareToCosineHemisphere(u));
    if (glm::dot(direction, x.geometricNormal) <= 0.0f) return glm::vec3(0.0f);
    rays::Ray ray;
    ray.origin = embree.offsetOrigin(x, direction);
    ray.direction = direction;
    ray.tFar = maxRange;
    ++rays;
    const rays::Hit hit = embree.intersect(ray);
    if (!hit.valid()) return glm::vec3(0.0f);
    const rays::SurfacePoint y = embree.surface(ray, hit);
    const float side = y.frontFacing ? 1.0f : -1.0f;
    const glm::vec3 normalY = side * y.shadingNormal;
    const float cosX = glm::dot(x.shadingNormal, direction);
    const float cosY = -glm::dot(normalY, direction);
    const float r2 = hit.t * hit.t;
    const float fraction = clampedFraction(cosX, cosY, r2);
    if (fraction <= 0.0f) return glm::vec3(0.0f);
    glm::vec3 radiosityY(0.0f);  // M(y) = π·L_e + ρ·H
    if (glm::any(glm::greaterThan(y.albedo, glm::vec3(0.0f))))
      radiosityY = y.albedo * irradianceAt(y.position, normalY, samples, rays);
    if (emittedLight && y.frontFacing && glm::any(glm::greaterThan(y.emission, glm::vec3(0.0f))))
      radiosityY += glm::pi<float>() * y.emission * emitterWeight(hit, cosX, -glm::dot(y.geometricNormal, direction), r2);
    return radiosityY * fraction;
  }

  // Φ·(g − b)⁺ per channel, before visibility, for a point or spot light at `position` of power Φ whose VPLs
  // (all at the light) send x the irradiance Φ·g = I(ω)·cosθx/r²; `intensity(ω)` is I towards the unit ω
  // from the light to x. 0 when x faces away.
  template <class Intensity>
  glm::vec3 deltaLightExcess(const rays::SurfacePoint& x, const glm::vec3& position, const glm::vec3& power,
                             const Intensity& intensity) const {
    const glm::vec3 toLight = position - x.position;
    const float r2 = glm::dot(toLight, toLight);
    const glm::vec3 omega = toLight / std::sqrt(r2);
    const float cosX = glm::dot(x.shadingNormal, omega);
    if (!(cosX > 0.0f) || glm::dot(x.geometricNormal, omega) <= 0.0f) return glm::vec3(0.0f);
    return glm::max(intensity(-omega) * (cosX / r2) - power * clamp, glm::vec3(0.0f));
  }

  // One light sample: a light by power, then (emissive triangle) a uniform point on it.
  glm::vec3 lightSample(const rays::SurfacePoint& x, const glm::vec2& uLight, const glm::vec2& uPoint,
                        std::uint64_t& rays) const {
    const scene::Scene& scene = embree.scene();
    float pick = 0.0f;
    const std::uint32_t light = lights.choose(uLight.x, pick);
    const std::uint32_t local = lights.localIndex(light);
    glm::vec3 target;
    glm::vec3 lightNormal(0.0f);  // an emitter's; zero for a point or spot light
    glm::vec3 value(0.0f);  // the estimate before visibility
    switch (lights.kind(light)) {
      case rays::LightKind::Triangle: {
        const scene::EmissiveTriangle& emitter = scene.emitters()[local];
        const glm::vec2 b = rays::squareToTriangleBarycentrics(uPoint);
        target = b.x * emitter.v0 + b.y * emitter.v1 + (1.0f - b.x - b.y) * emitter.v2;
        const glm::vec3 toTarget = target - x.position;
        const float r2 = glm::dot(toTarget, toTarget);
        if (!(r2 < maxRange * maxRange)) return glm::vec3(0.0f);
        const glm::vec3 omega = toTarget / std::sqrt(r2);
        const float cosX = glm::dot(x.shadingNormal, omega);
        const float cosY = -glm::dot(emitter.normal, omega);
        if (glm::dot(x.geometricNormal, omega) <= 0.0f) return glm::vec3(0.0f);
        const float fraction = clampedFraction(cosX, cosY, r2);
        if (fraction <= 0.0f) return glm::vec3(0.0f);
        // Integrand over solid angle: π L_e · (cosθx/π) · fraction; divided by the light's pdf.
        const float lightPdf = pick * r2 / (emitter.area * cosY);
        const float weight = rays::powerHeuristic(lightPdf, rays::cosineHemispherePdf(cosX));
        value = emitter.radiance * (cosX * fraction * weight / lightPdf);
        lightNormal = emitter.normal;
        break;
      }
      case rays::LightKind::Point: {  // the bake's VPLs there emit I = Φ/(4π) in every direction
        const scene::PointLight& point = scene.pointLights[local];
        target = point.position;
        value = deltaLightExcess(x, target, 4.0f * glm::pi<float>() * point.intensity,
                                 [&](const glm::vec3&) { return point.intensity; }) / pick;
        break;
      }
      case rays::LightKind::Spot: {  // the spot's VPLs emit its profile, scaled to carry Φ = spotPower
        const scene::SpotLight& spot = scene.spotLights[local];
        target = spot.position;
        const glm::vec3 axis = glm::normalize(spot.direction);
        value = deltaLightExcess(x, target, rays::spotPower(spot), [&](const glm::vec3& towardsX) {
                  return spot.intensity * rays::spotProfile(spot, glm::dot(axis, towardsX));
                }) / pick;
        break;
      }
    }
    if (!glm::any(glm::greaterThan(value, glm::vec3(0.0f)))) return glm::vec3(0.0f);
    ++rays;
    return embree.visibleLight(embree.offsetOrigin(x, target - x.position), target, lightNormal) ? value
                                                                                              : glm::vec3(0.0f);
  }

  // H_miss at x from one cosine ray and one light sample, each drawing from `samples`.
  glm::vec3 missingAt(const rays::SurfacePoint& x, rays::SampleStream& samples, std::uint64_t& rays) const {
    const glm::vec2 uDirection = samples.next2D();
    const glm::vec2 uLight = samples.next2D();
    const glm::vec2 uPoint = samples.next2D();
    const glm::vec3 bounced = cosineSample(x, uDirection, samples, rays);
    return emittedLight ? bounced + lightSample(x, uLight, uPoint, rays) : bounced;
  }
};

// H_miss of one layer of `store` (global pixel `pixel`, index `layerIndex`): the mean over the jittered points
// that found the layer's surface; `foundSurface` false when none did.
glm::vec3 layerEstimate(const Estimator& estimator, const LayeredDepthCube& store, std::uint32_t pixel,
                        std::uint32_t layerIndex, const BiasCompensationOptions& options, std::uint64_t& rays,
                        bool& foundSurface) {
  const std::uint32_t stream = rays::hashCombine(rays::hashCombine(kCompensationStream, options.seed), layerIndex);
  glm::vec3 sum(0.0f);
  std::uint32_t found = 0;
  for (std::uint32_t k = 0; k < options.raysPerLayer; ++k) {
    rays::SampleStream samples(stream, k);
    const glm::vec2 jitter = samples.next2D();
    const std::optional<rays::SurfacePoint> x = layerSurfacePoint(estimator.embree, store, pixel, layerIndex, jitter, rays);
    if (!x) continue;
    ++found;
    sum += estimator.missingAt(*x, samples, rays);
  }
  foundSurface = found > 0;
  return found > 0 ? sum / float(found) : glm::vec3(0.0f);
}

// The points per layer of the passes after the first, which estimate a smaller increment.
std::uint32_t laterPassRays(std::uint32_t firstPassRays) { return std::max(1u, firstPassRays / 4); }

// The end of the pixels this process compensates.
std::uint32_t endPixelOf(const LayeredDepthCube& store, const BiasCompensationOptions& options) {
  return options.endPixel == 0 ? store.frame().pixelCount() : options.endPixel;
}

// One pass: H_miss of every layer of `store` in the options' pixels (zero elsewhere), with H(y) read from it.
std::vector<glm::vec3> compensationPass(const Estimator& estimator, const LayeredDepthCube& store,
                                        const BiasCompensationOptions& options, BiasCompensationStats& stats,
                                        const std::function<void(std::uint64_t)>& advance) {
  PerLayerValues missing = estimatePerLayer(
      store, options.firstPixel, endPixelOf(store, options),
      [&](std::uint32_t pixel, std::uint32_t layer, std::uint64_t& rays, bool& found) {
        return layerEstimate(estimator, store, pixel, layer, options, rays, found);
      },
      advance);
  stats.rays = missing.rays;
  stats.layersWithoutSurface = missing.layersWithoutSurface;
  return std::move(missing.values);
}

// Keller's clamped VPL sum at y, Σ_v Φ_v·min(g_v, b)·V(v, y), estimated from `count` VPLs: one uniformly in
// each of `count` equal strata of the set, each weighted by the stratum's size.
glm::vec3 clampedVplIrradiance(const rays::VplSet& vpls, const rays::EmbreeScene& embree, float clamp,
                               std::uint32_t count, const glm::vec3& position, const glm::vec3& normal,
                               rays::SampleStream& samples, std::uint64_t& rays) {
  const std::size_t total = vpls.vpls.size();
  if (total == 0) return glm::vec3(0.0f);
  const std::size_t used = std::min<std::size_t>(count, total);
  const double stratum = double(total) / double(used);
  const float offset = samples.next1D();
  glm::vec3 sum(0.0f);
  for (std::size_t s = 0; s < used; ++s) {
    const std::size_t index = std::min(total - 1, std::size_t((double(s) + offset) * stratum));
    const rays::Vpl& vpl = vpls.vpls[index];
    const glm::vec3 unclamped = rays::vplIrradiance(vpl, embree.scene(), position, normal);  // Φ·g
    const glm::vec3 clamped = glm::min(unclamped, vpl.power * clamp);
    if (!glm::any(glm::greaterThan(clamped, glm::vec3(0.0f)))) continue;
    ++rays;
    if (embree.visible(position + embree.epsilon() * normal, vpl.position + embree.epsilon() * vpl.normal))
      sum += clamped;
  }
  return sum * float(stratum);
}

}  // namespace

std::vector<glm::vec3> compensateKellerPixels(std::span<const glm::vec4> positions, std::span<const glm::vec4> normals,
                                              const rays::VplSet& vpls, const rays::EmbreeScene& embree,
                                              const rays::LightSet& lights, float geometryClamp,
                                              std::uint32_t samplesPerPixel, std::uint32_t vplSamples,
                                              std::uint64_t& rayCount) {
  IBRR_CHECK(geometryClamp > 0.0f && samplesPerPixel > 0 && vplSamples > 0,
             "Keller's bias compensation is given a positive clamp, samples per pixel and VPL samples");
  const IrradianceSource fromVpls = [&](const glm::vec3& p, const glm::vec3& n, rays::SampleStream& samples,
                                        std::uint64_t& rays) {
    return clampedVplIrradiance(vpls, embree, geometryClamp, vplSamples, p, n, samples, rays);
  };
  const Estimator estimator{embree, lights, fromVpls, geometryClamp, 1.0f / std::sqrt(glm::pi<float>() * geometryClamp),
                            true};
  std::vector<glm::vec3> missing(positions.size(), glm::vec3(0.0f));
  // Far enough for the G-buffer's float positions, short of any other surface: 1e-4 of the scene's diagonal.
  const float probeReach = 1e-4f * std::max(embree.scene().bounds().diagonal(), 1e-12f);
  tbb::combinable<std::uint64_t> rays([] { return std::uint64_t{0}; });
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, positions.size(), 64), [&](const tbb::blocked_range<std::size_t>& range) {
    if (interruptRequested()) return;
    std::uint64_t& localRays = rays.local();
    for (std::size_t pixel = range.begin(); pixel != range.end(); ++pixel) {
      if (positions[pixel].w < 0.5f) continue;
      // The G-buffer gives the point and its shading normal; Embree the geometric normal, which keeps the
      // cosine rays off the pixel's own triangle where the shading normal leans.
      const glm::vec3 normal = glm::normalize(glm::vec3(normals[pixel]));
      std::optional<rays::SurfacePoint> found =
          surfaceUnder(embree, glm::vec3(positions[pixel]), normal, probeReach, 0.0f, localRays);
      if (!found) {
        found.emplace();
        found->position = glm::vec3(positions[pixel]);
        found->shadingNormal = found->geometricNormal = normal;
        found->frontFacing = true;
      }
      const rays::SurfacePoint& x = *found;
      const std::uint32_t stream = rays::hashCombine(kCompensationStream ^ 0x4b454c4cU, std::uint32_t(pixel));
      glm::vec3 sum(0.0f);
      for (std::uint32_t k = 0; k < samplesPerPixel; ++k) {
        rays::SampleStream samples(stream, k);
        sum += estimator.missingAt(x, samples, localRays);
      }
      missing[pixel] = sum / float(samplesPerPixel);
    }
  });
  throwIfInterrupted();
  rayCount += rays.combine(std::plus<>());
  return missing;
}

LayeredDepthCube compensateClampBias(const LayeredDepthCube& store, const LayeredDepthCube* bouncesLevel,
                                     const rays::EmbreeScene& embree, const rays::LightSet& lights,
                                     float geometryClamp, const BiasCompensationOptions& options,
                                     BiasCompensationStats& stats, const ProgressObserver& progress) {
  if (!(geometryClamp > 0.0f) || !std::isfinite(geometryClamp))
    throw Error("bias compensation needs the positive clamp the store was baked with (--clamp 0 has no bias)");
  if (options.raysPerLayer == 0 || options.raysPerLayer > kMaxBiasCompensationRays)
    throw Error("--bias-rays must be 1.." + std::to_string(kMaxBiasCompensationRays));
  if (options.passes == 0 || options.passes > kMaxBiasCompensationPasses)
    throw Error("--bias-passes must be 1.." + std::to_string(kMaxBiasCompensationPasses));
  if (store.biasCompensationRays() != 0) throw Error("this store already has its bias compensation");
  const Stopwatch time;
  const LayeredDepthCube& level = bouncesLevel ? *bouncesLevel : store;  // whose layers the points lie on
  const std::uint32_t endPixel = endPixelOf(level, options);
  IBRR_CHECK(options.firstPixel < endPixel && endPixel <= level.frame().pixelCount(),
             "bias compensation: the pixel share [" + std::to_string(options.firstPixel) + ", " +
                 std::to_string(endPixel) + ") is a non-empty part of the store's pixels");
  // Progress counts points (each one cosine ray and one light sample), so that the rate and the time left hold
  // across passes of different sizes: a layer is raysPerLayer points in the first pass, laterPassRays after.
  const std::uint64_t layers = level.offsets()[endPixel] - level.offsets()[options.firstPixel];
  const std::uint64_t total =
      layers * (options.raysPerLayer + std::uint64_t(options.passes - 1) * laterPassRays(options.raysPerLayer));
  std::atomic<std::uint64_t> done{0};
  auto advance = [&](std::uint64_t points) {
    const std::uint64_t now = done.fetch_add(points) + points;
    if (progress) progress({kCompensationPhase, now, total, "points", {}});
  };
  const float maxRange = 1.0f / std::sqrt(glm::pi<float>() * geometryClamp);
  // Pass 1 estimates H_miss from the clamped store, emitted light included; pass k the increment that the
  // increment of pass k − 1 causes, ΔH_k = K ΔH_(k−1) (K: the clamped-away near-field transport), with no emitted
  // part and a quarter of the points (it is smaller: ρ < 1 each time). The sum is the recursion of the header.
  std::vector<glm::vec3> missing(level.layers().size(), glm::vec3(0.0f));  // Σ ΔH_k, per layer of the level
  LayeredDepthCube readFrom = store;  // H(y) of this pass: the store, then each pass's increment on the level
  for (std::uint32_t pass = 0; pass < options.passes; ++pass) {
    BiasCompensationOptions passOptions = options;
    if (pass > 0) passOptions.raysPerLayer = laterPassRays(options.raysPerLayer);
    const IrradianceSource fromStore = [&readFrom, &options](const glm::vec3& p, const glm::vec3& n,
                                                             rays::SampleStream&, std::uint64_t&) {
      return readFrom.radiosity(p, n, options.lookup).value_or(glm::vec3(0.0f));
    };
    const bool emittedLight = pass == 0 && !options.directLightFromRays;
    const Estimator estimator{embree, lights, fromStore, geometryClamp, maxRange, emittedLight};
    BiasCompensationStats passStats;
    const std::uint64_t pointsPerLayer = passOptions.raysPerLayer;
    std::vector<glm::vec3> increment = compensationPass(
        estimator, level, passOptions, passStats,
        [&](std::uint64_t layerCount) { advance(layerCount * pointsPerLayer); });
    stats.rays += passStats.rays;
    if (pass == 0) stats.layersWithoutSurface = passStats.layersWithoutSurface;
    if (options.shareMissing) options.shareMissing(increment);
    for (std::size_t k = 0; k < missing.size(); ++k) missing[k] += increment[k];
    if (pass + 1 < options.passes) readFrom = withRadiosity(level, increment);
  }
  LayeredDepthCube current =
      bouncesLevel ? withCoarseRadiosity(store, withRadiosity(level, missing)) : withAddedRadiosity(store, missing);
  current.setBiasCompensation(options.raysPerLayer, options.passes);
  stats.seconds = time.seconds();
  return current;
}

}  // namespace ibrr::bake
