// The viewer's script (viewer/view_script.hpp, loadViewScript) loads for the fixture scene or is
// refused with ibrr::Error; a loaded script's cameras are asked for at its frames and between them.
#include "fuzz_support.hpp"

#include "util/error.hpp"
#include "viewer/view_script.hpp"

#include <cmath>
#include <cstdlib>

using namespace ibrr;

namespace {

bool finite(const glm::vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

// Keyframes strictly increasing, every camera the script gives finite with a field of view in (0, 180),
// light moves by finite offsets.
void checkLoaded(const viewer::ViewScript& script) {
  for (std::size_t k = 1; k < script.keyframes.size(); ++k)
    if (script.keyframes[k].frame <= script.keyframes[k - 1].frame) std::abort();
  for (const viewer::ScriptLightMove& move : script.lightMoves)
    if (move.light < 0 || !finite(move.offset)) std::abort();
  const int last = script.lastFrame();
  for (const int frame : {0, last / 3, last / 2, last, last + 1}) {
    const auto camera = script.cameraAt(frame);
    if (!camera) continue;
    if (!finite(camera->eye) || !finite(camera->target) ||
        !(camera->verticalFovDegrees > 0.0f && camera->verticalFovDegrees < 180.0f))
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::initialize();
  (void)fuzz::fixtureScene();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::writeScratchFile("script.json", fuzz::asText(data, size));
  try {
    checkLoaded(viewer::loadViewScript(path, fuzz::fixtureScene()));
  } catch (const Error&) {
    // refused with a message: fine
  }
  return 0;
}
