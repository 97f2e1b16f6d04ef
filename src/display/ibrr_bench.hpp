#pragma once
// `ibrr bench ibrr`: the IBRR pipeline's figures, measured in one run (issue "IBRR end to end"):
//   - bake: hemicubes and samples warped per second, the time split, and the bake's wall time
//     against rendering the same hemicubes alone (is the warp hidden behind the rasteriser?);
//   - display per frame at 1280×720, GPU and CPU reconstruction, for stores of about 100, 1,000
//     and 10,000 VPLs (view independence), and Keller's instant radiosity at 1,000 VPLs;
//   - store bytes and layers per pixel against triangle count (bunny 948 → 69K and dragon
//     202K → 871K triangles in the Cornell box) at a fixed R (geometry independence).
#include "bake/bake.hpp"
#include "rays/vpl.hpp"
#include "scene/scene.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>

namespace ibrr::display {

struct IbrrBenchOptions {
  bool quick = false;                                       // small sizes for a smoke run
  std::filesystem::path sharedScenes = "../shared/scenes";  // conference room, bunny, dragon (skipped if absent)
  bool bake = true, insertion = true, display = true, geometry = true;  // which sections to run
  std::optional<std::uint32_t> bakePaths;  // the bake section's light paths (else 1,024 / 32)
};

// Renders every hemicube that a bake with `options` renders for `vpls` (bake::generateBakeVpls), with no warp, and
// returns the seconds: the floor under the bake's wall time. They are drawn as the bake draws them, a pass for as
// many as the atlas's slots hold (bake::hemicubeSlots); for the CPU warp each hemicube is then read back, as that
// warp needs. Needs a current context; stops at an interrupt (throws ibrr::Interrupted).
double hemicubeRenderOnlySeconds(const scene::Scene& scene, const rays::VplSet& vpls, const bake::BakeOptions& options,
                                 bake::WarpDevice warp);

// Needs no current context (it creates a headless one). Returns 0.
int runIbrrBenchmark(const IbrrBenchOptions& options, std::ostream& out);

}  // namespace ibrr::display
