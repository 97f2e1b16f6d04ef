// The lightmap loader (lightmap/lightmap_file.hpp, loadLightmap): a .lightmap (JSON metadata) and its
// radiance image (.lightmap.exr) load for the fixture scene or are refused with ibrr::Error.
//
// The input is the JSON, then fuzz::kFileSeparator, then the EXR; they are written as fuzz.lightmap and
// fuzz.lightmap.exr, the name the seeds' "radiance" key gives. The seeds (make_seeds.cpp) carry the
// fixture scene's fingerprint and an atlas that matches it, so mutations reach every check.
#include "fuzz_support.hpp"

#include "lightmap/lightmap_file.hpp"
#include "util/error.hpp"

#include <cstdlib>

using namespace ibrr;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::initialize();
  (void)fuzz::fixtureScene();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [metadata, image] = fuzz::splitAt(fuzz::asText(data, size));
  fuzz::writeScratchFile("fuzz.lightmap.exr", image);
  const auto path = fuzz::writeScratchFile("fuzz.lightmap", metadata);
  try {
    lightmap::LightmapAtlas atlas;
    const lightmap::Lightmap loaded = lightmap::loadLightmap(path, fuzz::fixtureScene(), &atlas);
    // What a loaded lightmap promises the display: one radiance per texel of the rebuilt atlas.
    if (loaded.radiance.size() != std::size_t(loaded.width) * std::size_t(loaded.height) ||
        atlas.width != loaded.width || atlas.height != loaded.height)
      std::abort();
  } catch (const Error&) {
    // refused with a message: fine
  }
  return 0;
}
