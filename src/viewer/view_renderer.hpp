#pragma once
// What the viewer draws each frame: the display methods of `ibrr render`'s table (display/render_methods), each
// through its RenderPass, made on first use and kept across frames (the camera G-buffer, the store in SSBOs, a
// lightmap's textures stay on the GPU), so that a frame is `ibrr render`'s image of the same camera. A method that
// is not interactive (Keller's, the normal view, a lightmap) is drawn again only when the view changes. The
// viewer's one view of its own, "error", is the IBRR pass's frame at the reference's size against the reference.
#include "display/render_methods.hpp"
#include "display/uploaded_image.hpp"
#include "gpu/resources.hpp"
#include "gpu/scene_renderer.hpp"
#include "ibrr/ldc.hpp"
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ibrr::viewer {

struct DisplayMode {
  std::string name;     // as --method and the script's "method" take it
  std::string summary;  // one line for --help and the overlay
  const display::RenderMethod* method = nullptr;           // null: the "error" view
  const lightmap::Lightmap* lightmap = nullptr;            // lightmap methods: the loaded file
  const lightmap::LightmapAtlas* lightmapAtlas = nullptr;  // and its atlas
  [[nodiscard]] bool showsReferenceError() const { return method == nullptr; }
  // The IBRR store's modes, whose reconstruction filter and path the viewer sets.
  [[nodiscard]] bool readsStore() const { return method == nullptr || method->needsStore; }
};

// A lightmap file loaded for the viewer (--lightmap, repeatable).
struct LoadedLightmap {
  std::string fileName;
  lightmap::Lightmap lightmap;
  lightmap::LightmapAtlas atlas;
};

// The viewer's display modes: every display of `methods` (the method table's) whose inputs are at hand (the store's with a store; a
// method that shows a lightmap once per loaded lightmap: "lightmap" for one file, else "lightmap:FILE"), and "error"
// when a reference image is loaded. GL-free, so options are checked before any window. The modes point into
// `lightmaps`, which must outlive them.
std::vector<DisplayMode> displayModes(std::span<const display::RenderMethod* const> methods, bool haveStore,
                                      bool haveReference, const std::vector<LoadedLightmap>& lightmaps);
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
  // store may be null (no store methods then); reference may be null. tableSettings are the methods' inputs
  // (Keller's light paths); each mode adds its own (the store, the lightmap it shows). storeDisplay: the display of
  // a store, which the "error" view draws at the reference's size (null without a reference).
  ViewRenderer(const scene::Scene& scene, const LayeredDepthCube* store, const display::RenderSettings& tableSettings,
               const Image* reference, const display::RenderMethod* storeDisplay);

  // Renders the view of `camera` at width × height (ignored by "error", which uses the reference's size) into
  // texture(). cpuReconstruction: IBRR through the TBB path instead of the compute shader; both give `ibrr
  // render`'s image of that path.
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
  // Forgets the passes that show a lightmap and every kept frame: after a relight changed a lightmap and moved its
  // lights' texels, they are made again.
  void invalidate();

private:
  // A mode's pass, with the settings it reads and what its kept frame shows.
  struct ModePass {
    display::RenderSettings settings;
    std::unique_ptr<display::RenderPass> pass;
    std::string shownView;  // the view its texture holds ("" = none kept)
    int width = 0, height = 0;  // the size of its last frame
  };
  ModePass& passFor(const DisplayMode& mode);
  ModePass& passForMethod(const std::string& key, const display::RenderMethod& method,
                          const display::RenderSettings& settings);
  PassTimes renderReferenceError(const scene::Camera& camera, const display::ReconstructionOptions& reconstruction,
                                 bool cpuReconstruction);

  const scene::Scene& m_scene;
  const LayeredDepthCube* m_store;
  display::RenderSettings m_tableSettings;
  const Image* m_reference;
  const display::RenderMethod* m_storeDisplay;
  gpu::SceneRenderer m_sceneRenderer;
  std::map<std::string, ModePass> m_passes;  // by mode name
  const ModePass* m_shown = nullptr;         // the pass whose frame is shown; null: m_errorMap
  display::UploadedImage m_errorMap;         // the "error" view's false colours
  std::string m_errorView;                   // the view m_errorMap shows
  int m_width = 0;
  int m_height = 0;
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
