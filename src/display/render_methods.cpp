#include "display/render_methods.hpp"

#include "display/gbuffer.hpp"
#include "display/keller.hpp"
#include "lightmap/lightmap_display.hpp"
#include "util/error.hpp"
#include "util/stopwatch.hpp"

#include <array>
#include <memory>
#include <optional>

namespace ibrr::display {
namespace {

// The scene's geometry on the GPU: the request's, shared across renders, or uploaded into `uploaded` for this one.
const gpu::SceneRenderer& sceneGeometry(const RenderRequest& request, std::optional<gpu::SceneRenderer>& uploaded) {
  return request.geometry ? *request.geometry : uploaded.emplace(request.scene);
}

RenderOutput renderIbrr(const RenderRequest& request) {
  if (!request.settings.store) throw Error("--method ibrr needs a store: --store FILE (make one with 'ibrr bake')");
  std::optional<gpu::SceneRenderer> uploaded;
  const gpu::SceneRenderer& renderer = sceneGeometry(request, uploaded);
  GBuffer gbuffer(request.width, request.height);
  gbuffer.render(renderer, request.scene, request.camera, request.supersample);
  Reconstruction reconstruction;
  if (request.settings.cpuReconstruction) {
    reconstruction = reconstructOnCpu(gbuffer, *request.settings.store, request.settings.reconstruction);
  } else {
    GpuReconstructor reconstructor(*request.settings.store);
    reconstruction = reconstructor.reconstruct(gbuffer, request.settings.reconstruction);
  }
  return {std::move(reconstruction.radiance), std::move(reconstruction.holes), reconstruction.coveredPixels,
          reconstruction.holePixels, reconstruction.seconds};
}

RenderOutput renderKellerMethod(const RenderRequest& request) {
  const rays::VplSet vpls = bake::generateBakeVpls(request.scene, request.settings.vplOptions);
  std::optional<gpu::SceneRenderer> uploaded;
  const gpu::SceneRenderer& renderer = sceneGeometry(request, uploaded);
  GBuffer gbuffer(request.width, request.height);
  gbuffer.render(renderer, request.scene, request.camera, request.supersample);
  KellerResult keller = renderKeller(request.scene, renderer, gbuffer, vpls, request.settings.vplOptions);
  RenderOutput output;
  output.image = std::move(keller.radiance);
  output.reconstructionSeconds = keller.seconds;
  return output;
}

// A solved texel lightmap: each pixel samples the dilated radiance atlas bilinearly at its
// lightmap UV (lightmap/lightmap_display.hpp).
RenderOutput renderLightmap(const RenderRequest& request) {
  if (!request.settings.lightmap)
    throw Error(
        "--method lightmap needs a lightmap: --lightmap FILE (make one with 'ibrr bake SCENE --method gather "
        "-o FILE.lightmap')");
  const lightmap::Lightmap& solved = *request.settings.lightmap;
  lightmap::LightmapAtlas rebuilt;
  if (!request.settings.lightmapAtlas) rebuilt = lightmap::buildAtlas(request.scene, solved.atlasOptions);
  const lightmap::LightmapAtlas& atlas = request.settings.lightmapAtlas ? *request.settings.lightmapAtlas : rebuilt;
  // The patches (a GPU pass and a readback) are reused when the caller keeps them with the atlas.
  lightmap::PatchList rasterised;
  if (!request.settings.lightmapAtlas || !request.settings.lightmapPatches)
    rasterised = lightmap::rasterizePatches(request.scene, atlas);
  const lightmap::PatchList& patches =
      request.settings.lightmapAtlas && request.settings.lightmapPatches ? *request.settings.lightmapPatches
                                                                         : rasterised;
  const lightmap::LightmapDisplay lightmapDisplay(request.scene, atlas, patches, solved);
  const glm::mat4 viewProjection =
      cameraViewProjection(request.scene, request.camera, request.width, request.height);
  const Stopwatch stopwatch;
  lightmap::LightmapDisplay::View view =
      lightmapDisplay.render(viewProjection, request.width, request.height, request.supersample);
  RenderOutput output;
  output.image = std::move(view.radiance);
  output.reconstructionSeconds = stopwatch.seconds();
  for (std::uint8_t covered : view.covered) output.coveredPixels += covered;
  return output;
}

RenderOutput renderGBufferChannel(const RenderRequest& request, GBufferChannel channel) {
  std::optional<gpu::SceneRenderer> uploaded;
  const gpu::SceneRenderer& renderer = sceneGeometry(request, uploaded);
  GBuffer gbuffer(request.width, request.height);
  gbuffer.render(renderer, request.scene, request.camera, request.supersample);
  RenderOutput output;
  output.image = gbuffer.read(channel);
  if (channel == GBufferChannel::Normal) {
    // World-space normals mapped from [-1, 1] to [0, 1] so that they also read as a picture.
    const std::vector<std::uint8_t> covered = gbuffer.coverage();
    for (std::size_t i = 0; i < output.image.pixels.size(); ++i)
      output.image.pixels[i] = covered[i] ? 0.5f * output.image.pixels[i] + 0.5f : glm::vec3(0.0f);
  }
  return output;
}

RenderOutput renderAlbedo(const RenderRequest& request) {
  return renderGBufferChannel(request, GBufferChannel::Albedo);
}
RenderOutput renderNormal(const RenderRequest& request) {
  return renderGBufferChannel(request, GBufferChannel::Normal);
}
RenderOutput renderEmission(const RenderRequest& request) {
  return renderGBufferChannel(request, GBufferChannel::Emission);
}

constexpr std::array kMethods{
    RenderMethod{"ibrr", "image-based radiosity: the camera's pixels warped into a baked store (--store)", true,
                 renderIbrr},
    RenderMethod{"keller",
                 "Keller's instant radiosity: every VPL of the bake's light paths with a hemicube shadow map, "
                 "each frame",
                 false, renderKellerMethod},
    RenderMethod{"albedo", "diffuse reflectance ρ (linear, with textures)", false, renderAlbedo},
    RenderMethod{"normal", "world-space shading normal facing the camera, as 0.5·n + 0.5", false, renderNormal},
    RenderMethod{"emission", "emitted radiance L_e (front faces of emitters)", false, renderEmission},
    RenderMethod{"lightmap", "a solved texel lightmap (--lightmap), sampled bilinearly after dilation", false,
                 renderLightmap, true},
};

}  // namespace

std::span<const RenderMethod> renderMethods() { return kMethods; }

std::string renderMethodNames() {
  std::string names;
  for (const RenderMethod& method : kMethods) names += (names.empty() ? "" : ", ") + std::string(method.name);
  return names;
}

const RenderMethod& findRenderMethod(std::string_view name) {
  for (const RenderMethod& method : kMethods)
    if (method.name == name) return method;
  throw Error("unknown method '" + std::string(name) + "'; choose one of: " + renderMethodNames());
}

}  // namespace ibrr::display
