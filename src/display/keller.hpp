#pragma once
// Keller's instant radiosity (SIGGRAPH 1997) for one view: the baseline IBRR exists to beat. Every
// frame accumulates all VPLs, each with its own shadow map (the VPL's hemicube atlas, rendered on
// the GPU), so its display cost grows with the VPL count, while IBRR's does not. It uses the same
// VPLs, hemicube resolutions and geometry-term clamp as the bake, so the two compare pixel for
// pixel (their only differences: IBRR's store sampling and filtering).
#include "bake/bake.hpp"
#include "display/gbuffer.hpp"
#include "display/image.hpp"

namespace ibrr::display {

struct KellerResult {
  Image radiance;
  std::size_t vplCount = 0;
  double seconds = 0.0;  // VPL shadow maps + accumulation, without the G-buffer and light paths
};

// Renders L = L_e + ρ/π·Σ_i Φ_i g_i V_i for every pixel of the G-buffer.
KellerResult renderKeller(const scene::Scene& scene, const gpu::SceneRenderer& renderer, const GBuffer& gbuffer,
                          const rays::VplSet& vpls, const bake::BakeOptions& options);

}  // namespace ibrr::display
