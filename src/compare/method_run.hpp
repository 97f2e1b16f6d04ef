#pragma once
// What a method's `ibrr compare` runner (compare.hpp, MethodRunner; each defined in the method's own file
// with its row of the method table) uses to render, measure and record: every camera's frame at the report
// size, and for texel lightmaps the atlas, the error of each iterate and the result's figures.
#include "compare/compare.hpp"
#include "display/render_methods.hpp"
#include "lightmap/atlas.hpp"

#include <nlohmann/json.hpp>

namespace ibrr::compare {

// Every method renders four samples a pixel on a rotated grid and averages them, as `ibrr render --supersample 2`
// does (util/supersample.hpp), so that edges are averaged like the path tracer's pixels.
inline constexpr int kSupersample = 2;

// One camera's frame of `method` at the report size, as linear radiance (supersampled and filtered).
Image renderReportImage(const MethodContext& context, std::size_t camera, const display::RenderMethod& method,
                                 const display::RenderSettings& settings);

// Camera `camera`'s render, its error and its display time: the second of two renders (the first compiles
// shaders and uploads) unless `warmUp` is false.
CameraResult renderCamera(const MethodContext& context, std::size_t camera, const display::RenderMethod& method,
                          const display::RenderSettings& settings, bool warmUp = true);

// The mean relRMSE over a result's cameras.
double meanRelativeRmse(const MethodResult& result);

// What the texel-lightmap solvers share in a comparison: the atlas and its patches, the error of
// an iterate as a convergence point (rendering it is left out of the solver's time), and the
// result's common figures and final renders.
class LightmapRun {
public:
  // `display` draws the lightmaps (the method table's lightmap row).
  LightmapRun(const MethodContext& context, const lightmap::AtlasOptions& atlasOptions, MethodResult& result,
              const display::RenderMethod& display);

  const lightmap::LightmapAtlas& atlas() const { return m_atlas; }
  const lightmap::PatchList& patches() const { return m_patches; }

  // The error of iterate `radiance`, reached after `solverSeconds` of the solver's wall time.
  void recordIterate(std::span<const glm::vec3> radiance, double solverSeconds, std::string label);

  // Bake time, bytes, the settings JSON with the atlas added, and every camera's final render.
  void finish(lightmap::Lightmap lightmap, double solverSeconds, nlohmann::json settings);

  // "64x64 atlas (2,310 texels)".
  std::string atlasSummary() const;

private:
  display::RenderSettings settingsFor(const lightmap::Lightmap& lightmap) const;

  const MethodContext& m_context;
  lightmap::AtlasOptions m_atlasOptions;
  MethodResult& m_result;
  const display::RenderMethod& m_method;
  lightmap::LightmapAtlas m_atlas;
  lightmap::PatchList m_patches;
  double m_atlasSeconds = 0.0;
  double m_callbackSeconds = 0.0;  // rendering iterates, left out of the solver's times
  std::uint64_t m_validTexels = 0;
};

}  // namespace ibrr::compare
