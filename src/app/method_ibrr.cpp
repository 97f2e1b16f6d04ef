// `ibrr bake --method ibrr` (the default): light paths place VPLs, each VPL renders a hemicube on the GPU,
// and every hemicube pixel is warped into the layered depth cube store (.ibrr), which is saved; under mpirun
// the ranks split the light paths (cluster/distributed_bake.hpp).
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "cluster/distributed_bake.hpp"
#include "compare/method_run.hpp"
#include "export/scene_export.hpp"
#include "ibrr/store_file.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace ibrr::app {
namespace {

// How a store is shown: the camera's pixels warped into it (paper §5), on the GPU or the CPU.
const display::RenderMethod kIbrrDisplay{"ibrr",
                                         "image-based radiosity: the camera's pixels warped into a baked store (--store)",
                                         true,
                                         false,
                                         true,
                                         display::makeIbrrPass};

// What `ibrr render --method ibrr` reads: the store, the reconstruction's path and filter, and where the holes go.
class IbrrRenderInputs final : public RenderInputs {
public:
  void declareFlags(MethodFlags& flags) override {
    flags.option("--store", m_storeFile, "baked IBRR store (.ibrr)");
    flags.choice(
        "--reconstruct",
        [this](const std::string& value) {
          if (value != "gpu" && value != "cpu") throw OptionError("--reconstruct '" + value + "': choose gpu or cpu");
          m_onCpu = value == "cpu";
        },
        "gpu", "the reconstruction on the gpu (compute shader) or cpu (TBB)");
    flags.choice(
        "--filter",
        [this](const std::string& value) { m_reconstruction.filter = parseRetrievalFilter(value, "--filter"); },
        "bilinear",
        "store retrieval: none (nearest pixel), box (average of the (2k+1)² pixels, the paper's kernel) or bilinear");
    flags.option("--filter-radius", m_reconstruction.filterRadius, "k of the box filter, pixels, [0, 8]");
    flags.option("--holes", m_holesFile, "also write an image with the pixels no store layer matched in red");
  }
  void check(const MethodFlags&) const override {
    if (m_storeFile.empty())
      throw OptionError("--method ibrr needs a store: --store FILE (make one with 'ibrr bake SCENE -o FILE')");
    if (m_reconstruction.filterRadius < 0 || m_reconstruction.filterRadius > 8)
      throw OptionError("--filter-radius must be in [0, 8]");
    if (!m_holesFile.empty()) checkOutputPath(m_holesFile);
  }
  void load(const scene::Scene& scene, display::RenderSettings& settings) override {
    m_store = bake::readStoreFile(m_storeFile, scene.fingerprint());  // refuses a store baked for another scene
    settings.store = &m_store;
    settings.reconstruction = m_reconstruction;
    settings.cpuReconstruction = m_onCpu;
    if (!m_holesFile.empty()) checkOutputPath(m_holesFile);  // not one of the inputs
  }
  void stageBeside(const display::RenderOutput& output, OutputSet& outputs, const ToneMapping& tone) const override {
    if (m_holesFile.empty()) return;
    // Holes in red over the dimmed radiance, so they can be found in the picture.
    Image holes = output.image;
    for (std::size_t i = 0; i < holes.pixels.size(); ++i)
      holes.pixels[i] =
          (!output.holes.empty() && output.holes[i]) ? glm::vec3(1.0f, 0.0f, 0.0f) : 0.25f * holes.pixels[i];
    stageImage(outputs, holes, m_holesFile, tone);
  }
  void printSummary(const display::RenderOutput& output) const override {
    std::printf("reconstruction: %s, %.2f ms; %zu covered pixels, %zu holes (%.3f%%)\n", m_onCpu ? "CPU" : "GPU",
                1e3 * output.reconstructionSeconds, output.coveredPixels, output.holePixels,
                output.coveredPixels ? 100.0 * double(output.holePixels) / double(output.coveredPixels) : 0.0);
  }

private:
  std::string m_storeFile, m_holesFile;
  display::ReconstructionOptions m_reconstruction;
  bool m_onCpu = false;
  LayeredDepthCube m_store;
};

// The IBRR bake: its flags are BakeOptions' fields (bake/bake.hpp), checked by validateBakeOptions before any file is
// read.
class IbrrBake final : public BakeMethod {
public:
  void declareFlags(MethodFlags& flags) override;
  void run(const BakeRun& run) override;

private:
  bake::BakeOptions m_settings;
};

void IbrrBake::declareFlags(MethodFlags& flags) {
  bake::BakeOptions& b = m_settings;
  flags.option("--ldc", b.ldcResolution, "R: pixels per side of each of the three layered depth images");
  flags.option("--indirect-ldc", b.indirectLdcResolution,
               "R2: the VPLs after a bounce are warped into a coarser cube of R2 pixels per side, whose light every "
               "layer of the store then adds (bilinear, the same plane); 0 or R: one level; negative: R/8, at least 32");
  flags.choice(
      "--splat",
      [&b](const std::string& value) {
        if (value != "box" && value != "gauss") throw OptionError("--splat '" + value + "': choose box or gauss");
        b.splat = value == "box" ? SplatKernel::Box : SplatKernel::Gaussian;
      },
      "box", "splat kernel: box (the paper's) or gauss");
  flags.choice(
      "--warp",
      [&b](const std::string& value) {
        const std::optional<bake::WarpDevice> warp = bake::parseWarpDevice(value);
        if (!warp) throw OptionError("--warp '" + value + "': choose auto, cpu or gpu");
        b.warp = *warp;
      },
      bake::warpDeviceName(b.warp),
      "where hemicube pixels are inserted into the store: cpu (read back, TBB), gpu (compute passes where a batch of "
      "hemicubes was rendered, nothing read back until the store is) or auto (cpu: the faster one on llvmpipe and, "
      "so far measured, on an NVIDIA GPU)");
  flags.option("--gpu-batch", b.gpuBatchHemicubes,
               "--warp gpu: hemicubes drawn into the atlas before they are warped, in one pass; 0: as many as an "
               "eighth of the GPU's free memory holds, at most 256 (the store is the same for any)");
  declareLightPathFlags(flags, b);
  declareBiasCompensationFlags(flags, b);
  flags.choice(
      "--direct",
      [&b](const std::string& value) {
        const std::optional<bake::DirectLight> direct = value == "auto" ? bake::BakeOptions{}.direct
                                                                        : bake::parseDirectLight(value);
        if (!direct) throw OptionError("--direct '" + value + "' for --method ibrr: choose vpl, rays or auto (rays)");
        b.direct = *direct;
      },
      "auto",
      "vpl (the paper's: the VPLs on the lights render hemicubes) or rays (shadow rays to the lights from every "
      "store layer, unclamped; hemicubes only after a bounce); auto = rays");
  flags.option("--direct-points", b.directPoints,
               "--direct rays: jittered points per store layer (a layer whose first 4 points agree, no penumbra, "
               "and lie within 2% of a plane across its pixel stops at 4)");
  flags.option("--direct-samples", b.directSamples,
               "--direct rays: shadow rays per point and emissive triangle (a point or spot light takes one)");
}

void printIbrrBakeSummary(const bake::BakeResult& result, const bake::BakeOptions& settings) {
  const bake::BakeStats& s = result.stats;
  const StoreStats store = result.store.stats();
  std::printf("VPLs per bounce  ");
  for (std::size_t k = 0; k < s.vplsPerBounce.size(); ++k) std::printf("%s%zu", k ? " " : "", s.vplsPerBounce[k]);
  std::printf("  (%llu paths, seed %u)\n", static_cast<unsigned long long>(settings.paths), settings.seed);
  if (settings.direct == bake::DirectLight::Rays)
    std::printf("hemicubes        %llu (h = %d, after a bounce; the direct light by rays), %.1f per second\n",
                static_cast<unsigned long long>(s.hemicubes), settings.indirectHemicubeResolution,
                s.totalSeconds > 0 ? double(s.hemicubes) / s.totalSeconds : 0.0);
  else
    std::printf("hemicubes        %llu (H = %d on the lights, h = %d after a bounce), %.1f per second\n",
                static_cast<unsigned long long>(s.hemicubes), settings.hemicubeResolution,
                settings.indirectHemicubeResolution, s.totalSeconds > 0 ? double(s.hemicubes) / s.totalSeconds : 0.0);
  std::printf("samples inserted %llu of %llu hemicube pixels, %llu LDI pixel writes (%s warp)\n",
              static_cast<unsigned long long>(s.samplesInserted), static_cast<unsigned long long>(s.hemicubePixels),
              static_cast<unsigned long long>(s.pixelWrites), bake::warpDeviceName(s.warp));
  if (s.indirectLdcResolution > 0)
    std::printf("levels           R = %d: %llu writes; the bounces at R2 = %d: %llu writes, added to the store in %.2f s\n",
                settings.ldcResolution, static_cast<unsigned long long>(s.pixelWrites - s.indirectLevelWrites),
                s.indirectLdcResolution, static_cast<unsigned long long>(s.indirectLevelWrites), s.levelSeconds);
  std::printf("layers           %llu from the geometry seeds, %llu opened by hemicubes (surfaces the seeds lack)\n",
              static_cast<unsigned long long>(s.seedLayers), static_cast<unsigned long long>(s.openedLayers));
  std::printf("store            R = %d, %llu layers, %.2f layers per occupied pixel, %.1f MiB (%.0f bytes per layer)\n",
              result.store.frame().resolution(), static_cast<unsigned long long>(store.layerCount),
              store.layersPerOccupiedPixel, double(store.totalBytes) / (1024.0 * 1024.0), store.bytesPerLayer);
  if (s.warp == bake::WarpDevice::Gpu)  // the GPU draws and warps each batch while the host queues the next
    std::printf("time             %.2f s: light paths %.2f s, render %.2f s, warp %.2f s (%s: %llu hemicubes "
                "drawn in %llu passes and warped in %llu dispatches; %llu waits for a batch in flight)\n",
                s.totalSeconds, s.vplSeconds, s.renderSeconds, s.warpSeconds,
                s.gpuTimes ? "the GPU's time, overlapped with the host's work" : "each pass and batch waited for",
                static_cast<unsigned long long>(s.hemicubes), static_cast<unsigned long long>(s.renderPasses),
                static_cast<unsigned long long>(s.warpDispatches), static_cast<unsigned long long>(s.warpBatchWaits));
  else
    std::printf("time             %.2f s: light paths %.2f s, render %.2f s, readback %.2f s, warp %.2f s (conversion "
                "%.2f s, insertion %.2f s, overlapped), waiting for the warp %.2f s\n",
                s.totalSeconds, s.vplSeconds, s.renderSeconds, s.readbackSeconds, s.warpSeconds,
                s.warpSeconds - s.insertSeconds, s.insertSeconds, s.waitSeconds);
  char besideNote[160] = "in the time above";
  if (s.directBeside)
    std::snprintf(besideNote, sizeof besideNote,
                  "beside the hemicubes, after seeding the store's level in %.2f s; the bake waited %.2f s for them",
                  s.besideSeedSeconds, s.besideWaitSeconds);
  if (settings.direct == bake::DirectLight::Rays)
    std::printf("direct light     %.2f s (%s): up to %u points per layer, %u shadow rays per point and "
                "emissive triangle, %.1f M rays (%.1f M/s); %llu layers found no surface under them\n",
                s.directSeconds, besideNote, settings.directPoints, settings.directSamples,
                double(s.directRays) * 1e-6,
                s.directSeconds > 0 ? double(s.directRays) * 1e-6 / s.directSeconds : 0.0,
                static_cast<unsigned long long>(s.directLayersWithoutSurface));
  if (s.biasCompensated)
    std::printf(
        "bias compensation %.2f s (in the time above): on the layers at R = %d, %u points per layer, %u pass%s, "
        "%.1f M rays (%.1f M/s); %llu layers found no surface under them\n",
        s.biasSeconds, s.biasLevelResolution, s.biasPointsPerLayer, settings.biasPasses,
        settings.biasPasses == 1 ? "" : "es",
        double(s.biasRays) * 1e-6, s.biasSeconds > 0 ? double(s.biasRays) * 1e-6 / s.biasSeconds : 0.0,
        static_cast<unsigned long long>(s.biasLayersWithoutSurface));
  else
    std::printf("bias compensation off (%s)\n",
                !settings.biasCompensation ? "--bias-compensation off"
                : settings.geometryClamp == 0.0f ? "no clamp: --clamp 0"
                                                 : "no clamped VPL: the direct light by rays and --max-bounces 0");
}

// Under mpirun: every rank bakes its share of the light paths, rank 0 writes the store (distributed_bake.hpp).
void runDistributedBake(cluster::Cluster& cluster, const scene::Scene& scene, const bake::BakeOptions& settings,
                        const std::string& output) {
  cluster.agree();                                               // every rank has its scene, options and GPU
  const double fingerprint = double(scene.fingerprint() >> 11);  // 53 bits, exact in a double
  const std::vector<double> range = cluster.allMax(std::vector<double>{fingerprint, -fingerprint});
  if (range[0] != -range[1])
    throw Error(scene.sourcePath.string() +
                ": the ranks loaded different scenes (their fingerprints differ); give "
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
  std::printf(
      "ranks            %d: light paths %.2f s (the slowest rank), reduce %.3f s (%.1f MiB a message, "
      "log2 N steps), store broadcast %.3f s, compensation %.2f s, write %.3f s; reduce + write %.1f%% of "
      "%.2f s\n",
      cluster.size(), t.lightPathSeconds, t.reduceSeconds, double(t.storeBytes) / (1024.0 * 1024.0), t.broadcastSeconds,
      t.compensationSeconds, writeSeconds, total > 0 ? 100.0 * (t.reduceSeconds + writeSeconds) / total : 0.0, total);
}

void IbrrBake::run(const BakeRun& run) {
  cluster::Cluster& cluster = cluster::Cluster::world();
  if (run.output.empty()) throw Error("give the store file with -o FILE.ibrr");
  checkOutputFile(run.output);  // before any work
  const bake::BakeOptions settings = m_settings;
  bake::validateBakeOptions(settings);
  const scene::Scene scene = loadSceneArgument(run.scene);
  checkOutputFile(run.output);  // and not one of the scene's files
  if (!scene.hasLights())
    throw Error(scene.sourcePath.string() +
                ": the scene has no emitters or lights to bake; add an emissive material "
                "(Ke) or a light to the manifest");
  bake::checkBakeMemory(scene, settings);  // before the GPU starts
  const auto context = gpu::createHeadlessContext(gpu::HeadlessPlatform::Automatic, cluster.localRank(),
                                                    bake::bakeSoftwareRaster());
  info("baking " + scene.sourcePath.string() + " (" + std::to_string(scene.triangleCount()) + " triangles) on " +
       context->info().renderer);
  if (cluster.distributed()) return runDistributedBake(cluster, scene, settings, run.output);
  ProgressLine progress;
  const bake::BakeResult result = bake::bakeStore(scene, settings, progress);
  progress.finish();
  bake::writeStoreFile(result.store, run.output);
  printIbrrBakeSummary(result, settings);
}

// ---------------------------------------------------------------------------------------------
// In `ibrr compare`: the store baked with checkpoints at 1/8, 1/4 and 1/2 of the paths, every camera rendered.

// The IBRR bake and display at the compare's settings, changed by `configure` for the rows other than "ibrr".
// `name`: the report's row, which also titles its walkthrough page.
compare::MethodResult compareIbrr(const compare::MethodContext& context, const char* name,
                                  void (*configure)(bake::BakeOptions&)) {
  bake::BakeOptions bake = compareBakeOptions(context.options);
  configure(bake);
  const display::RenderMethod& method = kIbrrDisplay;
  compare::MethodResult result;
  bake::BakeCheckpoints checkpoints;
  for (std::uint32_t divisor : {8u, 4u, 2u})
    if (bake.paths / divisor > 0) checkpoints.paths.push_back(bake.paths / divisor);
  // Each point is what a bake of that many paths gives and costs: compensated (its time added) when the
  // bake is.
  checkpoints.onCheckpoint = [&](const LayeredDepthCube& bounces, const LayeredDepthCube* bouncesLevel,
                                 std::uint32_t paths, double seconds) {
    bake::BakeStats stats;
    const LayeredDepthCube partial = bake.direct == bake::DirectLight::Rays
                                         ? bake::addDirectLight(context.scene, bounces, bake, {}, stats)
                                         : bounces;
    seconds += stats.directSeconds;
    std::optional<LayeredDepthCube> compensated;
    if (bake::compensatesClamp(context.scene, bake)) {
      compensated = bake::compensateBias(context.scene, partial, bouncesLevel, bake, {}, stats);
      seconds += stats.biasSeconds;
    }
    display::RenderSettings settings;
    settings.store = compensated ? &*compensated : &partial;
    const double error = context.meanError(
        [&](std::size_t camera) { return compare::renderReportImage(context, camera, method, settings); });
    result.convergence.push_back(
        {seconds, error, std::to_string(paths) + " of " + std::to_string(bake.paths) + " paths"});
  };
  ProgressLine progress;
  const bake::BakeResult baked = bake::bakeStore(context.scene, bake, progress, &checkpoints);
  progress.finish();
  result.bakeSeconds = baked.stats.totalSeconds;
  result.bytes = baked.store.stats().totalBytes;
  result.bytesWhat = "store";
  result.invalidWhat = "hole pixels";
  nlohmann::json settings = bakeSettingsJson(bake);
  settings["pathsCompleted"] = baked.stats.pathsCompleted;
  settings["vpls"] = baked.stats.hemicubes;
  result.settingsJson = settings.dump();
  result.summary = std::to_string(baked.stats.pathsCompleted) + " paths, " + std::to_string(baked.stats.hemicubes) +
                   " VPLs, R = " + std::to_string(bake.ldcResolution) +
                   ", H = " + std::to_string(bake.hemicubeResolution) +
                   ", h = " + std::to_string(bake.indirectHemicubeResolution) +
                   (baked.stats.biasCompensated ? ", bias compensated (" + std::to_string(bake.biasRays) +
                                                      " rays per layer, " + std::to_string(bake.biasPasses) + " passes)"
                                                : ", clamped, no bias compensation");
  display::RenderSettings renderSettings;
  renderSettings.store = &baked.store;
  for (std::size_t c = 0; c < context.cameras.size(); ++c) {
    result.cameras.push_back(compare::renderCamera(context, c, method, renderSettings));
    result.invalid += result.cameras.back().holePixels;
  }
  result.convergence.push_back({result.bakeSeconds, compare::meanRelativeRmse(result),
                                std::to_string(baked.stats.pathsCompleted) + " paths (final)"});
  if (context.options.exportPages) result.page = exporter::storePage(context.scene, baked.store, name);
  return result;
}

}  // namespace

bake::BakeOptions compareBakeOptions(const compare::CompareOptions& options) {
  bake::BakeOptions bake;  // Final: the documented defaults
  bake.seed = options.seed;
  if (options.quality == compare::Quality::Preview) bake.paths = 1024;
  if (options.quality == compare::Quality::Smoke) {
    bake.paths = 32;
    bake.ldcResolution = 128;
    bake.hemicubeResolution = 32;
    bake.indirectHemicubeResolution = 16;
    bake.biasRays = 8;  // the compensation runs at every convergence point too: keep the smoke run quick
    bake.biasPasses = 1;
  }
  bake.timeBudgetSeconds = options.budgetSeconds;
  return bake;
}

nlohmann::json bakeSettingsJson(const bake::BakeOptions& bake) {
  return {{"paths", bake.paths},
          {"seed", bake.seed},
          {"maxBounces", bake.maxBounces},
          {"ldcResolution", bake.ldcResolution},
          {"hemicubeResolution", bake.hemicubeResolution},
          {"indirectHemicubeResolution", bake.indirectHemicubeResolution},
          {"geometryClamp", bake.geometryClamp},
          {"biasCompensation", bake.biasCompensation},
          {"biasRays", bake.biasRays},
          {"biasPasses", bake.biasPasses},
          {"direct", bake::directLightName(bake.direct)},
          {"indirectLdcResolution", bake::indirectLevelResolution(bake)},
          {"directPoints", bake.directPoints},
          {"directSamples", bake.directSamples},
          {"splat", bake.splat == SplatKernel::Box ? "box" : "gauss"},
          {"seedLayersFromGeometry", bake.seedLayersFromGeometry},
          {"timeBudgetSeconds", bake.timeBudgetSeconds},
          {"supersample", compare::kSupersample}};
}

const Method kIbrrMethod = {
    "ibrr",
    "the LDC store",
    [] { return std::unique_ptr<BakeMethod>(std::make_unique<IbrrBake>()); },
    true,
    {{"ibrr",
      "image-based radiosity representation: the direct light by shadow rays per layer, the bounces' VPL hemicubes "
      "warped into a layered depth cube at R/8, the clamp's bias compensated per layer",
      [](const compare::MethodContext& context) { return compareIbrr(context, "ibrr", [](bake::BakeOptions&) {}); }},
     {"ibrr-clamped", "the same IBRR bake without the bias compensation (the clamped store)",
      [](const compare::MethodContext& context) {
        return compareIbrr(context, "ibrr-clamped", [](bake::BakeOptions& bake) { bake.biasCompensation = false; });
      }},
     {"ibrr-paper",
      "the paper's configuration: the VPLs on the lights render hemicubes too, all warped into the one store at R "
      "(--direct vpl --indirect-ldc 0)",
      [](const compare::MethodContext& context) {
        return compareIbrr(context, "ibrr-paper",
                           [](bake::BakeOptions& bake) { bake = bake::paperConfiguration(bake); });
      }}},
    &kIbrrDisplay,
    [] { return std::unique_ptr<RenderInputs>(std::make_unique<IbrrRenderInputs>()); }};

}  // namespace ibrr::app
