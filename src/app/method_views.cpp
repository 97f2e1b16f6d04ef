// The G-buffer views (`ibrr render --method albedo | normal | emission`): what the camera sees before any light is
// computed, for checking a scene's materials and geometry. Nothing to bake and no compare entry: a display each.
#include "app/methods.hpp"

namespace ibrr::app {
namespace {

const display::RenderMethod kAlbedoDisplay{"albedo", "diffuse reflectance ρ (linear, with textures)", false, false,
                                           true, display::makeAlbedoPass};
const display::RenderMethod kNormalDisplay{"normal", "world-space shading normal facing the camera, as 0.5·n + 0.5",
                                           false, false, false, display::makeNormalPass};
const display::RenderMethod kEmissionDisplay{"emission", "emitted radiance L_e (front faces of emitters)", false, false,
                                             true, display::makeEmissionPass};

}  // namespace

const Method kAlbedoMethod = {"albedo", kAlbedoDisplay.summary, nullptr, false, {}, &kAlbedoDisplay};
const Method kNormalMethod = {"normal", kNormalDisplay.summary, nullptr, false, {}, &kNormalDisplay};
const Method kEmissionMethod = {"emission", kEmissionDisplay.summary, nullptr, false, {}, &kEmissionDisplay};

}  // namespace ibrr::app
