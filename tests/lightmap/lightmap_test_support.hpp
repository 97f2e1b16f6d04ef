#pragma once
// Shared set-up of the lightmap solver tests: a scene's atlas and patch list.
#include "lightmap/atlas.hpp"
#include "test_support.hpp"

namespace ibrr::test {

struct AtlasAndPatches {
  lightmap::LightmapAtlas atlas;
  lightmap::PatchList patches;
};

// The atlas at `targetSize` (AtlasOptions::targetSize) and its patch list; makes the test GL
// context current first, as the solvers that follow need it.
inline AtlasAndPatches makeAtlasAndPatches(const scene::Scene& scene, int targetSize) {
  glContext();
  AtlasAndPatches out;
  lightmap::AtlasOptions options;
  options.targetSize = targetSize;
  out.atlas = lightmap::buildAtlas(scene, options);
  out.patches = lightmap::rasterizePatches(scene, out.atlas);
  return out;
}

}  // namespace ibrr::test
