#pragma once
// What the two shooting solvers share (progressive refinement, progressive.hpp; stochastic
// iteration, stochastic.hpp): the valid texels as the shoot shaders read them, and the visibility
// pass that renders the scene from a shooting point by hemispherical projection (GPU Gems 2 ch. 39,
// listing 39-2; seed 000 §3.2) into a distance + chart buffer. The receiver side of a shot (the
// visibility test against that buffer and the texel form factors) is shaders/lightmap_shoot.glsl.
#include "gpu/resources.hpp"
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ibrr::lightmap {

// Receivers closer to a shooter (a cluster or one texel of area A) than this many times √A (its
// side, for a square) take the exact per-texel polygon form factors instead of the disc formula
// A cosθ cosθ' / (π d² + A), whose relative under-estimate A / (π d² + A) is then below 2%
// (texelFormFactor() in shaders/lightmap_shoot.glsl).
inline constexpr float kNearFieldSides = 4.0f;

// One valid texel as the shoot shaders read it (std430, 64 bytes; struct Receiver in
// lightmap_shoot.glsl).
struct GpuReceiver {
  glm::vec4 positionArea;    // world position (scene units), area A (scene units²)
  glm::vec4 normal;          // unit, front side
  glm::vec4 albedo;          // ρ
  glm::uvec4 chartShooter;   // chart, the shooter it belongs to (a progressive cluster, or itself), -, -
};

// The world displacement of one texel step along the atlas x and y axes (std430, 32 bytes).
struct GpuTexelAxes {
  glm::vec4 u;  // ∂P/∂u
  glm::vec4 v;  // ∂P/∂v
};

// ∂P/∂u and ∂P/∂v of an atlas triangle: [p1 − p0, p2 − p0] · [uv1 − uv0, uv2 − uv0]⁻¹ (0 for a
// degenerate one). The near-field form factor integrates over the texel's parallelogram P ± ½∂P/∂u ± ½∂P/∂v.
GpuTexelAxes triangleTexelAxes(const LightmapAtlas& atlas, std::uint32_t triangle);

// Shooters: blocks of B×B texels of one chart (aligned to the chart's footprint; the substructuring
// of GPU Gems 2 ch. 39), emitting (block side emitterBlock) and reflecting (block) texels apart.
struct ShooterClusters {
  std::vector<std::uint32_t> first;    // C + 1 offsets into texels
  std::vector<std::uint32_t> texels;   // compact valid-texel indices, cluster by cluster
  std::vector<std::uint32_t> ofTexel;  // the cluster of each compact texel
  std::vector<glm::vec3> centroid;     // area-weighted mean position (scene units)
  std::vector<glm::vec3> normal;       // area-weighted mean normal, unit
  std::vector<float> area;             // Σ A (scene units²)
  [[nodiscard]] std::size_t size() const { return area.size(); }
  [[nodiscard]] std::uint32_t largest() const;  // the most texels in one cluster
};
ShooterClusters buildShooterClusters(const LightmapAtlas& atlas, const PatchList& patches,
                                     std::span<const std::uint32_t> texels, int block, int emitterBlock);

// Per valid texel (`texels`, atlas indices): its receiver record, with chartShooter.y = shooterOf[i],
// and its texel axes.
struct ShootReceivers {
  std::vector<GpuReceiver> receivers;
  std::vector<GpuTexelAxes> axes;
};
ShootReceivers makeShootReceivers(const LightmapAtlas& atlas, const PatchList& patches,
                                  std::span<const std::uint32_t> texels, std::span<const std::uint32_t> shooterOf);

// Reads the per-valid-texel radiance (vec4 per texel, `texels` order) from `buffer` into the
// atlas-sized `radiance` (invalid texels untouched) and returns its mean over the valid texels.
// `scratch` is reused between calls.
glm::dvec3 readTexelRadiance(const gpu::Buffer& buffer, std::span<const std::uint32_t> texels,
                             std::vector<glm::vec4>& scratch, std::vector<glm::vec3>& radiance);

// Row-major frame of a shooter with unit normal n: rows tangent, bitangent, n (so M·v is v in its
// frame). Uploaded as a GLSL mat3 it is the same matrix.
glm::mat3 shooterFrame(const glm::vec3& normal);

float meanRgb(const glm::vec3& c);

// Throws ibrr::Error naming the scene file when a shooting solver (`method`, e.g. "progressive
// refinement") cannot light it: point or spot lights (no texels to shoot from) or no emissive
// surface. No GPU needed.
void checkShootingScene(const scene::Scene& scene, const std::string& method);

template <typename T>
gpu::Buffer makeStorageBuffer(const std::vector<T>& data, GLbitfield flags = 0) {
  return gpu::Buffer(GLsizeiptr(std::max<std::size_t>(data.size(), 1) * sizeof(T)),
                     data.empty() ? nullptr : data.data(), flags);
}

// The visibility pass: every atlas triangle, tessellated (hemispherical projection bends edges;
// straight rasterised edges need short ones) until no edge is longer than maxEdgeFraction of the
// scene diagonal, rendered from a shooting point into `layers` RG32F layers of side `resolution`
// (distance to the nearest surface in scene units, that surface's chart; cleared to 1e30, −1).
// Splits every triangle into k² congruent ones, k = ceil(longest edge / maxEdge) (k = 1 when
// maxEdge ≤ 0); returns the corners (3 per triangle) and each output triangle's source triangle.
struct TessellatedTriangles {
  std::vector<glm::vec3> corners;
  std::vector<std::uint32_t> source;
};
TessellatedTriangles tessellateTriangles(std::span<const glm::vec3> corners, float maxEdge);

class HemisphereVisibility {
public:
  HemisphereVisibility(const scene::Scene& scene, const LightmapAtlas& atlas, double maxEdgeFraction, int resolution,
                       int layers = 1);
  // Renders the view from `shooter` (world position) over the hemisphere of unit `normal` into
  // `layer`. Leaves the default framebuffer bound and the depth test off.
  void render(const glm::vec3& shooter, const glm::vec3& normal, int layer = 0) const;

  [[nodiscard]] GLuint texture() const { return m_distanceChart.id(); }  // a 2D array of `layers`
  [[nodiscard]] int resolution() const { return m_resolution; }
  [[nodiscard]] std::size_t triangles() const { return m_vertexCount / 3; }  // after tessellation
  // Absolute slack of the receivers' depth test (scene units): of the order of the near plane.
  [[nodiscard]] float depthEpsilon() const { return m_depthEpsilon; }

private:
  int m_resolution = 0;
  int m_layers = 1;
  float m_depthEpsilon = 0.0f;
  std::size_t m_vertexCount = 0;
  gpu::Buffer m_vertices;
  gpu::VertexArray m_vertexArray;
  gpu::Texture m_distanceChart;
  gpu::Renderbuffer m_depth;
  gpu::Framebuffer m_framebuffer;
  gpu::Program m_program;
};

}  // namespace ibrr::lightmap
