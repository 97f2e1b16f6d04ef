#pragma once
// The lightmap atlas shared by every texel-lightmap solver (gathering, progressive refinement,
// stochastic iteration, form-factor matrix): lightmap UVs for any mesh, the patch list of valid
// texels, and the world-space triangle list with those UVs that solvers draw.
//
// Conventions (all solvers rely on them):
// - Atlas texel (x, y) covers UV [x, x+1) × [y, y+1) in *texel units*; its centre is (x+½, y+½).
//   Texel index = y·width + x; row y = 0 is the first row in memory, which is also GL's first row
//   (texture coordinate v = (y+½)/height), so a std::vector of texels uploads to a GL texture as is.
// - Lightmap UVs are stored in texel units; normalised UV = uv / (width, height).
// - Lengths are in scene units; texel area in scene units².
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ibrr::lightmap {

struct AtlasOptions {
  float texelsPerUnit = 0.0f;       // texel density (texels per scene unit); 0 = derive from targetSize
  int targetSize = 256;             // used when texelsPerUnit = 0: pick the density so the atlas fits targetSize²
  int paddingTexels = 2;            // empty texels kept between charts (bilinear display and dilation need ≥ 1)
  float chartNormalCosine = 0.98f;  // triangles join a chart when their normals agree this well
  // Charts near a light get this many times the density (its square in texels): the 1/r² hot spot
  // beside a lamp is narrower than a texel of the rest. "Near": the chart's world box within
  // kEmitterReachTexels texels (at the base density) of an emitting chart's box. 1 = uniform.
  int emitterRefinement = 1;
};
inline constexpr double kEmitterReachTexels = 2.0;
inline constexpr int kMaxEmitterRefinement = 8;
// The atlas side a caller may ask for (AtlasOptions::targetSize), in texels; the packing may still grow the atlas past
// it, to 16384, when the charts do not fit.
inline constexpr int kMinAtlasTargetSize = 8;
inline constexpr int kMaxAtlasTargetSize = 8192;

// One corner of a world-space triangle as solvers draw it: 3 per triangle, triangles in the order
// of Scene instances then mesh triangles (unwelded, so every corner has its chart's UV).
struct LightmapVertex {
  glm::vec3 position;          // world space
  glm::vec3 normal;            // world space, unit (the geometric normal of the triangle's front side)
  glm::vec2 lightmapUv;        // texel units
  std::uint32_t material = 0;  // index into Scene::materials
  glm::vec2 texcoord{0.0f};    // the mesh's texture coordinate, for its albedo texture; 0 when it has none
};

struct LightmapAtlas {
  int width = 0;  // texels
  int height = 0;
  float texelsPerUnit = 0.0f;                // the density used: 1 texel = 1/texelsPerUnit scene units on a side
  std::vector<LightmapVertex> vertices;      // 3 per triangle
  std::vector<std::uint32_t> triangleChart;  // per triangle
  std::uint32_t chartCount = 0;
  double wastedFraction = 0.0;  // atlas texels that belong to no chart / all texels

  // Where each chart lies: a rectangle of whole texels that holds all of its triangles' UVs (and
  // so every texel the chart can touch); rectangles of different charts are at least
  // paddingTexels apart. Per chart.
  struct Footprint {
    int x = 0, y = 0;  // first texel
    int width = 0, height = 0;
  };
  std::vector<Footprint> chartFootprints;
  int paddingTexels = 0;                // the options' padding: free texels between footprints
  std::vector<double> chartArea;        // per chart: Σ world area of its triangles, scene units²
  std::vector<glm::vec3> chartNormals;  // per chart: the unit normal of the plane it is projected on
  [[nodiscard]] std::size_t triangleCount() const { return vertices.size() / 3; }
};

// One entry per atlas texel (row-major, width·height); entries with valid = 0 are padding.
// Made by rasterising the charts in UV space (conservatively, so thin charts still get texels).
struct PatchList {
  int width = 0;
  int height = 0;
  std::vector<glm::vec3> position;  // world space, the texel centre moved onto its triangle
  std::vector<glm::vec3> normal;    // world space, unit
  std::vector<glm::vec3> albedo;    // ρ (texture applied)
  std::vector<glm::vec3> emission;  // L_e radiance
  std::vector<float> area;          // world units² of surface the texel stands for
  std::vector<std::uint8_t> valid;  // 1 = a surface texel, 0 = padding
  // The atlas triangle that owns each valid texel (index into LightmapAtlas::vertices / 3, which
  // also gives its chart and material); kNoTriangle on padding.
  static constexpr std::uint32_t kNoTriangle = 0xffffffffu;
  std::vector<std::uint32_t> triangle;
  // 1 when the texel centre lies inside its triangle in UV space (the ordinary rasteriser rule);
  // 0 for a texel added by the conservative pass for a chart too thin to cover any texel centre
  // (its position is the point of the chart nearest to the texel centre).
  std::vector<std::uint8_t> centreCovered;
  [[nodiscard]] std::size_t texelCount() const { return std::size_t(width) * std::size_t(height); }
};

// A solved lightmap: what `ibrr bake --method gather|progressive|stochastic|matrix -o X.lightmap`
// writes and `ibrr render --lightmap X.lightmap` reads (lightmap/lightmap_file.hpp). The atlas is
// not stored: buildAtlas() is deterministic, so the loader rebuilds it from the scene and
// atlasOptions and checks the size.
struct Lightmap {
  AtlasOptions atlasOptions;
  int width = 0;
  int height = 0;
  // Per texel the exitant radiance L = B/π (W·sr⁻¹·m⁻² per channel, what a camera sees), emission
  // included; 0 on invalid texels (display dilates them, solvers never do).
  std::vector<glm::vec3> radiance;
  std::string method;                  // "gather", ...
  std::string settingsJson;            // the solver's settings, for reports
  std::uint64_t sceneFingerprint = 0;  // Scene::fingerprint(): a lightmap for another scene is refused
  std::uint64_t atlasFingerprint = 0;  // atlasFingerprint() of the atlas it was solved on
};

// A hash of an atlas's layout (size, every corner's lightmap UV, every triangle's chart), FNV-1a 64
// of their bytes: the lightmap file records it, and the loader refuses a lightmap whose atlas,
// rebuilt from its options, is laid out differently (another scene, another version of the atlas
// code).
std::uint64_t atlasFingerprint(const LightmapAtlas& atlas);

// A solver's result as a Lightmap of `atlas` (width × height radiance, 0 on invalid texels, the
// atlas's fingerprint). Its atlasOptions carry only the atlas's density: the caller sets the options
// it built the atlas with.
Lightmap solvedLightmap(const scene::Scene& scene, const LightmapAtlas& atlas, std::vector<glm::vec3> radiance,
                        std::string method, std::string settingsJson);

// Lightmap UVs for every triangle of the scene (atlas.cpp): charts of edge-connected triangles
// whose normals agree (chartNormalCosine) with the chart's first triangle, each projected onto its
// plane at texelsPerUnit, centred in a whole-texel footprint and shelf-packed with paddingTexels
// between footprints. Deterministic: the same scene and options give the same atlas, bit for bit.
// Throws ibrr::Error on invalid options. Logs charts, density and wasted area with ibrr::info.
[[nodiscard]] LightmapAtlas buildAtlas(const scene::Scene& scene, const AtlasOptions& options);

// The patch list (patches.cpp), with a GL 4.5 context current on this thread: the charts are
// rasterised in UV space on the GPU (texel centres inside a triangle, then a conservative pass for
// charts that cover no texel centre), and each valid texel gets the point of its triangle nearest
// to its centre, the triangle's front normal, albedo (texture applied) and emission. Each chart's
// world area is shared among its valid texels in proportion to their triangle's world-per-UV area
// (patches.cpp), so Σ area over valid texels = the scene's surface area (up to degenerate charts,
// which get no texel).
[[nodiscard]] PatchList rasterizePatches(const scene::Scene& scene, const LightmapAtlas& atlas);

}  // namespace ibrr::lightmap
