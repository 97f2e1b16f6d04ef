#pragma once
// Bias compensation for the clamped geometry term (Kollig & Keller, "Illumination in the presence of weak
// singularities", 2004), computed once per store layer at bake time.
//
// The bake clamps every VPL's geometry term g = I(ω)/Φ · cosθx / r² to a bound b (bake.hpp), so a layer at x
// receives Σ_VPL Φ·min(g, b) instead of Σ Φ·g. What the clamp removes is, in the limit of many VPLs, the
// irradiance (W/m², the store's unit)
//
//     H_miss(x) = ∫_A M(y) · (g(x,y) − b)⁺ · V(x,y) dA(y)
//               = ∫_Ω M(y) · (cosθx/π) · max(0, 1 − b/g(x,y)) dω,     g(x,y) = cosθx cosθy / (π r²),
//
// where y is the surface seen from x in direction ω and M(y) = π·L_e(y) + ρ(y)·H(y) the radiosity leaving
// it (emitted plus reflected; H(y) is read back from the store itself). Only y closer than
// r_max = 1/√(π b) can have g > b, so every ray is that short. Two estimators, combined by multiple
// importance sampling (power heuristic):
//   - a cosine-distributed ray from x (pdf cosθx/π): adds M(y)·max(0, 1 − b/g), the emitted part weighted
//     against the light sample that could have chosen the same point;
//   - next-event estimation: a light chosen by power (rays/light_set.hpp), a uniform point on an emissive
//     triangle (pdf P(light)·r²/(A cosθy) in solid angle); for a point or spot light, which the VPLs of
//     bounce 0 represent at the light itself, the deterministic Φ·(g − b)⁺ with its visibility.
//
// A layer stands for the part of its LDI pixel its surface covers (ldc.hpp: the area-weighted mean of the
// samples there), so each of its rays starts from a point jittered over the pixel on the layer's plane and
// projected onto the surface by a probe ray along the plane's normal; a jitter that misses the surface (the
// pixel straddles a wall's end) is not counted. H_miss is averaged over the points that found the surface.
//
// Passes: pass 1 reads H(y) from the clamped store, which is itself short of its own missing part near
// corners; the recursion of the paper, truncated, adds what that missing part misses in turn. Pass k ≥ 2
// estimates the increment ΔH_k = K ΔH_(k−1) that the previous pass's increment causes (K the clamped-away
// near-field transport, M(y) = ρ(y)·ΔH_(k−1)(y), no emitted part), with a quarter of the points: ρ < 1 makes each
// increment smaller than the one before, so its noise matters less. Σ_k ΔH_k has the expectation of reading
// the store compensated by pass k − 1 in every pass, at 1.5 passes' cost for 3.
// Deterministic: every layer draws its numbers from its own stream (rays/sampler.hpp), so the result is the
// same byte for byte whatever the thread count.
#include "ibrr/ldc.hpp"
#include "rays/embree_scene.hpp"
#include "rays/light_set.hpp"
#include "rays/sampler.hpp"
#include "rays/vpl.hpp"
#include "util/progress.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace ibrr::bake {

struct BiasCompensationOptions {
  std::uint32_t raysPerLayer = 64;  // jittered points per layer in pass 1 (a quarter in later passes), each one
                                    // cosine ray and one light sample
  std::uint32_t passes = 2;         // 1: H(y) from the clamped store; k: the increment of pass k − 1 as well
  std::uint32_t seed = 0;
  RetrievalFilter lookup = RetrievalFilter::Bilinear;  // how H(y) is read from the store
  // The store's direct light came from shadow rays, unclamped (direct_light.hpp): H_miss then covers only the
  // clamp of the VPLs after a bounce, M(y) = ρ(y)·H(y), with no emitted part and no light sample.
  bool directLightFromRays = false;
  // A distributed bake (src/cluster/) splits the layers over its ranks: this process estimates the layers of
  // pixels [firstPixel, endPixel) (endPixel 0 = up to the last), and after each pass `shareMissing` fills in the
  // other ranks' entries of the per-layer H_miss vector, so that every rank reads the same store in the next
  // pass. Each layer draws from its own stream, so the result does not depend on the split.
  std::uint32_t firstPixel = 0;
  std::uint32_t endPixel = 0;
  std::function<void(std::vector<glm::vec3>& missing)> shareMissing;
};

struct BiasCompensationStats {
  std::uint64_t rays = 0;                // probe, cosine and shadow rays
  std::uint64_t layersWithoutSurface = 0;  // layers none of whose jittered points found their surface
  double seconds = 0.0;
};

// Where M(y)'s reflected part comes from: the irradiance H(y) at surface point y, `normal` the side facing x
// (the store's layers, or Keller's clamped VPL sum). May draw numbers from `samples` and count its rays.
using IrradianceSource = std::function<glm::vec3(const glm::vec3& position, const glm::vec3& normal,
                                                 rays::SampleStream& samples, std::uint64_t& rays)>;

// The compensation reports its points (done of total, over all passes: a layer is as many points as its pass
// traces for it) as this phase of a ProgressObserver
// (util/progress.hpp), on the calling thread or a TBB worker.
inline constexpr const char* kCompensationPhase = "bias compensation";

// The store with H_miss added to every layer and the compensation recorded in it (setBiasCompensation).
// `geometryClamp` is the bound b the store was baked with (> 0). Throws ibrr::Interrupted on Ctrl-C.
//
// `bouncesLevel`, when given, is the coarser level of the same cube that held the VPLs after a bounce (a bake
// with --direct rays and --indirect-ldc R2 < R, whose only clamped VPLs are those): H_miss is then estimated on
// its layers (points jittered over its pixels; H(y) still read from `store`, the later passes' increments from
// the level) and added to `store` as the level's light is (ibrr::withCoarseRadiosity: each layer's pixel centre
// on its plane, the plane match, bilinear over the coarse pixels). H_miss varies over r_max = 1/√(π b), many
// coarse pixels (0.27 of the scene's diagonal by default, bake.hpp), so the level loses little of it and costs
// (R2/R)² of the layers. Its radiosity is not read; the options' pixel share is of its pixels.
LayeredDepthCube compensateClampBias(const LayeredDepthCube& store, const LayeredDepthCube* bouncesLevel,
                                     const rays::EmbreeScene& embree, const rays::LightSet& lights,
                                     float geometryClamp, const BiasCompensationOptions& options,
                                     BiasCompensationStats& stats, const ProgressObserver& progress = {});

// Keller's instant radiosity compensated per pixel, as the store is per layer (one pass): H_miss at each camera
// pixel's surface point (G-buffer position, normal facing the camera; coverage in position.w), with H(y) the
// same clamped VPL sum Keller's frame computes, Σ_v Φ_v·min(g_v, b)·V, estimated from `vplSamples` VPLs
// chosen stratified over the whole set (each hit a fresh subset) and Embree visibility. `samplesPerPixel`
// cosine rays and light samples per pixel. Returns H_miss per pixel (zero where nothing was drawn).
// Deterministic per pixel. Throws ibrr::Interrupted on Ctrl-C.
std::vector<glm::vec3> compensateKellerPixels(std::span<const glm::vec4> positions, std::span<const glm::vec4> normals,
                                              const rays::VplSet& vpls, const rays::EmbreeScene& embree,
                                              const rays::LightSet& lights, float geometryClamp,
                                              std::uint32_t samplesPerPixel, std::uint32_t vplSamples,
                                              std::uint64_t& rayCount);

}  // namespace ibrr::bake
