// Keller's instant radiosity (display/keller.hpp): nothing to precompute, every frame shades all the VPLs of
// the bake's light paths with shadow hemicubes. Its row has no bake; in `ibrr compare` it lights IBRR's VPLs.
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "compare/method_run.hpp"
#include "rays/vpl.hpp"

namespace ibrr::app {
namespace {

// Keller's frame: its flags in `ibrr render` are a bake's light paths and the bias compensation (cmd_render.cpp).
const display::RenderMethod kKellerDisplay{
    "keller",
    "Keller's instant radiosity: every VPL of the bake's light paths with a hemicube shadow map, each frame",
    false,
    false,
    false,
    display::makeKellerPass};

// What `ibrr render --method keller` reads: the light paths of a bake, and its bias compensation per pixel.
class KellerRenderInputs final : public RenderInputs {
public:
  void declareFlags(MethodFlags& flags) override {
    declareLightPathFlags(flags, m_vplOptions);
    declareBiasCompensationSwitch(flags, m_vplOptions,
                                  "on adds, per pixel, the light the clamp removed (as the bake does per layer) and "
                                  "clamps at twice the uncompensated distance; off: the clamped frame, at the bake's "
                                  "uncompensated distance");
  }
  void check(const MethodFlags&) const override { bake::validateBakeOptions(m_vplOptions); }
  void load(const scene::Scene&, display::RenderSettings& settings) override { settings.vplOptions = m_vplOptions; }

private:
  bake::BakeOptions m_vplOptions;
};

// Keller's frame on IBRR's VPLs, with the per-pixel bias compensation (the default) or not ("keller-clamped").
compare::MethodResult compareKeller(const compare::MethodContext& context, bool biasCompensation) {
  bake::BakeOptions vplOptions = compareBakeOptions(context.options);  // the same VPLs as IBRR's bake
  vplOptions.biasCompensation = biasCompensation;
  vplOptions.timeBudgetSeconds = 0.0;
  // Keller's frame costs a shadow map per VPL: on a CPU rasteriser the preview uses a quarter of
  // IBRR's paths (the first quarter of the same VPLs).
  if (context.options.quality == compare::Quality::Preview) vplOptions.paths /= 4;
  const display::RenderMethod& method = kKellerDisplay;
  display::RenderSettings settings;
  settings.vplOptions = vplOptions;
  compare::MethodResult result;
  result.bytesWhat = "VPL list";
  result.bytes = bake::generateBakeVpls(context.scene, vplOptions).vpls.size() * sizeof(rays::Vpl);
  result.settingsJson = bakeSettingsJson(vplOptions).dump();
  result.summary = std::to_string(vplOptions.paths) + " paths, the same VPLs and clamp as IBRR's first " +
                   std::to_string(vplOptions.paths) +
                   " paths, shadow hemicubes H = " + std::to_string(vplOptions.hemicubeResolution) +
                   " / h = " + std::to_string(vplOptions.indirectHemicubeResolution) +
                   (biasCompensation ? ", bias compensated per pixel" : ", clamped, no bias compensation");
  for (std::size_t c = 0; c < context.cameras.size(); ++c)
    result.cameras.push_back(compare::renderCamera(context, c, method, settings, /*warmUp=*/false));
  // Its whole cost is per frame: the curve's one point is the first camera's frame time.
  result.convergence.push_back(
      {1e-3 * result.cameras.front().displayMilliseconds, compare::meanRelativeRmse(result), "one frame"});
  return result;
}

}  // namespace

const Method kKellerMethod = {
    "keller",
    "instant radiosity, the VPLs lit every frame",
    nullptr,
    false,
    {{"keller",
      "instant radiosity: every VPL shaded per frame with a shadow hemicube, the clamp's bias compensated per pixel",
      [](const compare::MethodContext& context) { return compareKeller(context, true); }},
     {"keller-clamped", "the same Keller frame without the bias compensation",
      [](const compare::MethodContext& context) { return compareKeller(context, false); }}},
    &kKellerDisplay,
    [] { return std::unique_ptr<RenderInputs>(std::make_unique<KellerRenderInputs>()); }};

}  // namespace ibrr::app
