#pragma once
// `ibrr export`'s files: the scene with its baked light as one binary glTF 2.0 file, and the
// walkthrough page that shows it in a browser (docs/export.md has the format and how viewers show it).
//
// The .glb: one node of world-space triangles, one primitive per material (positions, flat normals,
// TEXCOORD_0 for the albedo texture, TEXCOORD_1 on the lightmap atlas), every material
// KHR_materials_unlit with the displayed light as its base colour texture (8-bit sRGB of
// tone(2^exposure · L) on TEXCOORD_1), so any glTF viewer shows the bake; and, for viewers that apply
// their own albedo, extras.ibrr: the linear incident radiance H (RGBA half floats in a bufferView)
// and each material's albedo, albedo texture and emission. The manifest's cameras become cameras.
#include "export/baked_light.hpp"
#include "ibrr/ldc.hpp"
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ibrr::exporter {

// The light texture's atlas side for a store, texels: about the store's pixel size at its default R = 256 on a
// scene whose largest wall spans the cube.
inline constexpr int kDefaultAtlasSize = 1024;

struct ExportDescription {
  std::string source;  // "store" or "lightmap"
  std::string method;  // what made it: "ibrr", "gather", ...
  ToneMapping tone;    // the light texture's exposure and curve; the page starts with them
};

// The .glb's bytes. Throws ibrr::Error if it would pass the format's 4 GiB.
std::vector<std::uint8_t> buildGlb(const scene::Scene& scene, const lightmap::LightmapAtlas& atlas,
                                   const BakedLight& light, const ExportDescription& description);

// Where the page's template (page.html) and its bundled script (walkthrough.js) are: $IBRR_WEB_DIR, else
// the build's web/ folder.
std::filesystem::path webDirectory();
// Throws ibrr::Error naming the missing file and how to build it, before any long work.
void checkWebFiles();

// The self-contained page: the template with the title, the glb in base64 and the script inline.
std::string buildPage(const std::string& title, const std::vector<std::uint8_t>& glb,
                      const ExportDescription& description);

// The walkthrough page of a store (on an atlas of kDefaultAtlasSize, read with the bilinear filter) or of a
// lightmap (on its own atlas), with the export's defaults: what `ibrr compare --export` links from its report.
// Need a current GL context (the atlas's texels are rasterised on the GPU).
std::string storePage(const scene::Scene& scene, const LayeredDepthCube& store, const std::string& method);
std::string lightmapPage(const scene::Scene& scene, const lightmap::Lightmap& lightmap,
                         const lightmap::LightmapAtlas& atlas, const lightmap::PatchList& patches);
// The page's title: "SCENE — METHOD (ibrr export)".
std::string pageTitle(const scene::Scene& scene, const std::string& method);

}  // namespace ibrr::exporter
