// `ibrr bake SCENE -o scene.ibrr`: light paths place VPLs, each VPL renders a hemicube on the GPU,
// and every hemicube pixel is warped into the layered depth cube store, which is saved.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "bake/bake.hpp"
#include "gpu/context.hpp"
#include "ibrr/store_file.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <cstdio>
#include <memory>

namespace ibrr::app {
namespace {

struct BakeCommandOptions {
  std::string scene;
  std::string output;
  std::string splat = "box";
  bake::BakeOptions bake;
};

void runBake(const BakeCommandOptions& options) {
  ScopedInterruptHandler onCtrlC;
  if (options.output.empty()) throw Error("give the store file with -o FILE.ibrr");
  checkWritableFolder(options.output);  // before any work
  bake::BakeOptions settings = options.bake;
  if (options.splat == "box")
    settings.splat = SplatKernel::Box;
  else if (options.splat == "gauss")
    settings.splat = SplatKernel::Gaussian;
  else
    throw Error("--splat '" + options.splat + "': choose box or gauss");
  bake::validateBakeOptions(settings);
  const scene::Scene scene = loadSceneArgument(options.scene);
  if (!scene.hasLights())
    throw Error(scene.sourcePath.string() +
                ": the scene has no emitters or lights to bake; add an emissive material "
                "(Ke) or a light to the manifest");
  const auto context = gpu::createHeadlessContext();
  info("baking " + scene.sourcePath.string() + " (" + std::to_string(scene.triangleCount()) + " triangles) on " +
       context->info().renderer);
  std::unique_ptr<Progress> progress;
  const bake::BakeResult result = bake::bakeStore(scene, settings, [&](std::uint64_t done, std::uint64_t total) {
    if (!progress) progress = std::make_unique<Progress>("hemicubes", total, "hemicubes");
    progress->advance(1);
    (void)done;
  });
  if (progress) progress->finish();
  saveStore(result.store, options.output);  // temporary name, then rename

  const bake::BakeStats& s = result.stats;
  const StoreStats store = result.store.stats();
  std::printf("wrote %s\n", options.output.c_str());
  std::printf("VPLs per bounce  ");
  for (std::size_t k = 0; k < s.vplsPerBounce.size(); ++k) std::printf("%s%zu", k ? " " : "", s.vplsPerBounce[k]);
  std::printf("  (%llu paths, seed %u)\n", static_cast<unsigned long long>(settings.paths), settings.seed);
  std::printf("hemicubes        %llu (H = %d on the lights, h = %d after a bounce), %.1f per second\n",
              static_cast<unsigned long long>(s.hemicubes), settings.hemicubeResolution,
              settings.indirectHemicubeResolution, s.totalSeconds > 0 ? double(s.hemicubes) / s.totalSeconds : 0.0);
  std::printf("samples inserted %llu of %llu hemicube pixels\n", static_cast<unsigned long long>(s.samplesInserted),
              static_cast<unsigned long long>(s.hemicubePixels));
  std::printf("store            R = %d, %llu layers, %.2f layers per occupied pixel, %.1f MiB (%.0f bytes per layer)\n",
              result.store.frame().resolution(), static_cast<unsigned long long>(store.layerCount),
              store.layersPerOccupiedPixel, double(store.totalBytes) / (1024.0 * 1024.0), store.bytesPerLayer);
  std::printf(
      "time             %.2f s: light paths %.2f s, render %.2f s, readback %.2f s, warp %.2f s (insertion %.2f s; "
      "overlapped), waiting for the warp %.2f s\n",
      s.totalSeconds, s.vplSeconds, s.renderSeconds, s.readbackSeconds, s.warpSeconds, s.insertSeconds, s.waitSeconds);
}

}  // namespace

void addBakeCommand(CLI::App& app) {
  auto options = std::make_shared<BakeCommandOptions>();
  bake::BakeOptions& b = options->bake;
  CLI::App* command =
      app.add_subcommand("bake", "Bake the IBRR radiosity store: VPL hemicubes warped into a layered depth cube");
  addSceneArgument(*command, options->scene);
  command->add_option("-o,--output", options->output, "store file to write (.ibrr)")->required();
  command->add_option("--ldc", b.ldcResolution, "R: pixels per side of each of the three layered depth images")
      ->capture_default_str();
  command->add_option("--splat", options->splat, "splat kernel: box (the paper's) or gauss")->capture_default_str();
  addLightPathOptions(*command, b);
  command->footer(
      "Examples:\n  ibrr bake cornell -o cornell.ibrr\n  ibrr bake cornell --paths 8192 --ldc 512 -o fine.ibrr");
  command->callback([options] { runBake(*options); });
}

}  // namespace ibrr::app
