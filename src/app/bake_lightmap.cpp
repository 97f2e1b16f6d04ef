// What the four lightmap bake methods share: their outputs' checks, the atlas from the flags, the inputs every
// solver starts from, and the saved lightmap with its summary line.
#include "app/bake_command.hpp"
#include "app/cli_support.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/progressive.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/memory.hpp"

#include <cstdio>

namespace ibrr::app {

void checkLightmapOutputs(const std::string& output, const std::string& saveMatrix) {
  if (output.empty()) throw Error("give the lightmap file with -o FILE.lightmap");
  checkOutputFile(output);
  checkOutputFile(lightmap::lightmapImagePath(output));
  if (!saveMatrix.empty()) checkOutputFile(saveMatrix);
}

void AtlasFlags::declare(MethodFlags& flags, int defaultSize, bool refinesNearLights) {
  atlasSize = defaultSize;
  flags.option("--texel-density", texelDensity, "lightmap texels per scene unit (instead of --atlas)");
  flags.option("--atlas", atlasSize, "the atlas side S in texels the charts should fill");
  if (refinesNearLights)
    flags.option("--refine-near-lights", emitterRefinement,
                 "F times the texel density (F² the texels) on the charts within " +
                     std::to_string(int(lightmap::kEmitterReachTexels)) +
                     " texels of a light, whose 1/r² hot spot is narrower than a texel (1 to " +
                     std::to_string(lightmap::kMaxEmitterRefinement) + ")");
}

lightmap::AtlasOptions AtlasFlags::options(const MethodFlags& flags, int defaultSize) const {
  lightmap::AtlasOptions atlasOptions;
  if (flags.given("--texel-density")) {
    if (flags.given("--atlas")) throw OptionError("--texel-density and --atlas both size the atlas: give one of them");
    atlasOptions.texelsPerUnit = texelDensityFlag(texelDensity);
  } else {
    atlasOptions.targetSize = atlasSideFlag(flags.given("--atlas") ? atlasSize : defaultSize);
  }
  if (emitterRefinement < 1 || emitterRefinement > lightmap::kMaxEmitterRefinement)
    throw OptionError("--refine-near-lights " + std::to_string(emitterRefinement) + ": give a factor from 1 to " +
                std::to_string(lightmap::kMaxEmitterRefinement));
  atlasOptions.emitterRefinement = emitterRefinement;
  return atlasOptions;
}

void declareShootingFlags(MethodFlags& flags, int& clusterTexels, int& emitterClusterTexels, int& hemisphereResolution,
                          double& maxEdgeFraction) {
  flags.option("--cluster", clusterTexels,
               "reflecting surfaces shoot from blocks of B×B texels of a chart (substructuring)");
  flags.option("--emitter-cluster", emitterClusterTexels,
               "the same for emitting texels (1 = every light texel shoots: sharp shadows)");
  flags.option("--hemisphere", hemisphereResolution, "side in pixels of the hemispherical visibility buffer");
  flags.option("--max-edge", maxEdgeFraction,
               "tessellate the visibility pass until no edge exceeds this fraction of the scene diagonal (0 = off)");
}

LightmapBakeInputs prepareLightmapBake(const BakeRun& run, lightmap::AtlasOptions atlasOptions,
                                       const std::string& what,
                                       const std::function<void(const scene::Scene&)>& checkScene,
                                       int adaptiveDepth) {
  LightmapBakeInputs inputs;
  inputs.scene = loadSceneArgument(run.scene);
  checkLightmapOutputs(run.output);  // none of the outputs is one of the scene's files
  checkScene(inputs.scene);       // before starting the GPU
  inputs.context = gpu::createHeadlessContext();
  info(what + " " + inputs.scene.sourcePath.string() + " (" + std::to_string(inputs.scene.triangleCount()) +
       " triangles) on " + inputs.context->info().renderer);
  inputs.total.restart();
  // Adaptive subdivision solves on its finest level: 2^depth times the roots' density.
  if (adaptiveDepth > 0) atlasOptions = lightmap::finestAtlasOptions(inputs.scene, atlasOptions, adaptiveDepth);
  inputs.atlasOptions = atlasOptions;
  inputs.atlas = lightmap::buildAtlas(inputs.scene, atlasOptions);
  // The patch list (58 bytes a texel) and a solver's radiance, residual and GPU textures: about 160.
  requireMemory(std::uint64_t(inputs.atlas.width) * std::uint64_t(inputs.atlas.height) * 160,
                "a lightmap of " + std::to_string(inputs.atlas.width) + "x" + std::to_string(inputs.atlas.height) +
                    " texels",
                "lower --atlas or --texel-density");
  const MemoryPhase phase("solving the lightmap");
  inputs.patches = lightmap::rasterizePatches(inputs.scene, inputs.atlas);
  inputs.atlasSeconds = inputs.total.seconds();
  for (const std::uint8_t valid : inputs.patches.valid) inputs.validTexels += valid;
  return inputs;
}

void stageSolvedLightmap(OutputSet& outputs, const LightmapBakeInputs& inputs, lightmap::Lightmap solved,
                         const std::string& output) {
  solved.atlasOptions = inputs.atlasOptions;
  solved.atlasFingerprint = lightmap::atlasFingerprint(inputs.atlas);
  lightmap::stageLightmap(outputs, output, solved);
}

void saveSolvedLightmap(const LightmapBakeInputs& inputs, lightmap::Lightmap solved, const std::string& output) {
  OutputSet outputs;
  stageSolvedLightmap(outputs, inputs, std::move(solved), output);
  outputs.commit();
  std::printf("wrote %s\n", output.c_str());
}

void printAtlasSummary(const LightmapBakeInputs& inputs, const char* texels) {
  std::printf("atlas            %d x %d texels, %.4g texels per unit, %zu charts, %zu %s (%.2f s)\n",
              inputs.atlas.width, inputs.atlas.height, double(inputs.atlas.texelsPerUnit),
              std::size_t(inputs.atlas.chartCount), inputs.validTexels, texels, inputs.atlasSeconds);
}

void printMeanAndTime(const LightmapBakeInputs& inputs, const glm::dvec3* meanRadiance, double solveSeconds,
                      const char* part, double partSeconds) {
  if (meanRadiance)
    std::printf("mean radiance    %.5g %.5g %.5g (R G B)\n", meanRadiance->x, meanRadiance->y, meanRadiance->z);
  std::printf("time             %.2f s: atlas and patches %.2f s, solve %.2f s", inputs.total.seconds(),
              inputs.atlasSeconds, solveSeconds);
  if (part) std::printf(" (%s %.2f s)", part, partSeconds);
  std::printf("\n");
}

}  // namespace ibrr::app
