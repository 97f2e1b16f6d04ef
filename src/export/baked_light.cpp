#include "export/baked_light.hpp"

#include "lightmap/lightmap_display.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/memory.hpp"
#include "util/progress.hpp"

#include <tbb/parallel_for.h>

#include <numbers>

namespace ibrr::exporter {
namespace {

// The texels' patch list, after checking that the export's memory is there. Per texel: the patch list (58
// bytes), the light before and after dilation (about 60), the PNG, the half floats and the file's and the page's
// copies of them (about 60): 200 bytes with the working copies.
lightmap::PatchList exportPatches(const scene::Scene& scene, const lightmap::LightmapAtlas& atlas) {
  const std::string size = std::to_string(atlas.width) + "x" + std::to_string(atlas.height);
  requireMemory(std::uint64_t(atlas.width) * std::uint64_t(atlas.height) * 200, "an export of " + size + " texels",
                "lower --atlas or --texel-density");
  info("export: the light on " + size + " texels");
  return lightmap::rasterizePatches(scene, atlas);
}

std::size_t countValid(const lightmap::PatchList& patches) {
  std::size_t valid = 0;
  for (const std::uint8_t v : patches.valid) valid += v;
  return valid;
}

}  // namespace

BakedLight lightFromStore(const LayeredDepthCube& store, const lightmap::LightmapAtlas& atlas,
                          const lightmap::PatchList& patches, RetrievalFilter filter) {
  BakedLight light;
  light.width = atlas.width;
  light.height = atlas.height;
  const std::size_t texelCount = patches.texelCount();
  std::vector<glm::vec3> incident(texelCount, glm::vec3(0.0f));
  std::vector<std::uint8_t> known(texelCount, 0);
  Progress progress("store lookups", std::uint64_t(atlas.height), "atlas rows");
  tbb::parallel_for(0, atlas.height, [&](int y) {
    if (interruptRequested()) return;
    for (int x = 0; x < atlas.width; ++x) {
      const std::size_t t = std::size_t(y) * std::size_t(atlas.width) + std::size_t(x);
      if (!patches.valid[t]) continue;
      // The store holds radiosity B before ρ: a surface of albedo ρ shows ρ·B/π, so H = B/π.
      if (const auto radiosity = store.radiosity(patches.position[t], patches.normal[t], filter)) {
        incident[t] = *radiosity * std::numbers::inv_pi_v<float>;
        known[t] = 1;
      }
    }
    progress.advance(1);
  });
  throwIfInterrupted();
  progress.finish();
  light.validTexels = countValid(patches);
  for (std::size_t t = 0; t < texelCount; ++t) light.holeTexels += patches.valid[t] && !known[t];
  light.incident = lightmap::dilateForDisplay(atlas, patches, incident, known);
  std::vector<glm::vec3> radiance(texelCount, glm::vec3(0.0f));
  for (std::size_t t = 0; t < texelCount; ++t)
    if (patches.valid[t]) radiance[t] = patches.emission[t] + patches.albedo[t] * light.incident[t];
  light.radiance = lightmap::dilateForDisplay(atlas, patches, radiance);
  return light;
}

BakedLight lightFromLightmap(const lightmap::Lightmap& lightmap, const lightmap::LightmapAtlas& atlas,
                             const lightmap::PatchList& patches) {
  if (lightmap.width != atlas.width || lightmap.height != atlas.height)
    throw Error("the lightmap is " + std::to_string(lightmap.width) + "x" + std::to_string(lightmap.height) +
                " texels but its atlas " + std::to_string(atlas.width) + "x" + std::to_string(atlas.height));
  BakedLight light;
  light.width = atlas.width;
  light.height = atlas.height;
  light.validTexels = countValid(patches);
  light.incident = lightmap::displayIncidentRadiance(atlas, patches, lightmap.radiance);
  light.radiance = lightmap::dilateForDisplay(atlas, patches, lightmap.radiance);
  return light;
}

AtlasLight storeLightOnAtlas(const scene::Scene& scene, const LayeredDepthCube& store,
                             const lightmap::AtlasOptions& atlasOptions, RetrievalFilter filter) {
  AtlasLight out;
  out.atlas = lightmap::buildAtlas(scene, atlasOptions);
  out.light = lightFromStore(store, out.atlas, exportPatches(scene, out.atlas), filter);
  return out;
}

BakedLight lightmapLight(const scene::Scene& scene, const lightmap::Lightmap& lightmap,
                         const lightmap::LightmapAtlas& atlas) {
  return lightFromLightmap(lightmap, atlas, exportPatches(scene, atlas));
}

}  // namespace ibrr::exporter
