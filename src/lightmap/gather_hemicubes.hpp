#pragma once
// The GPU half of the hemicube gathering solver (Tjahyono, Lutteroth & Wünsche, §IV.B–C): one
// hemicube per valid lightmap texel, many at once in the layers of a 2D texture array, weighted by
// a multiplier map and reduced to one value per texel by a compute shader.
//
// Hemicube layout (the project's, src/gpu/hemicube.hpp): a layer is H pixels wide and 3H rows
// high: the front face (along the texel normal) in rows [0, H), then four half faces of H/2 rows
// each, keeping the part of their 90° frustum above the tangent plane. Each texel's hemicube is
// turned about its normal by a fixed pseudo-random angle in [−π, π) (trading banding for noise).
//
// Units: radiance L in W·sr⁻¹·m⁻² (scene units), lengths in scene units.
#include "gpu/hemicube.hpp"
#include "gpu/resources.hpp"
#include "lightmap/atlas.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <vector>

namespace ibrr::lightmap {

// Rows of one hemicube layer at resolution H: H for the front face + 4 · H/2 for the half faces.
constexpr int gatherLayerRows(int resolution) { return 3 * resolution; }

// The multiplier map (paper Fig. 2) for resolution H (even): per layer pixel, row-major from the
// first (bottom, GL) row, H × 3H values
//   w_k = cosθ_k · dω_k / π,
// the Lambert cosine to the normal times the pixel's solid angle (ibrr::hemicubePixelSolidAngle),
// divided by its discrete sum so that Σ w_k = 1 exactly (the continuous integral
// ∫ cosθ dω / π over the hemisphere is 1; the discrete sum differs by O(1/H²)). Then for a
// Lambertian receiver the gathered Σ w_k L_k is E/π, its irradiance over π, and B/π = L_e + ρ Σ w_k L_k.
std::vector<float> gatherMultiplierMap(int resolution);

// The fixed rotation about the normal of texel `texelIndex`'s hemicube, radians in [−π, π):
// a hash of (seed, texel index), the same on every run.
float gatherHemicubeRotation(std::uint32_t seed, std::uint32_t texelIndex);

// Where and how each valid texel's hemicube looks.
struct GatherHemicubeSetup {
  float eyeOffset = 0.0f;  // the eye sits this far above the texel along its normal (scene units)
  float nearPlane = 0.0f;  // scene units
  float farPlane = 0.0f;
  std::uint32_t seed = 1;      // rotation seed
  bool randomRotation = true;  // false: every hemicube uses the same tangent frame (banding)
};

// A sensible setup for an atlas: the eye a tenth of a texel off the surface, the near plane at half
// that, the far plane beyond the scene's diagonal.
GatherHemicubeSetup defaultHemicubeSetup(const scene::Scene& scene, const LightmapAtlas& atlas, std::uint32_t seed,
                                         bool randomRotation);

// Per atlas texel, the atlas index of the texel a hemicube sees where a surface's lightmap UV falls
// into it: itself when valid; for padding, the nearest valid texel of its 8 neighbours (UVs on a
// chart's border round into the padding beside it); -1 when there is none.
std::vector<std::int32_t> seenTexelMap(const PatchList& patches);

// What a hemicube pixel stores.
enum class GatherTarget {
  Radiance,  // RGBA32F: the radiance of the lightmap texel seen (0 where nothing or a back face is seen)
  TexelId,   // R32UI: 1 + the atlas index of the texel seen (0 where nothing or a back face is seen)
};

// Triangles per culling chunk of the gathering hemicubes: small enough that a chunk's box is
// tight (a wall, a chair), large enough that the commands stay few (331 per face for the
// conference room's 331K triangles).
inline constexpr std::size_t kGatherChunkTriangles = 1024;

// Renders the hemicubes of a run of valid texels into the layers of a texture array with one
// multi-draw per batch. The atlas triangles are sorted along a Morton curve of their centroids and
// cut into chunks of kGatherChunkTriangles with bounding boxes; per batch a compute pass culls every
// (chunk, face) pair whose box lies outside the face's frustum and writes one indirect draw command
// per pair (instanceCount 0 when culled; fixed slots, so the draw order and every pixel are those of
// drawing everything). A command's baseInstance is its slot 5·hemicube + face, read back through an
// instanced attribute; the vertex shader routes the chunk with gl_Layer and gl_ViewportIndex
// (GL_ARB_shader_viewport_layer_array) to its layer and to the viewport of its face. A hemicube
// then draws each triangle about once (the faces its chunk meets) instead of five times, and
// nothing behind its texel's tangent plane.
class GatherHemicubeRenderer {
public:
  // `hemicubeTexels`: the atlas indices of the texels that get a hemicube, in hemicube order.
  // maxResolution: the largest H to be rendered; layers: hemicubes per batch (texture-array depth).
  // chunkTriangles: triangles per culling chunk (tests use small ones on small scenes).
  GatherHemicubeRenderer(const LightmapAtlas& atlas, const PatchList& patches,
                         const std::vector<std::uint32_t>& hemicubeTexels, const GatherHemicubeSetup& setup,
                         int maxResolution, int layers, GatherTarget target,
                         std::size_t chunkTriangles = kGatherChunkTriangles);

  // Draws hemicubes [first, first + count) (count ≤ layers()) at resolution H into layers
  // [0, count). `seen` (atlas-sized) is what a hemicube pixel sees through each atlas texel
  // (nearest sampling): Radiance mode, RGBA32F radiance; TexelId mode, R32I seenTexelMap().
  void render(std::size_t first, int count, int resolution, GLuint seen);

  [[nodiscard]] GLuint arrayTexture() const { return m_colour.id(); }
  [[nodiscard]] int layers() const { return m_layers; }
  [[nodiscard]] int maxResolution() const { return m_maxResolution; }
  [[nodiscard]] std::size_t hemicubeCount() const { return m_hemicubeCount; }
  // Reads layers [0, count) of the last render at resolution H: H × 3H texels per layer, layer
  // after layer, rows bottom-first. Radiance mode: RGBA; TexelId mode: use readIds.
  std::vector<glm::vec4> readRadiance(int count, int resolution) const;
  std::vector<std::uint32_t> readIds(int count, int resolution) const;

private:
  int m_maxResolution;
  int m_layers;
  GatherTarget m_target;
  std::size_t m_hemicubeCount = 0;
  std::size_t m_chunkCount = 0;
  std::size_t m_vertexCount = 0;
  gpu::Buffer m_vertices;        // the atlas's LightmapVertex list, chunk by chunk
  gpu::Buffer m_chunks;          // per chunk: box, first vertex, vertex count (std430)
  gpu::Buffer m_slots;           // 0 .. 5·layers − 1, the instanced attribute that names a face
  gpu::Buffer m_commands;        // per (face slot, chunk): DrawArraysIndirectCommand
  gpu::VertexArray m_vertexArray;
  gpu::Buffer m_faceMatrices;  // per hemicube 5 mat4 (world → clip of each face), std430
  gpu::Texture m_colour;
  gpu::Texture m_depth;
  gpu::Framebuffer m_framebuffer;
  gpu::Program m_program;
  gpu::Program m_cullProgram;
};

// The weighted reduction (paper §IV.C) as one compute dispatch per batch: workgroup k sums
// w_j · L_j over the 3H² pixels of layer k and writes the texel's new radiance
//   L = base + ρ · Σ_j w_j L_j
// into `output` (an RGBA32F image, alpha 1).
class GatherReduction {
public:
  // `hemicubeTexels` as for the renderer; ρ is read from `patches`.
  GatherReduction(const PatchList& patches, const std::vector<std::uint32_t>& hemicubeTexels);
  // Reduces layers [0, count) of `hemicubes` (hemicubes [first, first + count)) at resolution H.
  void reduce(GLuint hemicubes, std::size_t first, int count, int resolution, GLuint base, GLuint output);

private:
  const gpu::Buffer& multiplierBuffer(int resolution);

  gpu::Buffer m_patches;                                   // per hemicube: ivec2 texel, vec4 albedo (std430)
  std::vector<std::pair<int, gpu::Buffer>> m_multipliers;  // per resolution
  gpu::Program m_program;
};

}  // namespace ibrr::lightmap
