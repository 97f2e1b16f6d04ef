#pragma once
// Showing a solved lightmap from any camera: the radiance atlas, dilated for display, sampled
// with bilinear filtering at each pixel's lightmap UV. Camera pixel radiance = the sampled
// lightmap radiance (emission is inside it), linear, like every other method.
#include "display/image.hpp"
#include "gpu/resources.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_mesh.hpp"

#include <glm/glm.hpp>

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

class LightmapDisplay {
public:
  // Needs a current GL context. The lightmap must match the atlas (width, height).
  LightmapDisplay(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                  const Lightmap& lightmap);

  // Draws the scene into the bound framebuffer (colour attachment 0: vec4(radiance, 1)) with the
  // depth test on. Back faces show the radiance less their material's emission (emitters emit
  // from the front only).
  void draw(const glm::mat4& viewProjection) const;

  // Renders one view into an image (row 0 at the top; uncovered pixels 0) and its coverage.
  struct View {
    display::Image radiance;
    std::vector<std::uint8_t> covered;
  };
  [[nodiscard]] View render(const glm::mat4& viewProjection, int width, int height) const;

  [[nodiscard]] GLuint texture() const { return m_texture.id(); }

private:
  LightmapMesh m_mesh;
  gpu::Texture m_texture;          // RGB32F dilated radiance, bilinear, clamped to edge
  gpu::Buffer m_materialEmission;  // vec4 per material
  gpu::Program m_program;
  glm::vec2 m_atlasSize;
};

}  // namespace ibrr::lightmap
