#pragma once
// The table of what `ibrr render --method NAME` produces, chosen by name: the radiosity methods
// (IBRR from a baked store; Keller and the lightmap solvers join here) and the G-buffer views
// (albedo, normal, emission). Each entry renders the scene from one camera into a linear image
// of radiance with the GL context current on the calling thread.
#include "bake/bake.hpp"
#include "display/ibrr_reconstruction.hpp"
#include "gpu/scene_renderer.hpp"
#include "ibrr/ldc.hpp"
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ibrr::lightmap {
class LightmapDisplay;
}  // namespace ibrr::lightmap

namespace ibrr::display {

struct RenderSettings {
  const LayeredDepthCube* store = nullptr;                 // IBRR: the baked store (required)
  ReconstructionOptions reconstruction;                    // IBRR: retrieval filter
  bool cpuReconstruction = false;                          // IBRR: the CPU path instead of the GPU compute shader
  bake::BakeOptions vplOptions;                            // Keller: light paths, hemicube sizes and clamp, as a bake
  const lightmap::Lightmap* lightmap = nullptr;            // lightmap: the solved lightmap (required)
  const lightmap::LightmapAtlas* lightmapAtlas = nullptr;  // lightmap: its atlas, rebuilt when null
  const lightmap::PatchList* lightmapPatches = nullptr;    // lightmap: that atlas's patches, rasterised when null
};

struct RenderRequest {
  const scene::Scene& scene;
  const scene::Camera& camera;
  int width;
  int height;
  const RenderSettings& settings;
  // The scene's geometry already on the GPU, shared by every render of a viewer or a comparison; null: the
  // method uploads the scene for this render alone.
  const gpu::SceneRenderer* geometry = nullptr;
  // N > 1: width × height is a supersampled frame of N×N tiles (util/supersample.hpp), each the view at
  // width/N × height/N moved by its sub-pixel offset; resolveSupersampled turns it into the picture.
  int supersample = 1;
};

struct RenderOutput {
  Image image;
  std::vector<std::uint8_t> holes;  // methods with a store: 1 where a covered pixel matched nothing
  std::size_t coveredPixels = 0;
  std::size_t holePixels = 0;
  double reconstructionSeconds = 0.0;  // the method's own display cost, without the G-buffer
};

struct RenderMethod {
  std::string_view name;
  std::string_view summary;  // one line for --help
  bool needsStore;           // true: --store FILE is required
  RenderOutput (*render)(const RenderRequest& request);
  bool needsLightmap = false;  // true: --lightmap FILE is required
};

[[nodiscard]] std::span<const RenderMethod> renderMethods();
// Throws ibrr::Error listing the known names when none matches.
[[nodiscard]] const RenderMethod& findRenderMethod(std::string_view name);
// "ibrr, albedo, normal, emission" for help texts.
[[nodiscard]] std::string renderMethodNames();

}  // namespace ibrr::display
