#include "display/render_methods.hpp"

#include "display/gbuffer.hpp"
#include "util/error.hpp"

#include <array>

namespace ibrr::display {
namespace {

Image renderGBufferChannel(const RenderRequest& request, GBufferChannel channel) {
  const gpu::SceneRenderer renderer(request.scene);
  GBuffer gbuffer(request.width, request.height);
  gbuffer.render(renderer, request.scene, request.camera);
  return gbuffer.read(channel);
}

Image renderAlbedo(const RenderRequest& request) { return renderGBufferChannel(request, GBufferChannel::Albedo); }
Image renderEmission(const RenderRequest& request) { return renderGBufferChannel(request, GBufferChannel::Emission); }

// World-space normals mapped from [-1, 1] to [0, 1] so that they also read as a picture.
Image renderNormal(const RenderRequest& request) {
  const gpu::SceneRenderer renderer(request.scene);
  GBuffer gbuffer(request.width, request.height);
  gbuffer.render(renderer, request.scene, request.camera);
  Image image = gbuffer.read(GBufferChannel::Normal);
  const std::vector<std::uint8_t> covered = gbuffer.coverage();
  for (std::size_t i = 0; i < image.pixels.size(); ++i)
    image.pixels[i] = covered[i] ? 0.5f * image.pixels[i] + 0.5f : glm::vec3(0.0f);
  return image;
}

constexpr std::array kMethods{
    RenderMethod{"albedo", "diffuse reflectance ρ (linear, with textures)", renderAlbedo},
    RenderMethod{"normal", "world-space shading normal facing the camera, as 0.5·n + 0.5", renderNormal},
    RenderMethod{"emission", "emitted radiance L_e (front faces of emitters)", renderEmission},
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
  throw Error("unknown view '" + std::string(name) + "'; choose one of: " + renderMethodNames());
}

}  // namespace ibrr::display
