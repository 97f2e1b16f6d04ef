#include "rays/reference.hpp"

#include "rays/pinhole.hpp"
#include "rays/warp.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/memory.hpp"
#include "util/progress.hpp"

#include <glm/gtc/constants.hpp>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

namespace ibrr::rays {

namespace {

constexpr int kTileSize = 16;
constexpr std::uint32_t kPixelStream = 0x50495831U;  // "PIX1"
constexpr std::uint32_t kRouletteDepth = 3;          // hits before Russian roulette starts
constexpr std::uint32_t kBatch = 16;                 // samples per independent scramble (see below)

}  // namespace

float PathTracer::emissionWeight(const Ray& ray, const Hit& hit, const SurfacePoint& point, float bsdfPdf) const {
  const std::int64_t light = m_lights.emitterAt(hit.instance, hit.triangle);
  if (light < 0) return 1.0f;
  const scene::EmissiveTriangle& emitter = m_embree.scene().emitters()[std::size_t(light)];
  const float distance = hit.t * glm::length(ray.direction);
  const float cosLight = -glm::dot(point.geometricNormal, glm::normalize(ray.direction));
  // Area pdf P/A turned into solid angle: ·r²/cosθ_light.
  const float lightPdf =
      m_lights.probability(std::uint32_t(light)) * distance * distance / (emitter.area * std::max(cosLight, 1e-8f));
  return powerHeuristic(bsdfPdf, lightPdf);
}

glm::vec3 PathTracer::directLight(const SurfacePoint& point, const glm::vec3& shading, const glm::vec3& geometric,
                                  const glm::vec3& bsdf, const glm::vec3& beta, SampleStream& samples,
                                  std::uint64_t& rays) const {
  const scene::Scene& scene = m_embree.scene();
  const glm::vec2 uLight = samples.next2D();
  const glm::vec2 uPoint = samples.next2D();
  float pick = 0.0f;
  const std::uint32_t light = m_lights.choose(uLight.x, pick);
  const std::uint32_t local = m_lights.localIndex(light);
  glm::vec3 target;
  glm::vec3 contribution(0.0f);  // L·f·cosθ/pdf before visibility and MIS
  float lightPdf = 0.0f;
  bool isDelta = true;
  // The direction to a light point: squared distance, unit direction, cosθ at the surface, and whether it
  // leaves the surface's front (shading and geometric normal alike).
  struct Towards {
    float r2;
    glm::vec3 omega;
    float cosSurface;
    bool leaves;
  };
  auto towards = [&](const glm::vec3& lightPoint) {
    const glm::vec3 d = lightPoint - point.position;
    const float r2 = glm::dot(d, d);
    const glm::vec3 omega = d / std::sqrt(r2);
    const float cosSurface = glm::dot(shading, omega);
    return Towards{r2, omega, cosSurface, cosSurface > 0.0f && glm::dot(geometric, omega) > 0.0f};
  };
  switch (m_lights.kind(light)) {
    case LightKind::Triangle: {
      const scene::EmissiveTriangle& emitter = scene.emitters()[local];
      const glm::vec2 b = squareToTriangleBarycentrics(uPoint);
      target = b.x * emitter.v0 + b.y * emitter.v1 + (1.0f - b.x - b.y) * emitter.v2;
      const Towards to = towards(target);
      const float cosLight = -glm::dot(emitter.normal, to.omega);
      if (cosLight > 0.0f && to.leaves) {
        lightPdf = pick * to.r2 / (emitter.area * cosLight);
        contribution = emitter.radiance * bsdf * (to.cosSurface / lightPdf);
      }
      isDelta = false;
      break;
    }
    case LightKind::Point: {
      const scene::PointLight& pointLight = scene.pointLights[local];
      target = pointLight.position;
      const Towards to = towards(target);
      if (to.leaves) contribution = pointLight.intensity * bsdf * (to.cosSurface / (to.r2 * pick));  // E = I·cosθ/r²
      break;
    }
    case LightKind::Spot: {
      const scene::SpotLight& spot = scene.spotLights[local];
      target = spot.position;
      const Towards to = towards(target);
      const float profile = spotProfile(spot, -glm::dot(glm::normalize(spot.direction), to.omega));
      if (to.leaves && profile > 0.0f)
        contribution = spot.intensity * profile * bsdf * (to.cosSurface / (to.r2 * pick));
      break;
    }
  }
  if (!glm::any(glm::greaterThan(contribution, glm::vec3(0.0f)))) return glm::vec3(0.0f);
  // The shadow ray leaves from off the surface here and ends on the light sample itself.
  const glm::vec3 toTarget = target - point.position;
  const glm::vec3 lightNormal =
      m_lights.kind(light) == LightKind::Triangle ? scene.emitters()[local].normal : glm::vec3(0.0f);
  ++rays;
  if (!m_embree.visibleLight(m_embree.offsetOrigin(point, toTarget), target, lightNormal)) return glm::vec3(0.0f);
  const float cosSurface = glm::dot(shading, toTarget) / glm::length(toTarget);
  const float weight = isDelta ? 1.0f : powerHeuristic(lightPdf, cosineHemispherePdf(cosSurface));
  return beta * contribution * weight;
}

glm::vec3 PathTracer::radiance(Ray ray, SampleStream& samples, std::uint64_t& rays) const {
  glm::vec3 result(0.0f);
  glm::vec3 beta(1.0f);       // path throughput
  float previousBsdfPdf = 0.0f;  // solid-angle pdf of the cosine sample that made `ray`

  for (std::uint32_t depth = 0;; ++depth) {
    ++rays;
    const Hit hit = m_embree.intersect(ray);
    if (!hit.valid()) break;  // no environment light
    const SurfacePoint point = m_embree.surface(ray, hit);

    // Emission, one-sided. Seen from the camera it counts in full; after a cosine bounce it is
    // weighted against the light sampling that could have found the same point.
    if (point.frontFacing && glm::any(glm::greaterThan(point.emission, glm::vec3(0.0f)))) {
      if (depth == 0)
        result += beta * point.emission;
      else
        result += beta * point.emission * emissionWeight(ray, hit, point, previousBsdfPdf);
    }
    if (depth >= m_maxDepth) break;

    const float side = point.frontFacing ? 1.0f : -1.0f;
    const glm::vec3 geometric = side * point.geometricNormal;
    const glm::vec3 shading = side * point.shadingNormal;
    const glm::vec3 rho = point.albedo;
    if (!glm::any(glm::greaterThan(rho, glm::vec3(0.0f)))) break;
    const glm::vec3 bsdf = rho * glm::one_over_pi<float>();  // Lambertian f = ρ/π

    result += directLight(point, shading, geometric, bsdf, beta, samples, rays);

    // Continue with a cosine-weighted direction: f·cosθ/pdf = ρ.
    const glm::vec2 uRoulette = samples.next2D();
    const glm::vec2 uDirection = samples.next2D();
    beta *= rho;
    if (depth + 1 >= kRouletteDepth) {
      const float survive = std::min(0.95f, std::max({beta.r, beta.g, beta.b}));
      if (!(uRoulette.x < survive)) break;
      beta /= survive;
    }
    const glm::vec3 direction = Frame(shading).toWorld(squareToCosineHemisphere(uDirection));
    if (glm::dot(direction, geometric) <= 0.0f) break;
    previousBsdfPdf = cosineHemispherePdf(glm::dot(shading, direction));
    ray.origin = m_embree.offsetOrigin(point, direction);
    ray.direction = direction;
    ray.tNear = 0.0f;
    ray.tFar = kInfinity;
  }
  return result;
}

namespace {

// Adds samples [first, last) to every pixel; first and last are multiples of the batch size.
using RenderPass = std::function<void(std::uint32_t first, std::uint32_t last, Progress* progress)>;

// A fixed sample count: passes of 64 samples (a multiple of the batch) let Ctrl-C land between them too.
std::uint32_t renderSampleCount(const RenderPass& renderPass, const ReferenceOptions& options,
                                std::size_t pixelCount) {
  std::unique_ptr<Progress> progress;
  if (options.showProgress)
    progress = std::make_unique<Progress>("reference", std::uint64_t(pixelCount) * options.spp, "samples");
  constexpr std::uint32_t kPass = 64;
  std::uint32_t done = 0;
  while (done < options.spp) {
    const std::uint32_t next = std::min(options.spp, done + kPass);
    renderPass(done, next, progress.get());
    done = next;
  }
  if (progress) progress->finish();
  return done;
}

// A time budget: passes of whole batches sized from the measured rate; the last pass may run past the budget by
// at most about half the time that was left before it. Returns the samples per pixel rendered.
std::uint32_t renderForTime(const RenderPass& renderPass, const ReferenceOptions& options, std::uint32_t batch,
                            const std::function<double()>& elapsed) {
  const std::uint32_t cap =
      options.spp > 0 ? std::max(batch, options.spp / batch * batch) : 0xffffffffU / batch * batch;
  std::unique_ptr<Progress> progress;
  if (options.showProgress)
    progress = std::make_unique<Progress>("reference", std::uint64_t(options.seconds * 1000.0), "ms");
  std::uint32_t pass = batch;
  std::uint32_t done = 0;
  while (done < cap) {
    const double before = elapsed();
    const std::uint32_t next = std::uint32_t(std::min<std::uint64_t>(cap, std::uint64_t(done) + pass));
    const std::uint32_t count = next - done;
    renderPass(done, next, nullptr);
    done = next;
    const double now = elapsed();
    if (progress)
      progress->advance(std::uint64_t(std::min(now, options.seconds) * 1000.0) -
                        std::uint64_t(std::min(before, options.seconds) * 1000.0));
    const double perSample = (now - before) / double(count);
    const double left = options.seconds - now;
    if (left <= 0.0) break;
    const double affordable = std::clamp(left / std::max(perSample, 1e-9) * 0.5, 1.0, 1024.0);
    pass = std::max(batch, std::uint32_t(affordable) / batch * batch);
  }
  if (progress) progress->finish();
  return done;
}

// Per pixel: Σ samples, Σ of the squared batch means, Σ of the squared samples.
struct PixelSums {
  const std::vector<glm::dvec3>& sum;
  const std::vector<glm::dvec3>& batchMeanSquares;
  const std::vector<glm::dvec3>& sampleSquares;
};

// The mean radiance and the variance of that mean, per pixel, from `done` samples in batches of `batch`.
void fillImages(const PixelSums& sums, std::uint32_t done, std::uint32_t batch, ReferenceImage& result) {
  const double n = double(done);
  const double batches = n / double(batch);
  for (std::size_t pixel = 0; pixel < sums.sum.size(); ++pixel) {
    const glm::dvec3 mean = sums.sum[pixel] / n;
    result.radiance.pixels[pixel] = glm::vec3(mean);
    glm::dvec3 variance(0.0);
    if (batches >= 2.0) {
      // Sample variance of the K batch means, s² = (Σm² − K·mean²)/(K − 1); the mean's is s²/K.
      variance = glm::max(sums.batchMeanSquares[pixel] - batches * mean * mean, glm::dvec3(0.0)) /
                 ((batches - 1.0) * batches);
    } else if (done > 1) {
      // A single batch: the per-sample variance s²/n, an upper bound for stratified points.
      variance = glm::max(sums.sampleSquares[pixel] - n * mean * mean, glm::dvec3(0.0)) / ((n - 1.0) * n);
    }
    result.variance.pixels[pixel] = glm::vec3(variance);
  }
}

}  // namespace

ReferenceImage renderReference(const EmbreeScene& embree, const ReferenceOptions& options) {
  if (options.width <= 0 || options.height <= 0 || options.width > 32768 || options.height > 32768)
    throw Error("reference: the image size must be between 1 and 32768 pixels on each side (got " +
                std::to_string(options.width) + "x" + std::to_string(options.height) + ")");
  if (options.seconds <= 0.0 && options.spp == 0)
    throw Error("reference: give a sample count (--spp N, N ≥ 1) or a time budget (--time SECONDS)");
  IBRR_CHECK(options.shareCount >= 1 && options.shareIndex >= 0 && options.shareIndex < options.shareCount,
             "reference: share " + std::to_string(options.shareIndex) + " of " + std::to_string(options.shareCount) +
                 " exists");
  const scene::Scene& scene = embree.scene();
  const LightSet lights(scene, "the reference path tracer");
  const scene::Camera& camera = scene.camera(options.camera);
  const PinholeCamera pinhole(camera, options.width, options.height);
  const PathTracer tracer(embree, lights, options.maxDepth);

  // Samples come in batches of B: each batch is one independent randomisation (its own Owen
  // scramble) of a B-point Sobol net. The batch means are independent and identically distributed,
  // so (1) their spread gives an honest error bar even though the points inside a batch are
  // stratified (a per-sample variance would overstate the error of scrambled Sobol points several
  // times), and (2) the error falls exactly as 1/sqrt(spp) once spp ≥ B.
  // B = the largest power of two ≤ kBatch dividing spp, so every batch is complete.
  std::uint32_t batch = kBatch;
  if (options.seconds <= 0.0)
    while (options.spp % batch != 0) batch /= 2;

  const int width = options.width, height = options.height;
  const std::size_t pixelCount = std::size_t(width) * height;
  // Three double sums and the two float images: about 100 bytes a pixel, checked before any is allocated.
  requireMemory(std::uint64_t(pixelCount) * 100,
                "the reference at " + std::to_string(options.width) + "x" + std::to_string(options.height),
                "lower --size");
  const MemoryPhase phase("rendering the reference");
  std::vector<glm::dvec3> sum(pixelCount, glm::dvec3(0.0));
  std::vector<glm::dvec3> sumBatchMeanSquares(pixelCount, glm::dvec3(0.0));
  std::vector<glm::dvec3> sumSampleSquares(pixelCount, glm::dvec3(0.0));
  const int tilesX = (width + kTileSize - 1) / kTileSize;
  const int tilesY = (height + kTileSize - 1) / kTileSize;
  const std::uint32_t streamSeed = hashCombine(options.seed, kPixelStream);
  std::atomic<std::uint64_t> rays{0};

  // The tiles of this process's share, and their pixels (for the progress line).
  auto ownTile = [&](int tile) { return tile % options.shareCount == options.shareIndex; };
  std::size_t ownPixels = 0;
  for (int tile = 0; tile < tilesX * tilesY; ++tile)
    if (ownTile(tile))
      ownPixels += std::size_t(std::min(width - (tile % tilesX) * kTileSize, kTileSize)) *
                   std::size_t(std::min(height - (tile / tilesX) * kTileSize, kTileSize));

  // Adds samples [first, last) to every pixel, tile by tile; first and last are multiples of B.
  auto renderPass = [&](std::uint32_t first, std::uint32_t last, Progress* progress) {
    tbb::parallel_for(0, tilesX * tilesY, [&](int tile) {
      if (interruptRequested() || !ownTile(tile)) return;
      const int x0 = (tile % tilesX) * kTileSize, y0 = (tile / tilesX) * kTileSize;
      const int x1 = std::min(width, x0 + kTileSize), y1 = std::min(height, y0 + kTileSize);
      std::uint64_t tileRays = 0;
      for (int y = y0; y < y1; ++y) {
        for (int x = x0; x < x1; ++x) {
          const std::size_t pixel = std::size_t(y) * width + x;
          const std::uint32_t pixelSeed = hashCombine(streamSeed, std::uint32_t(pixel));
          for (std::uint32_t batchStart = first; batchStart < last; batchStart += batch) {
            const std::uint32_t batchSeed = hashCombine(pixelSeed, batchStart / batch);
            glm::dvec3 batchSum(0.0), squares(0.0);
            for (std::uint32_t index = 0; index < batch; ++index) {
              SampleStream samples(batchSeed, index);
              const glm::vec2 jitter = samples.next2D();  // box filter over the pixel
              const Ray ray = pinhole.generate(glm::vec2(float(x), float(y)) + jitter);
              glm::dvec3 value(tracer.radiance(ray, samples, tileRays));
              if (!std::isfinite(value.r + value.g + value.b)) value = glm::dvec3(0.0);
              batchSum += value;
              squares += value * value;
            }
            const glm::dvec3 batchMean = batchSum / double(batch);
            sum[pixel] += batchSum;
            sumBatchMeanSquares[pixel] += batchMean * batchMean;
            sumSampleSquares[pixel] += squares;
          }
        }
      }
      rays += tileRays;
      if (progress) progress->advance(std::uint64_t(x1 - x0) * (y1 - y0) * (last - first));
    });
    throwIfInterrupted();
  };

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return options.agreedSeconds ? options.agreedSeconds(seconds) : seconds;
  };
  const std::uint32_t done = options.seconds <= 0.0
                                ? renderSampleCount(renderPass, options, ownPixels)
                                : renderForTime(renderPass, options, batch, elapsed);

  ReferenceImage result;
  result.spp = done;
  result.seconds = elapsed();
  result.rayCount = rays.load();
  result.radiance = Image(width, height);
  result.variance = Image(width, height);
  const PixelSums sums{sum, sumBatchMeanSquares, sumSampleSquares};
  fillImages(sums, done, batch, result);
  if (options.showProgress) {
    char line[160];
    std::snprintf(line, sizeof line, "reference: %u spp, %.1f s, %.2f Mrays/s", done, result.seconds,
                  result.raysPerSecond() * 1e-6);
    info(line);
  }
  return result;
}

}  // namespace ibrr::rays
