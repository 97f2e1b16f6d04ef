#include "rays/vpl.hpp"

#include "rays/light_set.hpp"
#include "rays/sampler.hpp"
#include "rays/warp.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"

#include <glm/gtc/constants.hpp>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace ibrr::rays {

namespace {

// Paths are cut into blocks of a fixed size (not one per thread) and the blocks' VPLs joined in
// order, so the result does not depend on how TBB schedules them.
constexpr std::uint32_t kPathsPerBlock = 1024;
constexpr std::uint32_t kVplStream = 0x56504c31U;  // "VPL1": keeps VPL samples apart from pixels'

struct Walker {
  const EmbreeScene& embree;
  const LightSet& lights;
  const VplOptions& options;
  std::uint64_t rays = 0;

  void tracePath(std::uint32_t pathIndex, std::vector<Vpl>& out) {
    const scene::Scene& scene = embree.scene();
    SampleStream samples(hashCombine(options.seed, kVplStream), pathIndex);
    const float n = float(options.pathCount);

    float pick = 0.0f;
    const std::uint32_t light = lights.choose(samples.next2D().x, pick);
    const std::uint32_t local = lights.localIndex(light);
    // Φ_0 = Φ_light / (P(light)·N): the VPL's share of that light's power.
    const glm::vec3 nodePower = lights.power(light) / (pick * n);

    Vpl first;
    first.path = pathIndex;
    first.bounce = 0;
    first.power = nodePower;
    Ray ray;
    glm::vec3 throughput(0.0f);  // power the particle carries along `ray`
    switch (lights.kind(light)) {
      case LightKind::Triangle: {
        const scene::EmissiveTriangle& emitter = scene.emitters()[local];
        const glm::vec2 b = squareToTriangleBarycentrics(samples.next2D());
        first.position = b.x * emitter.v0 + b.y * emitter.v1 + (1.0f - b.x - b.y) * emitter.v2;
        first.normal = emitter.normal;
        first.kind = VplKind::Surface;
        const scene::MeshInstance& instance = scene.instances[emitter.instance];
        const scene::TriangleMesh& mesh = scene.meshes[instance.mesh];
        first.albedo = scene.materials[mesh.triangleMaterials[emitter.triangle]].albedo;
        // Lambertian emission: pdf(ω) = cosθ/π and L·cosθ/pdf = π·L, so the particle carries
        // π·L·A/(P·N) = Φ_0, the same as the VPL.
        ray.direction = Frame(emitter.normal).toWorld(squareToCosineHemisphere(samples.next2D()));
        ray.origin = first.position + embree.epsilon() * emitter.normal;
        throughput = nodePower;
        break;
      }
      case LightKind::Point: {
        const scene::PointLight& point = scene.pointLights[local];
        first.position = point.position;
        first.kind = VplKind::Point;
        first.light = local;
        ray.direction = squareToUniformSphere(samples.next2D());
        ray.origin = point.position;
        throughput = nodePower;  // isotropic: I/pdf = I·4π = Φ
        break;
      }
      case LightKind::Spot: {
        const scene::SpotLight& spot = scene.spotLights[local];
        first.position = spot.position;
        first.normal = glm::normalize(spot.direction);
        first.kind = VplKind::Spot;
        first.light = local;
        // Uniform in the outer cone (pdf 1/(2π(1 − cosOuter))), weighted by the profile:
        // the particle carries I·profile(θ)/pdf/(P·N).
        const glm::vec3 local3 = squareToUniformCone(samples.next2D(), spot.cosOuter);
        ray.direction = Frame(first.normal).toWorld(local3);
        ray.origin = spot.position;
        const float conePdf = 1.0f / (glm::two_pi<float>() * (1.0f - spot.cosOuter));
        throughput = spot.intensity * spotProfile(spot, local3.z) / (conePdf * pick * n);
        break;
      }
    }
    out.push_back(first);

    for (std::uint32_t bounce = 1; bounce <= options.maxBounces; ++bounce) {
      if (!glm::any(glm::greaterThan(throughput, glm::vec3(0.0f)))) break;
      ++rays;
      const Hit hit = embree.intersect(ray);
      if (!hit.valid()) break;
      const SurfacePoint point = embree.surface(ray, hit);
      // Light is reflected into the side the particle arrived from.
      const float side = point.frontFacing ? 1.0f : -1.0f;
      const glm::vec3 geometric = side * point.geometricNormal;
      const glm::vec3 shading = side * point.shadingNormal;
      const glm::vec3 rho = point.albedo;

      Vpl node;
      node.position = point.position;
      node.normal = shading;
      node.albedo = rho;
      node.power = throughput * rho;  // reflected power: the surface re-emits ρ·Φ diffusely
      node.bounce = bounce;
      node.path = pathIndex;
      node.kind = VplKind::Surface;
      if (glm::any(glm::greaterThan(node.power, glm::vec3(0.0f)))) out.push_back(node);
      if (bounce == options.maxBounces) break;

      // Russian roulette on the albedo: survive with q = max(ρ), then Φ ← Φ·ρ/q.
      const glm::vec2 uRoulette = samples.next2D();
      const glm::vec2 uDirection = samples.next2D();
      const float survive = std::min(1.0f, std::max({rho.r, rho.g, rho.b}));
      if (!(uRoulette.x < survive)) break;
      throughput = throughput * rho / survive;
      ray.direction = Frame(shading).toWorld(squareToCosineHemisphere(uDirection));
      if (glm::dot(ray.direction, geometric) <= 0.0f) break;  // shading normal pointed it inside
      ray.origin = embree.offsetOrigin(point, ray.direction);
      ray.tNear = 0.0f;
      ray.tFar = kInfinity;
    }
  }
};

}  // namespace

VplSet generateVpls(const EmbreeScene& embree, const VplOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.pathCount == 0) throw Error("the VPL path count must be at least 1");
  const LightSet lights(embree.scene(), "VPL generation");

  const std::uint32_t blockCount = (options.pathCount + kPathsPerBlock - 1) / kPathsPerBlock;
  std::vector<std::vector<Vpl>> blocks(blockCount);
  std::atomic<std::uint64_t> rays{0};
  tbb::parallel_for(std::uint32_t(0), blockCount, [&](std::uint32_t block) {
    if (interruptRequested()) return;
    Walker walker{embree, lights, options};
    const std::uint32_t begin = block * kPathsPerBlock;
    const std::uint32_t end = std::min(options.pathCount, begin + kPathsPerBlock);
    blocks[block].reserve(std::size_t(end - begin) * 3);
    for (std::uint32_t path = begin; path < end; ++path) walker.tracePath(path, blocks[block]);
    rays += walker.rays;
  });
  throwIfInterrupted();

  VplSet set;
  set.pathCount = options.pathCount;
  std::size_t total = 0;
  for (const auto& block : blocks) total += block.size();
  set.vpls.reserve(total);
  for (auto& block : blocks) {
    for (const Vpl& vpl : block) {
      if (set.countPerBounce.size() <= vpl.bounce) {
        set.countPerBounce.resize(vpl.bounce + 1, 0);
        set.powerPerBounce.resize(vpl.bounce + 1, glm::dvec3(0.0));
      }
      ++set.countPerBounce[vpl.bounce];
      set.powerPerBounce[vpl.bounce] += glm::dvec3(vpl.power);
      set.vpls.push_back(vpl);
    }
    block = {};
  }
  set.emittedPower = glm::dvec3(lights.totalPower());
  set.rayCount = rays.load();
  set.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return set;
}

glm::vec3 vplIntensity(const Vpl& vpl, const scene::Scene& scene, const glm::vec3& towards) {
  switch (vpl.kind) {
    case VplKind::Surface:
      return vpl.power * (std::max(0.0f, glm::dot(vpl.normal, towards)) * glm::one_over_pi<float>());
    case VplKind::Point:
      return vpl.power * (0.25f * glm::one_over_pi<float>());
    case VplKind::Spot: {
      const scene::SpotLight& spot = scene.spotLights[vpl.light];
      // The spot's own profile, normalised so that its integral over the sphere is Φ.
      const float integral = (1.0f - spot.cosInner) + 0.5f * (spot.cosInner - spot.cosOuter);
      return vpl.power * (spotProfile(spot, glm::dot(vpl.normal, towards)) / (glm::two_pi<float>() * integral));
    }
  }
  return glm::vec3(0.0f);
}

glm::vec3 vplIrradiance(const Vpl& vpl, const scene::Scene& scene, const glm::vec3& point, const glm::vec3& normal) {
  const glm::vec3 d = point - vpl.position;
  const float r2 = glm::dot(d, d);
  if (!(r2 > 0.0f)) return glm::vec3(0.0f);
  const glm::vec3 omega = d / std::sqrt(r2);
  const float cosX = std::max(0.0f, -glm::dot(normal, omega));
  return vplIntensity(vpl, scene, omega) * (cosX / r2);
}

}  // namespace ibrr::rays
