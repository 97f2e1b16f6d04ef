#pragma once
// What the viewer draws each frame, with the GL objects kept across frames: the scene on the GPU,
// the camera G-buffer (re-made only when the view size changes) and the IBRR store in SSBOs
// (uploaded once). The display methods come from `ibrr render`'s table (display/render_methods):
// IBRR, the G-buffer views and the lightmaps run here on persistent objects (the same passes the table's
// entries run, so a frame equals `ibrr render`'s image of the same camera), drawn into textures the
// present pass shows without a readback to the CPU; every other entry of the table (Keller, the normal
// view) is called as it is, re-rendered only when the view changes, and shown as slow as it is.
#include "display/gbuffer.hpp"
#include "display/ibrr_reconstruction.hpp"
#include "display/render_methods.hpp"
#include "gpu/resources.hpp"
#include "gpu/scene_renderer.hpp"
#include "ibrr/ldc.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_display.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ibrr::viewer {

enum class ModeKind {
  Ibrr,            // persistent G-buffer + reconstruction (GPU compute shader or CPU)
  GBufferChannel,  // persistent G-buffer target shown directly (albedo, emission)
  Lightmap,        // a loaded lightmap drawn into a target kept on the GPU (no readback) per view change
  TableMethod,     // the render_methods entry called per view change
  ReferenceError,  // IBRR at the reference's size against it, as a false-colour relative error
};

struct DisplayMode {
  std::string name;     // as --method and the script's "method" take it
  std::string summary;  // one line for --help and the overlay
  ModeKind kind = ModeKind::TableMethod;
  const display::RenderMethod* method = nullptr;                      // TableMethod
  display::GBufferChannel channel = display::GBufferChannel::Albedo;  // GBufferChannel
  const lightmap::Lightmap* lightmap = nullptr;                       // lightmap methods: the loaded file
  const lightmap::LightmapAtlas* lightmapAtlas = nullptr;             // and its atlas
};

// A lightmap file loaded for the viewer (--lightmap, repeatable).
struct LoadedLightmap {
  std::string fileName;
  lightmap::Lightmap lightmap;
  lightmap::LightmapAtlas atlas;
};

// The viewer's display modes: "ibrr" when there is a store, every other method of the table (a
// method that shows a lightmap once per loaded lightmap: "lightmap" for one file, else
// "lightmap:FILE"), and "error" when a reference image is loaded. GL-free, so options are checked
// before any window. The modes point into `lightmaps`, which must outlive them.
std::vector<DisplayMode> displayModes(bool haveStore, bool haveReference, const std::vector<LoadedLightmap>& lightmaps);
// Throws ibrr::Error listing the names when none matches.
const DisplayMode& findDisplayMode(const std::vector<DisplayMode>& modes, const std::string& name);

// Milliseconds of one frame's passes, measured between glFinish() calls (so each pass is charged
// its own work even on a deferred renderer such as llvmpipe).
struct PassTimes {
  double gbufferMs = 0.0;         // camera G-buffer (all modes that draw the scene)
  double reconstructionMs = 0.0;  // the method's own display cost (IBRR: the store lookups)
  bool rerendered = true;         // false when a slow table method reused its last image
};

class ViewRenderer {
public:
  // store may be null (no "ibrr"/"error" modes then); reference may be null. tableSettings are
  // passed to the table's methods (Keller's light paths, IBRR's store).
  ViewRenderer(const scene::Scene& scene, const LayeredDepthCube* store, const display::RenderSettings& tableSettings,
               const Image* reference);

  // Renders the view of `camera` at width × height (ignored by "error", which uses the
  // reference's size) into texture().
  // cpuReconstruction: IBRR through the TBB path (G-buffer read back, looked up on the CPU, the
  // result uploaded) instead of the compute shader; both give `ibrr render`'s image of that path.
  PassTimes render(const scene::Camera& camera, int width, int height, const DisplayMode& mode,
                   const display::ReconstructionOptions& reconstruction, bool cpuReconstruction);

  // The last frame: linear radiance in an RGBA32F texture (GL row order), and its size.
  [[nodiscard]] GLuint texture() const;
  [[nodiscard]] int width() const { return m_width; }
  [[nodiscard]] int height() const { return m_height; }
  // The last frame read back as an image (row 0 at the top): what a screenshot saves.
  [[nodiscard]] Image image() const;
  // Bytes of the store in GPU buffers (0 without a store).
  [[nodiscard]] std::size_t uploadedStoreBytes() const;
  // Forgets the cached image of a table method: the next render re-runs it (after a relight
  // changed a lightmap the view shows).
  void invalidate() {
    m_uploadedKey.clear();
    m_lightmapKey.clear();
    m_lightmapDisplays.clear();  // a relight changes the lightmap and moves its lights' texels
  }

private:
  enum class Source { Reconstruction, GBuffer, Uploaded, LightmapView };
  void ensureGBuffer(int width, int height);
  void upload(Image image);
  // Draws a lightmap mode into m_lightmapView when the view changed; returns false when it was kept.
  bool drawLightmap(const scene::Camera& camera, int width, int height, const DisplayMode& mode);

  const scene::Scene& m_scene;
  const LayeredDepthCube* m_store;
  display::RenderSettings m_tableSettings;
  const Image* m_reference;
  gpu::SceneRenderer m_sceneRenderer;
  std::optional<display::GBuffer> m_gbuffer;
  std::optional<display::GpuReconstructor> m_reconstructor;
  Source m_source = Source::Uploaded;
  display::GBufferChannel m_channel = display::GBufferChannel::Albedo;
  Image m_uploadedImage;
  gpu::Texture m_uploaded;
  int m_width = 0;
  int m_height = 0;
  // What the uploaded image shows, so that a slow method is re-run only when the view changes.
  std::string m_uploadedKey;
  // One display per shown lightmap, made on first use: its atlas's patches, dilated incident
  // radiance and albedo textures stay on the GPU while the camera moves.
  std::map<const lightmap::Lightmap*, std::unique_ptr<lightmap::LightmapDisplay>> m_lightmapDisplays;
  // The last lightmap view, on the GPU, and what it shows.
  std::optional<lightmap::LightmapViewTarget> m_lightmapView;
  std::string m_lightmapKey;
};

// The present pass: a texture of linear radiance into the window's default framebuffer, scaled to
// fit with its aspect ratio kept, tone-mapped as PNG files are.
class Presenter {
public:
  Presenter();
  // Draws into `target` (0: the window's framebuffer), windowWidth × windowHeight pixels.
  void draw(GLuint target, GLuint texture, int textureWidth, int textureHeight, int windowWidth, int windowHeight,
            const ToneMapping& tone);

private:
  gpu::Program m_program;
  gpu::VertexArray m_vertexArray;
};

}  // namespace ibrr::viewer
