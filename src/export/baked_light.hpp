#pragma once
// The baked light of a scene on its lightmap atlas, for `ibrr export`: per atlas texel the incident
// radiance H (W·sr⁻¹·m⁻² per unit albedo; a surface of albedo ρ and emission L_e shows
// L = L_e + ρ·H, as `ibrr render` shows it) and that radiance L itself, both dilated around the charts
// as the lightmap display dilates them, so bilinear lookups at chart edges read no black padding.
#include "ibrr/ldc.hpp"
#include "lightmap/atlas.hpp"

#include <glm/glm.hpp>

#include <cstddef>
#include <vector>

namespace ibrr::exporter {

struct BakedLight {
  int width = 0;  // the atlas's, texels
  int height = 0;
  std::vector<glm::vec3> incident;  // H per texel, row-major, row 0 = atlas row 0
  std::vector<glm::vec3> radiance;  // L = L_e + ρ·H per texel (ρ, L_e the texel's own)
  std::size_t validTexels = 0;
  std::size_t holeTexels = 0;  // valid texels no store layer matched: filled from their chart's neighbours
};

// A store sampled at every valid texel's point and front normal with the display's plane match and
// `filter` (B/π = H); TBB-parallel over rows with progress, Ctrl-C stops it (ibrr::Interrupted).
BakedLight lightFromStore(const LayeredDepthCube& store, const lightmap::LightmapAtlas& atlas,
                          const lightmap::PatchList& patches, RetrievalFilter filter);

// A lightmap's own texels: L is its radiance (unchanged on valid texels), H its incident radiance
// (lightmap::displayIncidentRadiance, what `ibrr render --lightmap` samples).
BakedLight lightFromLightmap(const lightmap::Lightmap& lightmap, const lightmap::LightmapAtlas& atlas,
                             const lightmap::PatchList& patches);

// The light of a store on an atlas built with `atlasOptions` (for `ibrr export --store` and compare's pages), and
// of a lightmap on its own atlas: the memory counted first (requireMemory, 200 bytes a texel, naming --atlas),
// then the atlas's texels rasterised (a GL 4.5 context must be current) and the light taken as above.
struct AtlasLight {
  lightmap::LightmapAtlas atlas;
  BakedLight light;
};
AtlasLight storeLightOnAtlas(const scene::Scene& scene, const LayeredDepthCube& store,
                             const lightmap::AtlasOptions& atlasOptions, RetrievalFilter filter);
BakedLight lightmapLight(const scene::Scene& scene, const lightmap::Lightmap& lightmap,
                         const lightmap::LightmapAtlas& atlas);

}  // namespace ibrr::exporter
