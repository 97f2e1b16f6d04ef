#pragma once
// How a method is displayed (`ibrr render --method NAME`, the viewer, `ibrr compare`'s frames): a RenderMethod
// describes it (the row of the method table in app/methods.hpp that shows it holds one) and makes its RenderPass, the
// display with its GPU state kept from frame to frame (the camera G-buffer, the store in SSBOs, a lightmap's
// textures), which draws a camera at a size into a texture of linear radiance. `ibrr render`, `ibrr compare` and the
// viewer all draw through these objects, so the viewer's frame is `ibrr render`'s image. The passes of the radiosity
// methods (IBRR from a baked store, Keller's instant radiosity, a solved lightmap) and of the G-buffer views are made
// here (make*Pass). Every pass needs the GL context current on the calling thread.
#include "bake/bake.hpp"
#include "display/ibrr_reconstruction.hpp"
#include "gpu/scene_renderer.hpp"
#include "ibrr/ldc.hpp"
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"

#include <any>
#include <memory>
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
  std::any methodInputs;  // a display defined outside this library: its own inputs (its pass knows their type)
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

// Milliseconds of one frame's passes, each measured to its own glFinish (so that a deferred renderer such as
// llvmpipe charges each pass its own work).
struct FrameTimes {
  double sceneMs = 0.0;   // the camera G-buffer (0 for a method that draws the scene itself)
  double methodMs = 0.0;  // the method's own display cost (IBRR: the store look-ups)
};

// One method's display, its GPU state kept across frames. The settings it was made with are read at every draw
// (the caller may change the IBRR reconstruction's between frames) and must outlive it.
class RenderPass {
public:
  virtual ~RenderPass() = default;
  // Draws the view of `camera` at width × height into texture(); supersample N > 1: a frame of N×N tiles, each the
  // view at width/N × height/N moved by its sub-pixel offset (util/supersample.hpp).
  virtual FrameTimes draw(const scene::Camera& camera, int width, int height, int supersample) = 0;
  // The last frame: linear radiance in an RGBA32F texture (GL row order).
  [[nodiscard]] virtual GLuint texture() const = 0;
  // The last frame read back (row 0 at the top), with its holes for a method with a store; the times are the
  // last draw's.
  [[nodiscard]] virtual RenderOutput read() const = 0;
};

// What a pass is made from: the scene, its geometry on the GPU (shared by every pass of a viewer or a comparison)
// and the method's inputs.
struct PassInputs {
  const scene::Scene& scene;
  const gpu::SceneRenderer& geometry;
  const RenderSettings& settings;
};

struct RenderMethod {
  std::string_view name;
  std::string_view summary;  // one line for --help
  bool needsStore = false;     // true: --store FILE is required
  bool needsLightmap = false;  // true: --lightmap FILE is required
  // True for a display cheap enough to draw every frame; the viewer draws any other only when the view changes.
  bool interactive = true;
  // Makes the method's pass; throws ibrr::Error when the settings lack what it needs (a store, a lightmap).
  std::unique_ptr<RenderPass> (*create)(const PassInputs& inputs) = nullptr;

  // One frame: a pass made for the request, drawn once and read back (the scene uploaded for it when the request
  // has no geometry).
  [[nodiscard]] RenderOutput render(const RenderRequest& request) const;
};

// One frame of the pass `create` makes for the request, drawn once and read back (the scene uploaded for it when the
// request has no geometry).
[[nodiscard]] RenderOutput renderOnce(std::unique_ptr<RenderPass> (*create)(const PassInputs&),
                                      const RenderRequest& request);

// The passes. IBRR: the camera's G-buffer warped into settings.store (throws without one), on the GPU or the CPU.
std::unique_ptr<RenderPass> makeIbrrPass(const PassInputs& inputs);
// Keller's instant radiosity: every VPL of the light paths of settings.vplOptions, shaded with its shadow hemicube.
std::unique_ptr<RenderPass> makeKellerPass(const PassInputs& inputs);
// A G-buffer target as the picture: albedo, emission, and the normal mapped to 0.5·n + 0.5.
std::unique_ptr<RenderPass> makeAlbedoPass(const PassInputs& inputs);
std::unique_ptr<RenderPass> makeEmissionPass(const PassInputs& inputs);
std::unique_ptr<RenderPass> makeNormalPass(const PassInputs& inputs);
// A solved lightmap (settings.lightmap; throws without one), its atlas rebuilt when the settings lack it.
std::unique_ptr<RenderPass> makeLightmapPass(const PassInputs& inputs);

}  // namespace ibrr::display
