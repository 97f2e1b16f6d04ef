#include "display/ibrr_bench.hpp"

#include "bake/bake.hpp"
#include "display/gbuffer.hpp"
#include "display/ibrr_reconstruction.hpp"
#include "display/keller.hpp"
#include "gpu/context.hpp"
#include "scene/load.hpp"
#include "scene/mesh_import.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <string_view>

namespace ibrr::display {
namespace {

namespace fs = std::filesystem;

// The bake with each warp (CPU: read back, TBB; GPU: a compute pass, no readback), against rendering the same
// hemicubes alone. Insertion figures: hemicubes per second of the bake's wall time, and LDI pixel writes
// ((sample, pixel) pairs of the splats) per second of the insertion's own time.
// On a software GL the GPU warp runs on the same two cores as everything else, about 20 times slower than the
// CPU warp, so it is measured on fewer paths there (kSoftwareGpuWarpPaths) to keep the run short.
constexpr std::uint32_t kSoftwareGpuWarpPaths = 64;

// The bake's two configurations, each with both warps: the default (the direct light by rays, the bounces at R/8)
// and the paper's (the VPLs on the lights render hemicubes, one level).
struct BakeConfiguration {
  const char* name;
  bake::BakeOptions (*configure)(bake::BakeOptions);
  std::vector<bake::WarpDevice> warps;
};
const BakeConfiguration kBakeConfigurations[] = {
    {"default", [](bake::BakeOptions options) { return options; }, {bake::WarpDevice::Cpu, bake::WarpDevice::Gpu}},
    {"paper", bake::paperConfiguration, {bake::WarpDevice::Cpu, bake::WarpDevice::Gpu}},
};

void benchBake(const std::string& name, const scene::Scene& scene, const bake::BakeOptions& options,
               bool softwareRenderer, std::ostream& out) {
  for (const BakeConfiguration& configuration : kBakeConfigurations)
    for (bake::WarpDevice warp : configuration.warps) {
      bake::BakeOptions withWarp = configuration.configure(options);
      withWarp.warp = warp;
      if (warp == bake::WarpDevice::Gpu && softwareRenderer)
        withWarp.paths = std::min(withWarp.paths, kSoftwareGpuWarpPaths);
      const double renderOnly = hemicubeRenderOnlySeconds(scene, bake::generateBakeVpls(scene, withWarp), withWarp, warp);
      const bake::BakeResult result = bake::bakeStore(scene, withWarp);
      const bake::BakeStats& s = result.stats;
      const StoreStats store = result.store.stats();
      char beside[96] = "";
      if (s.directBeside)
        std::snprintf(beside, sizeof beside, " beside the hemicubes (store-level seeds %.2f, waited %.2f)",
                      s.besideSeedSeconds, s.besideWaitSeconds);
      char line[896];
      std::snprintf(
          line, sizeof line,
          "%-12s %-8s %s warp %5u paths %8zu tris %6llu hemicubes (%llu passes, %llu warp dispatches) %7.1f hc/s %8.1f "
          "M writes/s (%.0f M) | total %6.2f "
          "s = paths %.2f + seeds %.2f + render %.2f + readback %.2f, warp %.2f (insert %.2f)%s, wait %.2f, "
          "direct %.2f (%.1f M rays/s)%s, bias compensation %.2f | render-only %.2f s, bake/render-only %.2f (%.2f "
          "without the compensation) | %.1f MiB, %.2f layers/pixel, %llu opened\n",
          name.c_str(), configuration.name, bake::warpDeviceName(warp), withWarp.paths, scene.triangleCount(),
          static_cast<unsigned long long>(s.hemicubes), static_cast<unsigned long long>(s.renderPasses),
          static_cast<unsigned long long>(s.warpDispatches), double(s.hemicubes) / s.totalSeconds,
          1e-6 * double(s.pixelWrites) / std::max(s.insertSeconds, 1e-9), 1e-6 * double(s.pixelWrites), s.totalSeconds,
          s.vplSeconds, s.seedSeconds, s.renderSeconds, s.readbackSeconds, s.warpSeconds, s.insertSeconds,
          warp == bake::WarpDevice::Cpu ? " overlapped" : "", s.waitSeconds, s.directSeconds,
          s.directSeconds > 0.0 ? 1e-6 * double(s.directRays) / s.directSeconds : 0.0, beside, s.biasSeconds, renderOnly,
          s.totalSeconds / renderOnly, (s.totalSeconds - s.biasSeconds) / renderOnly,
          double(store.totalBytes) / (1 << 20), store.layersPerOccupiedPixel,
          static_cast<unsigned long long>(s.openedLayers));
      out << line << std::flush;
    }
}

// The CPU insertion alone, on real hemicubes (bake::timeCpuInsertion): nanoseconds per LDI pixel write on one
// thread and on all, and writes per hemicube, at the store's R and at the bounces' level (R2 of the options).
void benchInsertion(const std::string& name, const scene::Scene& scene, const bake::BakeOptions& options,
                    std::uint32_t hemicubes, std::ostream& out) {
  for (const int resolution : {options.ldcResolution, bake::indirectLevelResolution(options)}) {
    const bake::InsertionTiming t = bake::timeCpuInsertion(scene, options, resolution, hemicubes);
    const double writes = double(std::max<std::uint64_t>(t.writes, 1));
    char line[256];
    std::snprintf(line, sizeof line,
                  "%-12s insertion at R = %3d: %llu hemicubes (h = %d, after a bounce), %.0f writes per hemicube | "
                  "1 thread %.1f ns per write | %d threads %.1f ns per write\n",
                  name.c_str(), resolution, static_cast<unsigned long long>(t.hemicubes),
                  options.indirectHemicubeResolution, writes / double(std::max<std::uint64_t>(t.hemicubes, 1)),
                  1e9 * t.oneThreadSeconds / writes, t.threads, 1e9 * t.allThreadsSeconds / writes);
    out << line << std::flush;
  }
}

// Display cost per frame: the GPU time of the G-buffer and of the reconstruction pass (GL_TIME_ELAPSED
// queries, so the figures are the GPU's work and not the driver's latency), the wall time of the CPU
// reconstruction, and the medians over several frames, since the shared machines here are noisy.
struct FrameTimes {
  double gbufferMs = 0.0;  // GPU
  double gpuMs = 0.0;      // GPU reconstruction, GPU time
  double cpuMs = 0.0;      // CPU reconstruction, wall time
  std::size_t coveredPixels = 0;
  std::size_t holePixels = 0;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

FrameTimes timeFrames(const scene::Scene& scene, const LayeredDepthCube& store, int width, int height, int frames) {
  const gpu::SceneRenderer renderer(scene);
  GBuffer gbuffer(width, height);
  GpuReconstructor reconstructor(store);
  const ReconstructionOptions options;
  std::vector<double> gbufferMs, gpuMs, cpuMs;
  FrameTimes times;
  auto frame = [&] {
    gbuffer.render(renderer, scene, scene.camera(""));
    reconstructor.run(gbuffer, options);
  };
  const char* rendererName = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const bool softwareRenderer =
      rendererName && std::string_view(rendererName).find("llvmpipe") != std::string_view::npos;
  for (int f = 0; f < 5; ++f) frame();  // warm-up: shader compilation on first use, GPU clocks up
  glFinish();
  if (softwareRenderer) {
    // llvmpipe's timer queries are not usable (0 for compute dispatches, hours for some draws):
    // wall time around each pass with glFinish on both sides, the same thing for a CPU renderer.
    for (int f = 0; f < frames; ++f) {
      Stopwatch pass;
      gbuffer.render(renderer, scene, scene.camera(""));
      glFinish();
      gbufferMs.push_back(pass.milliseconds());
      pass.restart();
      reconstructor.run(gbuffer, options);
      glFinish();
      gpuMs.push_back(pass.milliseconds());
    }
  } else {
    // Frames back to back with GPU timestamps around each pass, read after the last frame: no stall
    // between frames, so the GPU runs as in the viewer (and keeps its clocks up).
    std::vector<gpu::Query> stamps;
    for (int k = 0; k < 3 * frames; ++k) stamps.emplace_back(GL_TIMESTAMP);
    for (int f = 0; f < frames; ++f) {
      glQueryCounter(stamps[std::size_t(3 * f)].id(), GL_TIMESTAMP);
      gbuffer.render(renderer, scene, scene.camera(""));
      glQueryCounter(stamps[std::size_t(3 * f + 1)].id(), GL_TIMESTAMP);
      reconstructor.run(gbuffer, options);
      glQueryCounter(stamps[std::size_t(3 * f + 2)].id(), GL_TIMESTAMP);
    }
    glFinish();
    auto stampNs = [&](int k) {
      GLuint64 ns = 0;
      glGetQueryObjectui64v(stamps[std::size_t(k)].id(), GL_QUERY_RESULT, &ns);
      return double(ns);
    };
    for (int f = 0; f < frames; ++f) {
      gbufferMs.push_back(1e-6 * (stampNs(3 * f + 1) - stampNs(3 * f)));
      gpuMs.push_back(1e-6 * (stampNs(3 * f + 2) - stampNs(3 * f + 1)));
    }
  }
  // The CPU path on the last G-buffer.
  for (int f = -1; f < frames; ++f) {
    const Reconstruction cpu = reconstructOnCpu(gbuffer, store, options);
    times.coveredPixels = cpu.coveredPixels;
    times.holePixels = cpu.holePixels;
    if (f >= 0) cpuMs.push_back(1e3 * cpu.seconds);
  }
  times.gbufferMs = median(gbufferMs);
  times.gpuMs = median(gpuMs);
  times.cpuMs = median(cpuMs);
  return times;
}

// The same store without bias compensation: the same layers, so the same frame (the compensation changes
// values, not the structure the display walks).
void benchWithoutCompensation(const scene::Scene& scene, bake::BakeOptions options, const FrameTimes& compensated,
                              int width, int height, bool quick, std::ostream& out) {
  options.biasCompensation = false;
  options.geometryClamp = bake::geometryClampFor(scene, bake::BakeOptions{});  // the same clamp
  const bake::BakeResult baked = bake::bakeStore(scene, options);
  const FrameTimes times = timeFrames(scene, baked.store, width, height, quick ? 3 : 101);
  const double frame = times.gbufferMs + times.gpuMs;
  const double compensatedFrame = compensated.gbufferMs + compensated.gpuMs;
  char line[256];
  std::snprintf(line, sizeof line,
                "  the same store without bias compensation: frame %7.3f ms (%5.3fx the compensated one's), "
                "%llu layers\n",
                frame, frame / std::max(compensatedFrame, 1e-9),
                static_cast<unsigned long long>(baked.store.layers().size()));
  out << line << std::flush;
}

void benchDisplay(const scene::Scene& scene, bool quick, std::ostream& out) {
  const int width = quick ? 320 : 1280, height = quick ? 180 : 720;
  out << "display at " << width << "x" << height
      << " (Cornell, bilinear filter, median of 101 frames drawn back to back, pass times from GPU timestamps, wall "
         "times on llvmpipe; stores baked with "
         "H = h = 64):\n";
  // VPLs per light path in this scene, to aim the path count at a VPL count.
  bake::BakeOptions probe;
  probe.paths = 1000;
  const double vplsPerPath = double(bake::generateBakeVpls(scene, probe).vpls.size()) / probe.paths;
  double frameAt100 = 0.0, cpuAt100 = 0.0, ibrrAt1000 = 0.0;
  for (int target : quick ? std::vector<int>{100, 300} : std::vector<int>{100, 1000, 10000}) {
    bake::BakeOptions options;
    options.paths = std::max(1u, std::uint32_t(double(target) / vplsPerPath + 0.5));
    options.hemicubeResolution = options.indirectHemicubeResolution = 64;
    const bake::BakeResult baked = bake::bakeStore(scene, options);
    const FrameTimes times = timeFrames(scene, baked.store, width, height, quick ? 3 : 101);
    const double frame = times.gbufferMs + times.gpuMs;
    if (frameAt100 == 0.0) frameAt100 = frame, cpuAt100 = times.cpuMs;
    if (target == 1000) ibrrAt1000 = frame;
    char line[320];
    std::snprintf(line, sizeof line,
                  "  %6llu VPLs: G-buffer %7.3f ms + reconstruction %7.3f ms = frame %7.3f ms (%5.3fx the first; "
                  "reconstruction %.0f%% of it) | "
                  "CPU reconstruction %7.2f ms (%5.3fx) | %llu layers, holes %zu of %zu covered pixels\n",
                  static_cast<unsigned long long>(baked.stats.hemicubes), times.gbufferMs, times.gpuMs, frame,
                  frame / std::max(frameAt100, 1e-9), 100.0 * times.gpuMs / std::max(frame, 1e-9), times.cpuMs,
                  times.cpuMs / std::max(cpuAt100, 1e-9), static_cast<unsigned long long>(baked.store.layers().size()),
                  times.holePixels, times.coveredPixels);
    out << line << std::flush;
    if (target == (quick ? 300 : 1000)) benchWithoutCompensation(scene, options, times, width, height, quick, out);
  }
  if (!quick) {
    bake::BakeOptions options;
    options.paths = std::max(1u, std::uint32_t(1000.0 / vplsPerPath + 0.5));
    options.hemicubeResolution = options.indirectHemicubeResolution = 64;
    // The GPU frame alone, as the IBRR frame it is compared with; the per-pixel bias compensation (CPU)
    // would add its own seconds (docs/bias_compensation.md).
    options.biasCompensation = false;
    const rays::VplSet vpls = bake::generateBakeVpls(scene, options);
    const gpu::SceneRenderer renderer(scene);
    GBuffer gbuffer(width, height);
    gbuffer.render(renderer, scene, scene.camera(""));
    glFinish();
    const Stopwatch kellerTime;  // wall time, glFinish included: Keller's frame is many passes
    const KellerResult keller = renderKeller(scene, renderer, gbuffer, vpls, options);
    glFinish();
    const double kellerMs = kellerTime.milliseconds();
    char line[256];
    std::snprintf(line, sizeof line, "  Keller, %zu VPLs: frame %.1f ms (wall) = %.0fx the IBRR frame at ~1,000 VPLs\n",
                  keller.vplCount, kellerMs, kellerMs / std::max(ibrrAt1000, 1e-9));
    out << line << std::flush;
  }
}

// The Cornell box with one more mesh scaled and placed by `transform`.
scene::Scene cornellWith(const fs::path& mesh, const glm::mat4& transform) {
  scene::Scene scene = scene::loadScene(scene::builtinSceneFolder() / "cornell.json");
  const std::uint32_t index = scene::importMeshFile(mesh, scene);
  for (std::uint32_t m = 0; m < scene.materials.size(); ++m)
    if (scene.materials[m].name == "white") {
      for (std::uint32_t& material : scene.meshes[index].triangleMaterials) material = m;
    }
  scene.instances.push_back({index, transform});
  scene.finalize();
  return scene;
}

void benchGeometryIndependence(const fs::path& shared, bool quick, std::ostream& out) {
  struct Model {
    const char* file;
    glm::vec3 translate;
    float scale;
  };
  // The bunny on the short block, the dragon on the tall one (millimetres).
  const glm::vec3 bunnyAt(200.8f, 134.7f, 168.5f), dragonAt(372.7f, 287.8f, 354.7f);
  const std::vector<Model> models = {
      {"bunny/bun_zipper_res4.ply", bunnyAt, 900.0f},    {"bunny/bun_zipper_res3.ply", bunnyAt, 900.0f},
      {"bunny/bun_zipper_res2.ply", bunnyAt, 900.0f},    {"bunny/bun_zipper.ply", bunnyAt, 900.0f},
      {"dragon/dragon_vrip_res2.ply", dragonAt, 800.0f}, {"dragon/dragon_vrip.ply", dragonAt, 800.0f}};
  out << "store size against triangle count (Cornell box + model, R = 256, 128 paths, H = 128, h = 64):\n";
  for (const Model& model : models) {
    const fs::path file = shared / model.file;
    std::error_code ec;
    if (!fs::exists(file, ec)) {
      out << "  " << model.file << ": not found under " << shared.string() << ", skipped\n";
      continue;
    }
    if (quick && std::string(model.file).find("res") == std::string::npos) continue;
    const glm::mat4 transform = glm::scale(glm::translate(glm::mat4(1.0f), model.translate), glm::vec3(model.scale));
    const scene::Scene scene = cornellWith(file, transform);
    bake::BakeOptions options;
    options.paths = quick ? 16 : 128;
    options.hemicubeResolution = 128;
    options.indirectHemicubeResolution = 64;
    const bake::BakeResult baked = bake::bakeStore(scene, options);
    const StoreStats stats = baked.store.stats();
    char line[256];
    std::snprintf(
        line, sizeof line,
        "  %-28s %8zu triangles: store %7.2f MiB, %8llu layers, %.3f layers per occupied pixel, bake %.1f s\n",
        model.file, scene.triangleCount(), double(stats.totalBytes) / (1 << 20),
        static_cast<unsigned long long>(stats.layerCount), stats.layersPerOccupiedPixel, baked.stats.totalSeconds);
    out << line << std::flush;
  }
}

}  // namespace

double hemicubeRenderOnlySeconds(const scene::Scene& scene, const rays::VplSet& vpls, const bake::BakeOptions& options,
                                 bake::WarpDevice warp) {
  const gpu::SceneRenderer renderer(scene);
  const int maxResolution = bake::renderedHemicubeResolution(vpls, options);
  const int levels = bake::indirectLevelResolution(options) != options.ldcResolution ? 2 : 1;
  gpu::HemicubeRenderer hemicubes(renderer, scene, maxResolution,
                                  bake::hemicubeSlots(options, warp, maxResolution, levels));
  std::vector<gpu::HemicubeCapture> captures(static_cast<std::size_t>(hemicubes.slots()));
  // A pass as the bake draws it; the CPU warp's bake waits for it and reads each hemicube back.
  std::size_t queued = 0;
  auto pass = [&] {
    hemicubes.submit(warp == bake::WarpDevice::Cpu);
    if (warp == bake::WarpDevice::Cpu)
      for (std::size_t k = 0; k < queued; ++k) hemicubes.readBack(captures[k]);
    queued = 0;
  };
  glFinish();
  const Stopwatch renderTime;
  for (const rays::Vpl& vpl : vpls.vpls) {
    throwIfInterrupted();  // the conference room's 4,096 paths render for minutes
    if (!bake::rendersHemicube(vpl, options)) continue;
    if (queued == captures.size()) pass();
    hemicubes.draw(bake::hemicubeSourceFor(vpl, scene), bake::hemicubeResolutionFor(vpl, options), captures[queued],
                   int(queued));
    ++queued;
  }
  pass();
  glFinish();
  return renderTime.seconds();
}

int runIbrrBenchmark(const IbrrBenchOptions& options, std::ostream& out) {
  // The bakes run on a context as `ibrr bake` makes it (bake::bakeSoftwareRaster), the other sections on one as
  // every other command does.
  auto context = gpu::createHeadlessContext(gpu::HeadlessPlatform::Automatic, 0,
                                            options.bake ? bake::bakeSoftwareRaster() : gpu::SoftwareRaster::OwnThreads);
  out << "GPU: " << context->info().summary() << "\n";
  const scene::Scene cornell = scene::loadScene(scene::builtinSceneFolder() / "cornell.json");
  // 1,024 paths rather than the default 4,096: the conference room would take ten minutes.
  bake::BakeOptions defaults;
  defaults.paths = options.bakePaths.value_or(options.quick ? 32 : 1024);
  std::error_code missing;
  const bool conferenceAvailable = fs::exists(options.sharedScenes / "conference" / "conference.obj", missing);
  if (!options.quick && (options.bake || options.display) && !conferenceAvailable)
    out << "conference room: conference/conference.obj not found under " << options.sharedScenes.string()
        << ", its bake and display skipped (--shared-scenes)\n";
  if (options.bake) {
    out << "bake (" << defaults.paths << " paths, R = " << defaults.ldcResolution
        << ", H = " << defaults.hemicubeResolution << ", h = " << defaults.indirectHemicubeResolution << "):\n";
    const bool software = context->info().isSoftware();
    benchBake("cornell", cornell, defaults, software, out);
    const fs::path conference = scene::builtinSceneFolder() / "conference.json";
    if (!options.quick && conferenceAvailable)
      benchBake("conference", scene::loadScene(conference), defaults, software, out);
    if (options.insertion || options.display || options.geometry) {
      context.reset();
      context = gpu::createHeadlessContext();
    }
  }
  if (options.insertion) {
    out << "CPU insertion (R = " << defaults.ldcResolution << " and its bounces' level):\n";
    benchInsertion("cornell", cornell, defaults, options.quick ? 8 : 128, out);
  }
  if (options.display) benchDisplay(cornell, options.quick, out);
  if (options.display && !options.quick && conferenceAvailable) {
    // The walkthrough's per-frame passes on a heavy mesh (what `ibrr view` draws, without the window).
    const scene::Scene conference = scene::loadScene(scene::builtinSceneFolder() / "conference.json");
    bake::BakeOptions small;
    small.paths = 256;
    small.hemicubeResolution = small.indirectHemicubeResolution = 64;
    const bake::BakeResult baked = bake::bakeStore(conference, small);
    const FrameTimes times = timeFrames(conference, baked.store, 1280, 720, 21);
    const double frame = times.gbufferMs + times.gpuMs;
    char line[320];
    std::snprintf(line, sizeof line,
                  "  conference (%zu tris, %llu VPLs, camera %s), 1280x720: G-buffer %.3f ms + reconstruction %.3f ms "
                  "= frame %.3f ms (reconstruction %.0f%% of it) | CPU reconstruction %.2f ms\n",
                  conference.triangleCount(), static_cast<unsigned long long>(baked.stats.hemicubes),
                  conference.camera("").name.c_str(), times.gbufferMs, times.gpuMs, frame,
                  100.0 * times.gpuMs / std::max(frame, 1e-9), times.cpuMs);
    out << line << std::flush;
  }
  if (options.geometry) benchGeometryIndependence(options.sharedScenes, options.quick, out);
  return 0;
}

}  // namespace ibrr::display
