// The scene manifest (JSON) through the project's scene loader, scene::loadScene: any input loads
// or is refused with ibrr::Error, never a crash, a hang or another exception.
//
// The manifest is written beside small meshes (the Cornell box and the furnace, OBJ + MTL), which
// the seeds' "path" keys name, so a mutated manifest reaches the mesh, transform, material, light,
// camera and image keys.
#include "fuzz_support.hpp"

#include "scene/load.hpp"
#include "util/error.hpp"

#include <cstdlib>

using namespace ibrr;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::initialize();
  for (const char* file : {"scenes/cornell.obj", "scenes/cornell.mtl", "scenes/furnace.obj", "scenes/furnace.mtl"})
    fuzz::copyIntoScratch(file);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::writeScratchFile("manifest.json", fuzz::asText(data, size));
  try {
    const scene::Scene scene = scene::loadScene(path);
    // What a loaded scene promises every method: meshes, instances of them, a camera (finalize()).
    if (scene.meshes.empty() || scene.instances.empty() || scene.cameras.empty()) std::abort();
    (void)scene.fingerprint();
    (void)scene.emittedPower();
  } catch (const Error&) {
    // refused with a message: fine
  }
  return 0;
}
