#include "display/render_methods.hpp"

#include "display/gbuffer.hpp"
#include "display/keller.hpp"
#include "display/uploaded_image.hpp"
#include "lightmap/lightmap_display.hpp"
#include "util/error.hpp"
#include "util/stopwatch.hpp"

#include <algorithm>
#include <memory>
#include <optional>

namespace ibrr::display {
namespace {

// Waits for the GPU and returns the milliseconds since the stopwatch last started, restarting it.
double finishAndTake(Stopwatch& stopwatch) {
  glFinish();
  const double milliseconds = stopwatch.milliseconds();
  stopwatch.restart();
  return milliseconds;
}

// The camera G-buffer of a pass, re-made only when the frame's size changes.
class CameraGBuffer {
public:
  // Draws it, after waiting for what was drawn before (so that nothing of it is charged here), and puts the
  // milliseconds it took, to its own glFinish, in `sceneMs`.
  GBuffer& render(const PassInputs& inputs, const scene::Camera& camera, int width, int height, int supersample,
                  double& sceneMs) {
    glFinish();
    Stopwatch stopwatch;
    if (!m_gbuffer || m_gbuffer->width() != width || m_gbuffer->height() != height) {
      m_gbuffer.reset();
      m_gbuffer.emplace(width, height);
    }
    m_gbuffer->render(inputs.geometry, inputs.scene, camera, supersample);
    sceneMs = finishAndTake(stopwatch);
    return *m_gbuffer;
  }
  [[nodiscard]] const GBuffer& get() const { return *m_gbuffer; }

private:
  std::optional<GBuffer> m_gbuffer;
};

// IBRR (paper §5): the camera's G-buffer warped into the store, on the GPU (the store uploaded once) or on the CPU.
class IbrrPass final : public RenderPass {
public:
  explicit IbrrPass(const PassInputs& inputs) : m_inputs(inputs) {
    if (!inputs.settings.store) throw Error("--method ibrr needs a store: --store FILE (make one with 'ibrr bake')");
  }
  FrameTimes draw(const scene::Camera& camera, int width, int height, int supersample) override {
    const RenderSettings& settings = m_inputs.settings;
    const GBuffer& gbuffer = m_gbuffer.render(m_inputs, camera, width, height, supersample, m_times.sceneMs);
    Stopwatch stopwatch;
    m_onCpu = settings.cpuReconstruction;
    if (m_onCpu) {
      // The read-back, the look-ups and the upload: all of this path's cost is charged to the reconstruction.
      Reconstruction reconstruction = reconstructOnCpu(gbuffer, *settings.store, settings.reconstruction);
      m_cpuLast = {Image(), std::move(reconstruction.holes), reconstruction.coveredPixels, reconstruction.holePixels};
      m_cpuImage.upload(std::move(reconstruction.radiance));
    } else {
      if (!m_reconstructor) m_reconstructor.emplace(*settings.store);
      m_reconstructor->run(gbuffer, settings.reconstruction);
    }
    m_times.methodMs = finishAndTake(stopwatch);
    return m_times;
  }
  [[nodiscard]] GLuint texture() const override {
    return m_onCpu ? m_cpuImage.texture() : m_reconstructor->outputTexture();
  }
  [[nodiscard]] RenderOutput read() const override {
    RenderOutput output;
    if (m_onCpu) {
      output = m_cpuLast;
      output.image = m_cpuImage.image();
    } else {
      Reconstruction reconstruction = m_reconstructor->readBack();
      output = {std::move(reconstruction.radiance), std::move(reconstruction.holes), reconstruction.coveredPixels,
                reconstruction.holePixels};
    }
    output.reconstructionSeconds = 1e-3 * m_times.methodMs;
    return output;
  }

private:
  const PassInputs m_inputs;
  CameraGBuffer m_gbuffer;
  std::optional<GpuReconstructor> m_reconstructor;  // made on the first GPU frame: the store's upload
  UploadedImage m_cpuImage;
  RenderOutput m_cpuLast;  // the CPU path's holes and counts
  bool m_onCpu = false;
  FrameTimes m_times;
};

// Keller's instant radiosity: every VPL of the bake's light paths (made once) shaded with its shadow hemicube.
class KellerPass final : public RenderPass {
public:
  explicit KellerPass(const PassInputs& inputs)
      : m_inputs(inputs), m_vpls(bake::generateBakeVpls(inputs.scene, validated(inputs.settings.vplOptions))) {}
  FrameTimes draw(const scene::Camera& camera, int width, int height, int supersample) override {
    FrameTimes times;
    const GBuffer& gbuffer = m_gbuffer.render(m_inputs, camera, width, height, supersample, times.sceneMs);
    KellerResult keller = renderKeller(m_inputs.scene, m_inputs.geometry, gbuffer, m_vpls, m_inputs.settings.vplOptions);
    m_seconds = keller.seconds;
    m_image.upload(std::move(keller.radiance));
    times.methodMs = 1e3 * m_seconds;
    return times;
  }
  [[nodiscard]] GLuint texture() const override { return m_image.texture(); }
  [[nodiscard]] RenderOutput read() const override {
    RenderOutput output;
    output.image = m_image.image();
    output.reconstructionSeconds = m_seconds;
    return output;
  }

private:
  static const bake::BakeOptions& validated(const bake::BakeOptions& options) {
    bake::validateBakeOptions(options);  // a bad light-path flag, named
    return options;
  }

  const PassInputs m_inputs;
  const rays::VplSet m_vpls;
  CameraGBuffer m_gbuffer;
  UploadedImage m_image;
  double m_seconds = 0.0;
};

// A G-buffer target as the picture: albedo and emission shown as drawn, the normal mapped from [-1, 1] to
// [0, 1] (on the CPU) so that it also reads as a picture.
class GBufferChannelPass final : public RenderPass {
public:
  GBufferChannelPass(const PassInputs& inputs, GBufferChannel channel) : m_inputs(inputs), m_channel(channel) {}
  FrameTimes draw(const scene::Camera& camera, int width, int height, int supersample) override {
    FrameTimes times;
    const GBuffer& gbuffer = m_gbuffer.render(m_inputs, camera, width, height, supersample, times.sceneMs);
    if (m_channel == GBufferChannel::Normal) {
      Stopwatch stopwatch;
      Image image = gbuffer.read(m_channel);
      const std::vector<std::uint8_t> covered = gbuffer.coverage();
      for (std::size_t i = 0; i < image.pixels.size(); ++i)
        image.pixels[i] = covered[i] ? 0.5f * image.pixels[i] + 0.5f : glm::vec3(0.0f);
      m_mapped.upload(std::move(image));
      times.methodMs = finishAndTake(stopwatch);
    }
    return times;
  }
  [[nodiscard]] GLuint texture() const override {
    return m_channel == GBufferChannel::Normal ? m_mapped.texture() : m_gbuffer.get().texture(m_channel);
  }
  [[nodiscard]] RenderOutput read() const override {
    RenderOutput output;
    output.image = m_channel == GBufferChannel::Normal ? m_mapped.image() : m_gbuffer.get().read(m_channel);
    return output;
  }

private:
  const PassInputs m_inputs;
  const GBufferChannel m_channel;
  CameraGBuffer m_gbuffer;
  UploadedImage m_mapped;
};

// A solved texel lightmap: each pixel samples the dilated radiance atlas bilinearly at its lightmap UV
// (lightmap/lightmap_display.hpp). The atlas is rebuilt and its patches rasterised when the settings lack them.
class LightmapPass final : public RenderPass {
public:
  explicit LightmapPass(const PassInputs& inputs) : m_inputs(inputs), m_display(makeDisplay(inputs)) {}
  FrameTimes draw(const scene::Camera& camera, int width, int height, int supersample) override {
    glFinish();
    Stopwatch stopwatch;
    if (!m_target || m_target->width() != width || m_target->height() != height) {
      m_target.reset();
      m_target.emplace(width, height);
    }
    m_display->drawView(cameraViewProjection(m_inputs.scene, camera, width, height), *m_target, supersample);
    m_times.methodMs = finishAndTake(stopwatch);
    return m_times;
  }
  [[nodiscard]] GLuint texture() const override { return m_target->texture(); }
  [[nodiscard]] RenderOutput read() const override {
    lightmap::LightmapDisplay::View view = lightmap::LightmapDisplay::readView(*m_target);
    RenderOutput output;
    output.image = std::move(view.radiance);
    for (const std::uint8_t covered : view.covered) output.coveredPixels += covered;
    output.reconstructionSeconds = 1e-3 * m_times.methodMs;
    return output;
  }

private:
  static std::unique_ptr<lightmap::LightmapDisplay> makeDisplay(const PassInputs& inputs) {
    const RenderSettings& settings = inputs.settings;
    if (!settings.lightmap)
      throw Error(
          "--method lightmap needs a lightmap: --lightmap FILE (make one with 'ibrr bake SCENE --method gather "
          "-o FILE.lightmap')");
    lightmap::LightmapAtlas rebuilt;
    if (!settings.lightmapAtlas) rebuilt = lightmap::buildAtlas(inputs.scene, settings.lightmap->atlasOptions);
    const lightmap::LightmapAtlas& atlas = settings.lightmapAtlas ? *settings.lightmapAtlas : rebuilt;
    // The patches (a GPU pass and a readback) are reused when the caller keeps them with the atlas.
    if (settings.lightmapAtlas && settings.lightmapPatches)
      return std::make_unique<lightmap::LightmapDisplay>(inputs.scene, atlas, *settings.lightmapPatches,
                                                         *settings.lightmap);
    return std::make_unique<lightmap::LightmapDisplay>(inputs.scene, atlas,
                                                       lightmap::rasterizePatches(inputs.scene, atlas),
                                                       *settings.lightmap);
  }

  const PassInputs m_inputs;
  std::unique_ptr<lightmap::LightmapDisplay> m_display;
  std::optional<lightmap::LightmapViewTarget> m_target;
  FrameTimes m_times;
};

}  // namespace

RenderOutput renderOnce(std::unique_ptr<RenderPass> (*create)(const PassInputs&), const RenderRequest& request) {
  std::optional<gpu::SceneRenderer> uploaded;
  const gpu::SceneRenderer& geometry = request.geometry ? *request.geometry : uploaded.emplace(request.scene);
  const std::unique_ptr<RenderPass> pass = create({request.scene, geometry, request.settings});
  (void)pass->draw(request.camera, request.width, request.height, request.supersample);
  return pass->read();
}

RenderOutput RenderMethod::render(const RenderRequest& request) const { return renderOnce(create, request); }

std::unique_ptr<RenderPass> makeIbrrPass(const PassInputs& inputs) { return std::make_unique<IbrrPass>(inputs); }
std::unique_ptr<RenderPass> makeKellerPass(const PassInputs& inputs) { return std::make_unique<KellerPass>(inputs); }
std::unique_ptr<RenderPass> makeAlbedoPass(const PassInputs& inputs) {
  return std::make_unique<GBufferChannelPass>(inputs, GBufferChannel::Albedo);
}
std::unique_ptr<RenderPass> makeEmissionPass(const PassInputs& inputs) {
  return std::make_unique<GBufferChannelPass>(inputs, GBufferChannel::Emission);
}
std::unique_ptr<RenderPass> makeNormalPass(const PassInputs& inputs) {
  return std::make_unique<GBufferChannelPass>(inputs, GBufferChannel::Normal);
}
std::unique_ptr<RenderPass> makeLightmapPass(const PassInputs& inputs) {
  return std::make_unique<LightmapPass>(inputs);
}

}  // namespace ibrr::display
