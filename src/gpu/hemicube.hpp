#pragma once
// The GPU side of the bake: a hemicube (five faces: the front face along the VPL's axis and four
// half faces around it) or a full cube (six faces, for point lights) rendered around a virtual
// point light into one float atlas, then read back (paper §4.1).
//
// Atlas layout for resolution H (H even): the faces are stacked vertically in a slot of width H.
// Hemicube: the front face at rows [0, H), then the four half faces, H/2 rows each (total 3H rows,
// the 3H² pixels of a hemicube). Full cube: six full faces (6H rows). Each half face keeps only the
// half of its 90° frustum above the VPL's tangent plane. The atlas is a 2D array texture of
// maxResolution × 6·maxResolution texels, one layer (a slot) a hemicube, so that the GPU warp can
// draw a batch of hemicubes before it warps them (src/bake/gpu_insertion.hpp). A batch is one pass: every
// face of every queued hemicube goes out in one multi-draw (SceneRenderer::drawViews, each face culled
// against its own frustum), routed by hemicube.vert to its slot (gl_Layer) and its rows
// (gl_ViewportIndex). Every slot is drawn at the same window coordinates, so a hemicube's texels do not
// depend on its slot or its batch.
//
// Per atlas pixel the readback holds the world position (w = 1 where covered) and the normal on
// the side facing the VPL with the geometry term g = I(ω)/Φ · cosθx / r² (see hemicube.frag).
//
// Coverage marks: the colour targets are not cleared between hemicubes, only the depth buffer, once a pass
// (on llvmpipe a clear of the two RGBA32F targets cost more than the drawing). Each hemicube writes its own
// mark, an integer 1 ≤ m < 2^24 (exact in a float), into the w of the positions it covers; a texel whose w
// holds another mark is left over from an earlier hemicube in its slot and counts as not covered. readBack()
// turns the marks into w ∈ {0, 1}; the GPU warp compares w with HemicubeCapture::coverage. A slot's targets
// are cleared to 0 (no mark) before its first hemicube, and again before its first after the marks have run
// out and started over.
#include "gpu/resources.hpp"
#include "gpu/scene_renderer.hpp"
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <vector>

namespace ibrr::gpu {

// How the VPL emits (its intensity profile I(ω)/Φ); matches rays::VplKind.
enum class EmissionProfile { LambertianSurface = 0, IsotropicPoint = 1, Spot = 2 };

struct HemicubeSource {
  glm::vec3 position{0.0f};          // world units
  glm::vec3 axis{0.0f, 1.0f, 0.0f};  // unit: surface normal or spot axis (ignored for points)
  EmissionProfile profile = EmissionProfile::LambertianSurface;
  float spotCosInner = 1.0f;
  float spotCosOuter = 0.0f;
};

struct HemicubeFace {
  glm::vec3 forward;               // view direction, unit
  glm::vec3 up;                    // unit, ⊥ forward
  int firstRow = 0;                // atlas rows [firstRow, firstRow + rows)
  int rows = 0;                    // H, or H/2 for a half face
  bool half = false;               // keeps only the upper half (towards `up`) of the 90° frustum
  glm::mat4 viewProjection{1.0f};  // world → this face's clip space (set when drawn)
};

// The read-back atlas of one rendered hemicube.
struct HemicubeCapture {
  HemicubeSource source;
  glm::vec3 centre{0.0f};  // the render position: source.position moved off its surface
  int resolution = 0;      // H
  int atlasLayer = 0;      // the slot: the atlas layer it was drawn into
  float coverage = 0.0f;   // the draw's coverage mark: the w of the texels it covered, on the GPU
  std::vector<HemicubeFace> faces;
  std::vector<glm::vec4> positions;        // atlas, row-major, bottom row first (GL order)
  std::vector<glm::vec4> normalsGeometry;  // xyz normal facing the centre, w = g
  [[nodiscard]] int width() const { return resolution; }
  [[nodiscard]] int height() const { return resolution == 0 ? 0 : int(positions.size()) / resolution; }
  // The atlas rows its faces take: 3H for a hemicube, 6H for a full cube.
  [[nodiscard]] int atlasRows() const { return faces.empty() ? 0 : faces.back().firstRow + faces.back().rows; }
};

// Face layout of a hemicube (5 faces) or full cube (6 faces) around `axis` at resolution H.
std::vector<HemicubeFace> hemicubeFaces(const glm::vec3& axis, int resolution, bool fullCube);

// Solid angle (sr) of atlas pixel (x, row) of `face`, from ibrr::hemicubePixelSolidAngle.
float atlasPixelSolidAngle(const HemicubeFace& face, int resolution, int x, int row);

class HemicubeRenderer {
public:
  // maxResolution: the largest H to be rendered (the atlas is allocated once, for full cubes).
  // slots: how many hemicubes the atlas holds at once (its layers); at most GL's array layers.
  HemicubeRenderer(const SceneRenderer& renderer, const scene::Scene& scene, int maxResolution, int slots = 1);

  // Renders the faces for `source` at resolution H (even, ≤ maxResolution) into slot 0 and reads
  // them back into `capture` (its buffers are reused across calls). Point sources get a full cube.
  void render(const HemicubeSource& source, int resolution, HemicubeCapture& capture);
  // Queues the hemicube of `source` for `slot`, to be drawn with the rest of its batch by the next submit(), and
  // fills the layout of `capture` (source, centre, the slot, faces with their matrices) but not its pixel
  // buffers. Submits the batch queued so far first when it holds this slot already, or when it holds as many
  // face layouts as the viewports can tell apart (maxBatchLayouts()).
  void draw(const HemicubeSource& source, int resolution, HemicubeCapture& capture, int slot = 0);
  // Draws every queued hemicube in one pass, without waiting for the GPU, its GPU time measured by a query
  // (gpuPassSeconds()); waitForGpu: with a glFinish instead, timed with the drawing. The atlas stays on the GPU
  // (positionTexture()).
  void submit(bool waitForGpu = false);
  // Reads the atlas of the draw() that filled `capture` into it, w = 1 where that draw covered a texel, else 0
  // (submitting the queued hemicubes first).
  void readBack(HemicubeCapture& capture);

  [[nodiscard]] int slots() const { return m_slots; }
  // The most face layouts (a resolution H, and a hemicube or a full cube) one pass holds: a face's viewport
  // index tells its layout and its face. GL's 16 viewports hold two.
  [[nodiscard]] int maxBatchLayouts() const { return m_maxBatchLayouts; }
  // The coverage marks: 1 .. kCoverageMarks, every one exact in a float; after the last they start over at 1.
  static constexpr std::uint32_t kCoverageMarks = (1u << 24) - 1;
  // For tests of the marks' start-over: the next draw takes mark + 1 (1 when mark is the last).
  void setLastCoverageMark(std::uint32_t mark) { m_lastCoverage = std::min(mark, kCoverageMarks); }
  // The bytes of GPU memory one slot of an atlas for resolution H takes (its two float targets and depth).
  [[nodiscard]] static std::uint64_t slotBytes(int maxResolution);

  // The atlas's 2D array textures (sampler2DArray, a layer a slot).
  [[nodiscard]] GLuint positionTexture() const { return m_positionTarget.id(); }
  [[nodiscard]] GLuint normalTexture() const { return m_normalTarget.id(); }  // xyz normal, w = g
  // The distance, in world units, by which a surface VPL is moved off its surface.
  [[nodiscard]] float surfaceOffset() const { return m_surfaceOffset; }

  // Totals since construction: seconds spent queueing and submitting hemicubes (with the waits that render()
  // and submit(true) add), passes drawn and triangles submitted (over all faces, after culling).
  [[nodiscard]] double renderSeconds() const { return m_renderSeconds; }
  // The GPU time of the passes submitted without waiting (waits for the last of them).
  [[nodiscard]] double gpuPassSeconds() const { return m_passTime.seconds(); }
  [[nodiscard]] std::uint64_t passes() const { return m_passes; }
  [[nodiscard]] std::uint64_t trianglesSubmitted() const { return m_trianglesSubmitted; }
  // Seconds spent in the last readBack().
  [[nodiscard]] double lastReadbackSeconds() const { return m_lastReadbackSeconds; }

private:
  // hemicube.vert's HemicubeFaceDraw and hemicube.frag's HemicubeSourceDraw (std430).
  struct FaceDraw {
    glm::mat4 viewProjection;
    std::int32_t hemicube, layer, viewport, unused;
  };
  struct SourceDraw {
    glm::vec4 centreCoverage;
    glm::vec4 axis;
    glm::vec2 spotCos;
    std::int32_t profile, unused;
  };
  // The coverage mark of the next draw into `slot`, whose colour targets it clears first if they may hold it.
  float nextCoverage(int slot);
  // The viewport index of the batch's first face of this layout (its faces follow), submitting the batch first
  // when it holds as many layouts as it can.
  int batchViewports(int resolution, bool fullCube);

  const SceneRenderer& m_renderer;
  int m_maxResolution;
  int m_slots;
  int m_maxBatchLayouts;
  float m_nearPlane;  // world units
  float m_farPlane;
  float m_surfaceOffset;  // the centre is moved this far along the axis, off its own surface
  Texture m_positionTarget;  // 2D arrays, a layer a slot
  Texture m_normalTarget;
  Texture m_depthTarget;
  Framebuffer m_batchFramebuffer;           // every layer of the three targets: the pass draws into it
  std::vector<Framebuffer> m_framebuffers;  // one a slot, its layer of the colour targets: their clears
  std::uint32_t m_lastCoverage = 0;  // the mark of the last draw (0: none yet)
  std::uint32_t m_coverageRound = 1;  // how many times the marks have started from 1
  std::vector<std::uint32_t> m_slotRound;  // per slot: the round its colour targets were last cleared in
  // The queued batch: per face, its draw record and matrix; per hemicube, its VPL; the face layouts (their faces'
  // viewports are 6·k + face for the k-th); which slots it holds.
  struct BatchLayout {
    int resolution = 0;
    bool fullCube = false;
    bool operator==(const BatchLayout&) const = default;
  };
  std::vector<FaceDraw> m_faces;
  std::vector<glm::mat4> m_faceViewProjections;
  std::vector<SourceDraw> m_sources;
  std::vector<BatchLayout> m_batchLayouts;
  std::vector<bool> m_slotQueued;
  Buffer m_faceBuffer, m_sourceBuffer;
  Program m_program;
  double m_renderSeconds = 0.0;
  GpuTimeTotal m_passTime;
  double m_lastReadbackSeconds = 0.0;
  std::uint64_t m_passes = 0;
  std::uint64_t m_trianglesSubmitted = 0;
};

}  // namespace ibrr::gpu
