#pragma once
// Showing a solved lightmap from any camera. The lightmap holds exitant radiance L = L_e + ρ·H per
// texel, with ρ the texel's albedo averaged over its square; display divides that albedo out to get
// the incident radiance H (irradiance/π), dilates it for display and samples it bilinearly at each
// pixel's lightmap UV, then multiplies by the pixel's own albedo (material × texture) and adds the
// pixel's emission: L(pixel) = L_e(pixel) + ρ(pixel)·H. On a surface of uniform albedo that is
// the lightmap's L itself; on a textured one the texture's detail and emitters smaller than a texel
// survive any lightmap density (the seed paper's texture-space patches multiply the same way).
#include "gpu/resources.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_mesh.hpp"
#include "util/image.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <vector>

namespace ibrr::lightmap {

// The radiance with every invalid texel near a chart filled, for display only (solvers never see
// it, so no energy is added): each chart owns its footprint grown by max(1, padding/2) texels, and
// ring after ring every owned texel next to filled texels of its chart (8-neighbourhood) takes
// their average, until the owned region is full. Bilinear lookups at a chart's points read only
// texels within one texel of its footprint, i.e. its own: no dark seams, no bleeding between
// charts (with padding ≥ 2; with 1 the shared gap takes the first chart's values).
[[nodiscard]] std::vector<glm::vec3> dilateForDisplay(const LightmapAtlas& atlas, const PatchList& patches,
                                                      const std::vector<glm::vec3>& radiance);
// The same with the texels whose values are known given by `known` (a subset of the valid texels):
// unknown valid texels are filled like padding, from their chart's known texels.
[[nodiscard]] std::vector<glm::vec3> dilateForDisplay(const LightmapAtlas& atlas, const PatchList& patches,
                                                      const std::vector<glm::vec3>& values,
                                                      const std::vector<std::uint8_t>& known);

// The incident radiance H = max(0, (L − L_e)/ρ) of each valid texel, per channel where its albedo
// ρ is at least kMinimumDisplayAlbedo (a channel below takes the mean of the others); a texel
// black in every channel cannot give H (known = 0: display fills it from its chart's neighbours,
// or, in a chart with no known texel, takes the nearest known texel's H in the world, within 3
// texel sizes, facing the same way). Padding: 0, unknown.
inline constexpr float kMinimumDisplayAlbedo = 1e-3f;
struct IncidentRadiance {
  std::vector<glm::vec3> values;
  std::vector<std::uint8_t> known;
};
[[nodiscard]] IncidentRadiance incidentRadiance(const LightmapAtlas& atlas, const PatchList& patches,
                                                const std::vector<glm::vec3>& radiance);
// What the display samples: the incident radiance H of a lightmap's radiance, dilated (every texel near a
// chart filled). The lightmap display's texture and `ibrr export`'s light texture.
[[nodiscard]] std::vector<glm::vec3> displayIncidentRadiance(const LightmapAtlas& atlas, const PatchList& patches,
                                                             const std::vector<glm::vec3>& radiance);

// A view's colour (RGBA32F: radiance, alpha 1 where a surface is seen) and depth target, kept on the GPU: the
// viewer shows its texture without a readback.
class LightmapViewTarget {
public:
  LightmapViewTarget(int width, int height);
  [[nodiscard]] int width() const { return m_width; }
  [[nodiscard]] int height() const { return m_height; }
  [[nodiscard]] GLuint texture() const { return m_colour.id(); }
  [[nodiscard]] GLuint framebuffer() const { return m_framebuffer.id(); }

private:
  int m_width;
  int m_height;
  gpu::Texture m_colour;
  gpu::Renderbuffer m_depth;
  gpu::Framebuffer m_framebuffer;
};

class LightmapDisplay {
public:
  // Needs a current GL context. The lightmap must match the atlas (width, height).
  LightmapDisplay(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                  const Lightmap& lightmap);

  // Draws the scene into the bound framebuffer (colour attachment 0: vec4(radiance, 1)) with the
  // depth test on. Back faces show ρ·H without emission (emitters emit from the front only).
  void draw(const glm::mat4& viewProjection) const;

  // Draws one view into `target`, cleared first (uncovered pixels 0), on the GPU only; supersample N > 1: as N×N
  // tiles of the view, each moved by its sub-pixel offset (util/supersample.hpp).
  void drawView(const glm::mat4& viewProjection, const LightmapViewTarget& target, int supersample = 1) const;

  // Renders one view into an image (row 0 at the top; uncovered pixels 0) and its coverage: drawView and a readback.
  struct View {
    Image radiance;
    std::vector<std::uint8_t> covered;
  };
  [[nodiscard]] View render(const glm::mat4& viewProjection, int width, int height, int supersample = 1) const;
  // A view drawn into `target` (drawView), read back.
  [[nodiscard]] static View readView(const LightmapViewTarget& target);

  [[nodiscard]] GLuint texture() const { return m_texture.id(); }

private:
  LightmapMesh m_mesh;
  gpu::Texture m_texture;  // RGB32F dilated incident radiance H, bilinear, clamped to edge
  std::vector<scene::Material> m_materials;
  std::vector<gpu::Texture> m_albedoTextures;
  gpu::Program m_program;
  glm::vec2 m_atlasSize;
};

}  // namespace ibrr::lightmap
