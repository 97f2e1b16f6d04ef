#pragma once
// `ibrr bake`: what a method's bake is (BakeMethod: its flags and its run, defined in the method's own file and made
// from its row of the table in app/methods.hpp), and what the four lightmap methods' bakes share (bake_lightmap.cpp):
// the atlas flags, the flags of the two shooting solvers, the inputs every solver starts from, the saved lightmap.
#include "app/method_flags.hpp"
#include "bake/bake.hpp"
#include "gpu/context.hpp"
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"
#include "util/atomic_file.hpp"
#include "util/stopwatch.hpp"

#include <functional>
#include <memory>
#include <string>

namespace ibrr::app {

// One `ibrr bake` run of a method: the scene argument, -o, and the method's flags (assigned; which were given).
struct BakeRun {
  const std::string& scene;
  const std::string& output;
  const MethodFlags& flags;
};

// A method's bake, made once per command: it declares its flags bound to its own options, and runs with them.
class BakeMethod {
public:
  virtual ~BakeMethod() = default;
  virtual void declareFlags(MethodFlags& flags) = 0;
  virtual void run(const BakeRun& run) = 0;
};

// --- What the lightmap methods share (bake_lightmap.cpp) ---

// The files a lightmap bake writes (the .lightmap, its data file, and `saveMatrix` when given) are writable and none
// is an input; a -o FILE.lightmap is given.
void checkLightmapOutputs(const std::string& output, const std::string& saveMatrix = "");

// The atlas flags of the lightmap methods: --texel-density or --atlas (the method's default side), and
// --refine-near-lights for the methods that refine near the lights.
struct AtlasFlags {
  float texelDensity = 0.0f;  // texels per scene unit
  int atlasSize = 0;          // texels per side the atlas should fit
  int emitterRefinement = 1;  // density multiplier near lights
  void declare(MethodFlags& flags, int defaultSize, bool refinesNearLights);
  // The atlas options the flags give (defaultSize: the method's default side, which --adaptive changes).
  lightmap::AtlasOptions options(const MethodFlags& flags, int defaultSize) const;
};

// The flags progressive refinement and stochastic iteration share, bound to either's options.
void declareShootingFlags(MethodFlags& flags, int& clusterTexels, int& emitterClusterTexels, int& hemisphereResolution,
                          double& maxEdgeFraction);

// What every lightmap solver's bake starts from: the scene (checked by `checkScene` before the
// GPU starts), a headless context, the atlas and its patch list, and the time they took.
struct LightmapBakeInputs {
  scene::Scene scene;
  std::unique_ptr<gpu::Context> context;
  Stopwatch total;  // from before the atlas
  lightmap::AtlasOptions atlasOptions;
  lightmap::LightmapAtlas atlas;
  lightmap::PatchList patches;
  double atlasSeconds = 0.0;
  std::size_t validTexels = 0;
};
LightmapBakeInputs prepareLightmapBake(const BakeRun& run, lightmap::AtlasOptions atlasOptions,
                                       const std::string& what,
                                       const std::function<void(const scene::Scene&)>& checkScene,
                                       int adaptiveDepth = 0);

// Stages the solved lightmap with the atlas options it was solved on (the loader rebuilds the atlas
// from them) and its atlas's fingerprint.
void stageSolvedLightmap(OutputSet& outputs, const LightmapBakeInputs& inputs, lightmap::Lightmap solved,
                         const std::string& output);
// Saves the solved lightmap (temporary names, then renames), and says so.
void saveSolvedLightmap(const LightmapBakeInputs& inputs, lightmap::Lightmap solved, const std::string& output);
// The summary's atlas line.
void printAtlasSummary(const LightmapBakeInputs& inputs, const char* texels = "valid texels");
// The summary's last lines: the mean radiance (when given) and the time, split into the atlas and the solve,
// and within the solve its own part `part` (e.g. "shots"; null for none) of `partSeconds`.
void printMeanAndTime(const LightmapBakeInputs& inputs, const glm::dvec3* meanRadiance, double solveSeconds,
                      const char* part = nullptr, double partSeconds = 0.0);

}  // namespace ibrr::app
