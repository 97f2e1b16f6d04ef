#pragma once
// Virtual point lights (VPLs) along light paths: Keller's instant radiosity, as Mertens & Van Reeth
// (seed 004, §2.2 and §4) place their "instant radiosity point lights".
//
// Each of N particles leaves a light chosen in proportion to its power (an emissive triangle, then
// a uniform point on it, with a cosine-distributed direction; a point light uniformly over the
// sphere; a spot light uniformly inside its outer cone, weighted by its profile) and continues by
// cosine-weighted diffuse bounces with Russian roulette on the albedo until it is absorbed or
// reaches the maximum bounce count. The first node on the light is a VPL (it carries the direct
// light) and so is every hit. All random numbers come from scrambled Sobol pairs indexed by
// (seed, path, decision) — Keller's quasi-random walk — so a seed gives the same VPLs on any
// thread count.
//
// Power bookkeeping (Φ in the scene's power unit per RGB channel, = π·radiance·area):
//   bounce 0:  Φ_0 = Φ_light / (P(light)·N), so Σ over the bounce-0 VPLs = total emitted power;
//   a hit with albedo ρ places a VPL of the *reflected* power Φ_k·ρ and the particle survives
//   with probability q = max(ρ), carrying Φ_{k+1} = Φ_k·ρ/q; in a closed box of albedo a the
//   bounce-k VPLs therefore carry a^k of the emitted power in expectation.
// A VPL lights a point x (normal n_x, distance r, direction ω from the VPL to x) with irradiance
//   E(x) = I(ω)·cosθ_x / r²,   I(ω) = Φ·cosθ_VPL / π for a surface VPL (vplIntensity()),
// which is the paper's ρ(x)·I_i·g_i(x) with g_i = cosθ_x cosθ_i /(π r²) once ρ(x) multiplies it.
#include "rays/embree_scene.hpp"
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <vector>

namespace ibrr::rays {

enum class VplKind : std::uint8_t {
  Surface,  // Lambertian: emits Φ·cosθ/π per steradian into the hemisphere of `normal`
  Point,    // isotropic: Φ/(4π) per steradian (bounce 0 of a point light)
  Spot,     // the spot light's profile, scaled to carry Φ (bounce 0 of a spot light)
};

struct Vpl {
  glm::vec3 position{0.0f};
  glm::vec3 normal{0.0f};  // unit; Surface: the side it emits into; Spot: the axis; Point: 0
  glm::vec3 power{0.0f};   // Φ leaving the VPL, per channel
  glm::vec3 albedo{0.0f};  // ρ of the surface it lies on (0 for point and spot lights)
  std::uint32_t bounce = 0;  // 0 on the light, k after k reflections
  std::uint32_t path = 0;    // index of the light path that placed it
  std::uint32_t light = 0;   // Point/Spot: index into Scene::pointLights / spotLights
  VplKind kind = VplKind::Surface;
};

struct VplOptions {
  std::uint32_t pathCount = 10000;  // N, particles shot from the lights (≥ 1)
  std::uint32_t seed = 0;           // different seeds give independent VPL sets
  std::uint32_t maxBounces = 64;    // hits after which a particle stops (Cornell: 8 lose ≈ 0.2%)
};

struct VplSet {
  std::vector<Vpl> vpls;  // in path order, and along each path in bounce order
  std::vector<std::size_t> countPerBounce;    // [k] = number of VPLs of bounce k
  std::vector<glm::dvec3> powerPerBounce;     // [k] = Σ Φ over the VPLs of bounce k
  glm::dvec3 emittedPower{0.0};               // the lights' total power (= Σ Φ at bounce 0 in expectation)
  std::uint32_t pathCount = 0;
  std::uint64_t rayCount = 0;
  double seconds = 0.0;
};

// Throws ibrr::Error if the scene has no light or pathCount is 0.
VplSet generateVpls(const EmbreeScene& embree, const VplOptions& options);

// Radiant intensity (power per steradian) of a VPL towards the unit direction `towards`.
glm::vec3 vplIntensity(const Vpl& vpl, const scene::Scene& scene, const glm::vec3& towards);

// Irradiance from one VPL at a point with unit normal `normal`, without visibility:
// E = I(ω)·max(0, cosθ_x)/r².
glm::vec3 vplIrradiance(const Vpl& vpl, const scene::Scene& scene, const glm::vec3& point, const glm::vec3& normal);

}  // namespace ibrr::rays
