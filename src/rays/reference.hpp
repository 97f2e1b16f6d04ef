#pragma once
// The ground truth: a unidirectional path tracer of the diffuse scene.
//
// At every diffuse hit it estimates direct light twice and combines the two by multiple importance
// sampling (power heuristic): next-event estimation (a light chosen by power, a uniform point on
// it: solid-angle pdf P(light)·r²/(A·cosθ_light)) and the cosine-sampled continuation (pdf cosθ/π),
// which also carries the indirect light. Point and spot lights are delta lights, reached only by
// next-event estimation. Russian roulette ends paths from the fourth hit on. Emission is one-sided.
//
// Samples come from scrambled Sobol pairs seeded by (seed, pixel, batch), so an image is
// bit-identical for a seed on any thread count, and a render stopped by time equals the render with
// that sample count. The samples of a pixel come in batches of 16, each an independent scramble;
// the spread of the batch means gives every pixel an honest estimate of the variance of its value
// (randomised quasi-Monte Carlo), so two renders can be compared against their error bars, and the
// error falls as 1/sqrt(spp).
#include "rays/embree_scene.hpp"
#include "rays/light_set.hpp"
#include "rays/sampler.hpp"
#include "util/image.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace ibrr::rays {

struct ReferenceOptions {
  std::string camera;        // scene camera name; empty = the first
  int width = 256;           // pixels
  int height = 256;
  std::uint32_t spp = 256;   // samples per pixel (multiples of 16 give the best error bars); with
                             // `seconds` > 0, the most it may reach (0 = no cap)
  double seconds = 0.0;      // > 0: keep adding passes of samples until this time is spent
  std::uint32_t seed = 0;
  std::uint32_t maxDepth = 1024;  // hits along a path at most (Russian roulette ends them long before)
  bool showProgress = true;       // progress on stderr
  // A distributed render (src/cluster/): this process renders the tiles t with t mod shareCount = shareIndex and
  // leaves the other pixels zero, so the ranks' images add up to the whole one, pixel for pixel identical.
  int shareIndex = 0;
  int shareCount = 1;
  // With a time budget every rank must take the same passes: maps this process's elapsed seconds to the value
  // all ranks agree on (the slowest's). Empty: its own.
  std::function<double(double)> agreedSeconds;
};

struct ReferenceImage {
  Image radiance;  // mean pixel radiance, linear, scene units
  Image variance;  // per pixel and channel: estimated variance of that mean (s²/n)
  std::uint32_t spp = 0;    // samples per pixel actually taken
  double seconds = 0.0;
  std::uint64_t rayCount = 0;  // closest-hit and shadow rays
  [[nodiscard]] double raysPerSecond() const { return seconds > 0.0 ? double(rayCount) / seconds : 0.0; }
};

// Throws ibrr::Error when the scene has no light or the options are out of range, and
// ibrr::Interrupted when Ctrl-C arrives.
ReferenceImage renderReference(const EmbreeScene& embree, const ReferenceOptions& options);

// The radiance arriving along one ray, for tests and tools that aim at chosen points.
class PathTracer {
public:
  PathTracer(const EmbreeScene& embree, const LightSet& lights, std::uint32_t maxDepth = 1024)
      : m_embree(embree), m_lights(lights), m_maxDepth(maxDepth) {}
  // L(ray) with every bounce; `rays` is increased by the rays traced. With `maxDepth` = 1 only
  // emission and direct light (one reflection) are counted.
  glm::vec3 radiance(Ray ray, SampleStream& samples, std::uint64_t& rays) const;

private:
  // MIS weight of emission found by a cosine bounce (pdf `bsdfPdf`) against the light sampling that could have
  // chosen the same emitter point; 1 for an emitter the light set does not hold.
  float emissionWeight(const Ray& ray, const Hit& hit, const SurfacePoint& point, float bsdfPdf) const;
  // Next-event estimation at `point` (normals `shading`, `geometric` on the side the path arrived from, Lambertian
  // f = `bsdf`): one light chosen by power, with its visibility and MIS weight, times the path throughput `beta`.
  glm::vec3 directLight(const SurfacePoint& point, const glm::vec3& shading, const glm::vec3& geometric,
                        const glm::vec3& bsdf, const glm::vec3& beta, SampleStream& samples,
                        std::uint64_t& rays) const;

  const EmbreeScene& m_embree;
  const LightSet& m_lights;
  std::uint32_t m_maxDepth;
};

}  // namespace ibrr::rays
