// `ibrr bake --method ibrr` (the default): light paths place VPLs, each VPL renders a hemicube on the GPU,
// and every hemicube pixel is warped into the layered depth cube store (.ibrr), which is saved; under mpirun
// the ranks split the light paths (cluster/distributed_bake.hpp).
#include "app/bake_command.hpp"
#include "app/cli_support.hpp"
#include "cluster/distributed_bake.hpp"
#include "ibrr/store_file.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace ibrr::app {
namespace {

// The IBRR bake's options from the command line (the generic ones are checked before any file is read).
bake::BakeOptions ibrrBakeSettings(const BakeCommandOptions& options) {
  bake::BakeOptions settings = options.bake;
  if (options.splat == "box")
    settings.splat = SplatKernel::Box;
  else if (options.splat == "gauss")
    settings.splat = SplatKernel::Gaussian;
  else
    throw Error("--splat '" + options.splat + "': choose box or gauss");
  const std::optional<bake::WarpDevice> warp = bake::parseWarpDevice(options.warp);
  if (!warp) throw Error("--warp '" + options.warp + "': choose auto, cpu or gpu");
  settings.warp = *warp;
  bake::validateBakeOptions(settings);
  return settings;
}

void printIbrrBakeSummary(const bake::BakeResult& result, const bake::BakeOptions& settings) {
  const bake::BakeStats& s = result.stats;
  const StoreStats store = result.store.stats();
  std::printf("VPLs per bounce  ");
  for (std::size_t k = 0; k < s.vplsPerBounce.size(); ++k) std::printf("%s%zu", k ? " " : "", s.vplsPerBounce[k]);
  std::printf("  (%llu paths, seed %u)\n", static_cast<unsigned long long>(settings.paths), settings.seed);
  std::printf("hemicubes        %llu (H = %d on the lights, h = %d after a bounce), %.1f per second\n",
              static_cast<unsigned long long>(s.hemicubes), settings.hemicubeResolution,
              settings.indirectHemicubeResolution, s.totalSeconds > 0 ? double(s.hemicubes) / s.totalSeconds : 0.0);
  std::printf("samples inserted %llu of %llu hemicube pixels, %llu LDI pixel writes (%s warp)\n",
              static_cast<unsigned long long>(s.samplesInserted), static_cast<unsigned long long>(s.hemicubePixels),
              static_cast<unsigned long long>(s.pixelWrites), bake::warpDeviceName(s.warp));
  std::printf("layers           %llu from the geometry seeds, %llu opened by hemicubes (surfaces the seeds lack)\n",
              static_cast<unsigned long long>(s.seedLayers), static_cast<unsigned long long>(s.openedLayers));
  std::printf("store            R = %d, %llu layers, %.2f layers per occupied pixel, %.1f MiB (%.0f bytes per layer)\n",
              result.store.frame().resolution(), static_cast<unsigned long long>(store.layerCount),
              store.layersPerOccupiedPixel, double(store.totalBytes) / (1024.0 * 1024.0), store.bytesPerLayer);
  std::printf(
      "time             %.2f s: light paths %.2f s, render %.2f s, readback %.2f s, warp %.2f s (insertion %.2f s; "
      "overlapped), waiting for the warp %.2f s\n",
      s.totalSeconds, s.vplSeconds, s.renderSeconds, s.readbackSeconds, s.warpSeconds, s.insertSeconds, s.waitSeconds);
  if (s.biasCompensated)
    std::printf("bias compensation %.2f s (in the time above): %u rays per layer, %u pass%s, %.1f M rays (%.1f M/s); %llu "
                "layers found no surface under them\n",
                s.biasSeconds, settings.biasRays, settings.biasPasses, settings.biasPasses == 1 ? "" : "es",
                double(s.biasRays) * 1e-6, s.biasSeconds > 0 ? double(s.biasRays) * 1e-6 / s.biasSeconds : 0.0,
                static_cast<unsigned long long>(s.biasLayersWithoutSurface));
  else
    std::printf("bias compensation off (%s)\n", settings.biasCompensation ? "no clamp: --clamp 0" : "--bias-compensation off");
}

// Under mpirun: every rank bakes its share of the light paths, rank 0 writes the store (distributed_bake.hpp).
void runDistributedBake(cluster::Cluster& cluster, const scene::Scene& scene, const bake::BakeOptions& settings,
                        const std::string& output) {
  cluster.agree();  // every rank has its scene, options and GPU
  const double fingerprint = double(scene.fingerprint() >> 11);  // 53 bits, exact in a double
  const std::vector<double> range = cluster.allMax(std::vector<double>{fingerprint, -fingerprint});
  if (range[0] != -range[1])
    throw Error(scene.sourcePath.string() + ": the ranks loaded different scenes (their fingerprints differ); give "
                "every rank the same scene file");
  info("baking on " + std::to_string(cluster.size()) + " ranks, " + std::to_string(settings.paths) +
       " light paths split among them");
  ProgressLine progress;
  const cluster::DistributedBakeResult distributed = cluster::bakeStoreAcrossRanks(cluster, scene, settings, progress);
  progress.finish();
  if (!cluster.isRoot()) return;
  const Stopwatch writeTime;
  bake::writeStoreFile(distributed.result->store, output);
  const double writeSeconds = writeTime.seconds();
  printIbrrBakeSummary(*distributed.result, settings);
  const cluster::DistributedBakeTimes& t = distributed.times;
  const double total = distributed.result->stats.totalSeconds + writeSeconds;
  std::printf("ranks            %d: light paths %.2f s (the slowest rank), reduce %.3f s (%.1f MiB a message, "
              "log2 N steps), store broadcast %.3f s, compensation %.2f s, write %.3f s; reduce + write %.1f%% of "
              "%.2f s\n",
              cluster.size(), t.lightPathSeconds, t.reduceSeconds, double(t.storeBytes) / (1024.0 * 1024.0),
              t.broadcastSeconds, t.compensationSeconds, writeSeconds,
              total > 0 ? 100.0 * (t.reduceSeconds + writeSeconds) / total : 0.0, total);
}

void runIbrrBake(const BakeRequest& request) {
  const BakeCommandOptions& options = request.options;
  cluster::Cluster& cluster = cluster::Cluster::world();
  if (options.output.empty()) throw Error("give the store file with -o FILE.ibrr");
  checkOutputFile(options.output);  // before any work
  const bake::BakeOptions settings = ibrrBakeSettings(options);
  const scene::Scene scene = loadSceneArgument(options.scene);
  checkOutputFile(options.output);  // and not one of the scene's files
  if (!scene.hasLights())
    throw Error(scene.sourcePath.string() +
                ": the scene has no emitters or lights to bake; add an emissive material "
                "(Ke) or a light to the manifest");
  bake::checkBakeMemory(scene, settings);  // before the GPU starts
  const auto context = gpu::createHeadlessContext(gpu::HeadlessPlatform::Automatic, cluster.localRank());
  info("baking " + scene.sourcePath.string() + " (" + std::to_string(scene.triangleCount()) + " triangles) on " +
       context->info().renderer);
  if (cluster.distributed()) return runDistributedBake(cluster, scene, settings, options.output);
  ProgressLine progress;
  const bake::BakeResult result = bake::bakeStore(scene, settings, progress);
  progress.finish();
  bake::writeStoreFile(result.store, options.output);
  printIbrrBakeSummary(result, settings);
}

}  // namespace

const BakeMethod kIbrrBake = {
    "ibrr",
    "the LDC store",
    {"--paths", "--max-bounces", "--clamp", "--ldc", "--splat", "--warp", "--bias-compensation", "--bias-rays",
     "--bias-passes", "--hemicube", "--indirect-hemicube", "--seed"},
    true,
    runIbrrBake};

}  // namespace ibrr::app
