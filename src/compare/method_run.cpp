#include "compare/method_run.hpp"

#include "export/scene_export.hpp"

#include "util/stopwatch.hpp"
#include "util/supersample.hpp"

namespace ibrr::compare {
namespace {

struct RenderedView {
  Image image;
  double displaySeconds = 0.0;
  std::uint64_t holes = 0;
  std::uint64_t covered = 0;
};

RenderedView renderView(const MethodContext& context, std::size_t camera, const display::RenderMethod& method,
                        const display::RenderSettings& settings) {
  const CompareOptions& options = context.options;
  display::RenderOutput output = method.render(
      {context.scene, context.cameras[camera], options.width * kSupersample, options.height * kSupersample, settings,
       context.geometry, kSupersample});
  RenderedView view;
  view.image = resolveSupersampled(output.image, kSupersample);
  view.displaySeconds = output.reconstructionSeconds;
  view.holes = output.holePixels;
  view.covered = output.coveredPixels;
  return view;
}

}  // namespace

Image renderReportImage(const MethodContext& context, std::size_t camera, const display::RenderMethod& method,
                                 const display::RenderSettings& settings) {
  return renderView(context, camera, method, settings).image;
}

CameraResult renderCamera(const MethodContext& context, std::size_t camera, const display::RenderMethod& method,
                          const display::RenderSettings& settings, bool warmUp) {
  if (warmUp) (void)renderView(context, camera, method, settings);
  RenderedView view = renderView(context, camera, method, settings);
  CameraResult result;
  result.camera = context.cameras[camera].name;
  result.error = context.measure(camera, view.image);
  result.image = std::move(view.image);
  result.displayMilliseconds = 1e3 * view.displaySeconds;
  result.holePixels = view.holes;
  result.coveredPixels = view.covered;
  return result;
}

double meanRelativeRmse(const MethodResult& result) {
  double sum = 0.0;
  for (const CameraResult& camera : result.cameras) sum += camera.error.relativeRmse;
  return sum / double(result.cameras.size());
}

LightmapRun::LightmapRun(const MethodContext& context, const lightmap::AtlasOptions& atlasOptions, MethodResult& result,
                         const display::RenderMethod& display)
    : m_context(context), m_atlasOptions(atlasOptions), m_result(result), m_method(display) {
  const Stopwatch setupTime;
  m_atlas = lightmap::buildAtlas(context.scene, atlasOptions);
  m_patches = lightmap::rasterizePatches(context.scene, m_atlas);
  m_atlasSeconds = setupTime.seconds();
  for (std::uint8_t valid : m_patches.valid) m_validTexels += valid;
}

void LightmapRun::recordIterate(std::span<const glm::vec3> radiance, double solverSeconds, std::string label) {
  const Stopwatch callbackTime;
  lightmap::Lightmap iterate;
  iterate.atlasOptions = m_atlasOptions;
  iterate.width = m_atlas.width;
  iterate.height = m_atlas.height;
  iterate.radiance.assign(radiance.begin(), radiance.end());
  iterate.sceneFingerprint = m_context.scene.fingerprint();
  const display::RenderSettings settings = settingsFor(iterate);
  const double error =
      m_context.meanError([&](std::size_t camera) { return renderReportImage(m_context, camera, m_method, settings); });
  m_result.convergence.push_back({m_atlasSeconds + solverSeconds - m_callbackSeconds, error, std::move(label)});
  m_callbackSeconds += callbackTime.seconds();
}

void LightmapRun::finish(lightmap::Lightmap lightmap, double solverSeconds, nlohmann::json settings) {
  lightmap.atlasOptions = m_atlasOptions;
  m_result.bakeSeconds = m_atlasSeconds + solverSeconds - m_callbackSeconds;
  m_result.bytes = std::uint64_t(lightmap.width) * std::uint64_t(lightmap.height) * sizeof(glm::vec3);
  m_result.bytesWhat = "lightmap radiance (RGB32F)";
  m_result.invalidWhat = "invalid texels";
  m_result.invalid = 0;  // every valid texel gets a value; padding is not a surface
  settings["atlas"] = {{"width", m_atlas.width},
                       {"height", m_atlas.height},
                       {"texelsPerUnit", m_atlas.texelsPerUnit},
                       {"targetSize", m_atlasOptions.targetSize},
                       {"paddingTexels", m_atlasOptions.paddingTexels},
                       {"validTexels", m_validTexels},
                       {"charts", m_atlas.chartCount}};
  settings["supersample"] = kSupersample;
  m_result.settingsJson = settings.dump();
  const display::RenderSettings renderSettings = settingsFor(lightmap);
  for (std::size_t c = 0; c < m_context.cameras.size(); ++c)
    m_result.cameras.push_back(renderCamera(m_context, c, m_method, renderSettings));
  if (m_context.options.exportPages)
    m_result.page = exporter::lightmapPage(m_context.scene, lightmap, m_atlas, m_patches);
}

std::string LightmapRun::atlasSummary() const {
  return std::to_string(m_atlas.width) + "x" + std::to_string(m_atlas.height) + " atlas (" +
         std::to_string(m_validTexels) + " texels)";
}

display::RenderSettings LightmapRun::settingsFor(const lightmap::Lightmap& lightmap) const {
  display::RenderSettings settings;
  settings.lightmap = &lightmap;
  settings.lightmapAtlas = &m_atlas;
  settings.lightmapPatches = &m_patches;
  return settings;
}

}  // namespace ibrr::compare
