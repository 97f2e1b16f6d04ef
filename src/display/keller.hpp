#pragma once
// Keller's instant radiosity (SIGGRAPH 1997) for one view: the baseline IBRR exists to beat. Every
// frame accumulates all VPLs, each with its own shadow map (the VPL's hemicube atlas, rendered on
// the GPU), so its display cost grows with the VPL count, while IBRR's does not. It uses the same
// VPLs, hemicube resolutions and geometry-term clamp as the bake, so the two compare pixel for
// pixel (their only differences: IBRR's store sampling and filtering).
#include "bake/bake.hpp"
#include "display/gbuffer.hpp"
#include "util/image.hpp"

namespace ibrr::display {

// Keller's bias compensation per pixel (options.biasCompensation; bake/bias_compensation.hpp): cosine rays and
// light samples per pixel, and the VPLs that estimate the clamped VPL sum at each point they reach.
inline constexpr std::uint32_t kKellerBiasSamplesPerPixel = 8;
inline constexpr std::uint32_t kKellerBiasVplSamples = 64;

struct KellerResult {
  Image radiance;
  std::size_t vplCount = 0;
  double seconds = 0.0;  // VPL shadow maps + accumulation (+ compensation), without the G-buffer and light paths
  double compensationSeconds = 0.0;  // of which the bias compensation (CPU, Embree)
  std::uint64_t compensationRays = 0;
};

// Renders L = L_e + ρ/π·Σ_i Φ_i min(g_i, b) V_i for every pixel of the G-buffer, plus ρ/π·H_miss when
// options.biasCompensation (b: bake::geometryClampFor at kKellerClampDistances: the bake's 4.5% clamped, a
// shorter distance than the store's compensated, since Keller's compensation is one pass).
KellerResult renderKeller(const scene::Scene& scene, const gpu::SceneRenderer& renderer, const GBuffer& gbuffer,
                          const rays::VplSet& vpls, const bake::BakeOptions& options);

}  // namespace ibrr::display
