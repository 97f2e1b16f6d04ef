#include "bake/bake.hpp"

#include "bake/bias_compensation.hpp"
#include "bake/direct_light.hpp"
#include "bake/gpu_insertion.hpp"
#include "bake/layer_points.hpp"
#include "gpu/context.hpp"
#include "gpu/hemicube.hpp"
#include "gpu/memory.hpp"
#include "gpu/scene_renderer.hpp"
#include "ibrr/hemicube_samples.hpp"
#include "ibrr/ldc_builder.hpp"
#include "ibrr/store_file.hpp"
#include "ibrr/surface_seeds.hpp"
#include "rays/embree_scene.hpp"
#include "rays/light_set.hpp"
#include "rays/vpl.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/input_file.hpp"
#include "util/log.hpp"
#include "util/memory.hpp"
#include "util/progress.hpp"
#include "util/stopwatch.hpp"

#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <glm/gtc/constants.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace ibrr::bake {
namespace {

// A batch of hemicubes waiting to be inserted together (more parallel work per insertion).
struct Batch {
  // When the warp task converts them: the read-back hemicubes and their VPLs' Φ.
  std::vector<gpu::HemicubeCapture> captures;
  std::vector<glm::vec3> powers;
  // The hemicubes' samples and views, kept from batch to batch so that their buffers are allocated once.
  std::vector<HemicubeSamples> samples;
  std::vector<HemicubeSampleView> views;
  std::size_t used = 0;
  std::size_t pixels = 0;
  void clear() {
    used = 0;
    pixels = 0;
  }
};

// Seeds the builder's layers from every triangle of the scene (ibrr/surface_seeds.hpp), a slice of
// triangles at a time so the seed samples never take much memory.
void seedLayersFromGeometry(const scene::Scene& scene, LdcBuilder& builder) {
  constexpr std::size_t kTrianglesPerSlice = 1u << 18;
  std::vector<SeedTriangle> slice;
  slice.reserve(kTrianglesPerSlice);
  HemicubeSamples seeds;
  auto flush = [&] {
    seeds.clear();
    appendSurfaceSeeds(builder.frame(), slice, seeds);
    builder.seedLayers(seeds.view());
    slice.clear();
  };
  for (const scene::MeshInstance& instance : scene.instances) {
    const scene::TriangleMesh& mesh = scene.meshes[instance.mesh];
    const glm::mat3 normalToWorld = glm::transpose(glm::inverse(glm::mat3(instance.objectToWorld)));
    const bool hasNormals = mesh.normals.size() == mesh.positions.size();
    for (const glm::uvec3& t : mesh.triangles) {
      SeedTriangle& tri = slice.emplace_back();
      for (int k = 0; k < 3; ++k) {
        tri.positions[k] = glm::vec3(instance.objectToWorld * glm::vec4(mesh.positions[t[k]], 1.0f));
        tri.normals[k] = hasNormals ? normalToWorld * mesh.normals[t[k]] : glm::vec3(0.0f);
      }
      if (slice.size() == kTrianglesPerSlice) flush();
    }
  }
  if (!slice.empty()) flush();
}

constexpr std::size_t kBatchPixels = 1u << 20;  // flush a batch at about a million hemicube pixels
constexpr std::size_t kBatchHemicubes = 64;

// The solid angles of a face's pixels (gpu::atlasPixelSolidAngle, row-major), for a face of H pixels a side,
// full or half: kept per thread for the last four kinds of face it met (a bake has at most four: H and h, full
// and half), so that each is computed once instead of for every pixel of every hemicube.
std::span<const float> faceSolidAngles(const gpu::HemicubeFace& face, int resolution) {
  struct Table {
    int resolution = 0;
    bool half = false;
    std::vector<float> solidAngles;
  };
  thread_local std::array<Table, 4> tables;
  thread_local std::size_t oldest = 0;
  for (Table& table : tables)
    if (table.resolution == resolution && table.half == face.half) return table.solidAngles;
  Table& table = tables[oldest];
  oldest = (oldest + 1) % tables.size();
  table.resolution = resolution;
  table.half = face.half;
  table.solidAngles.resize(std::size_t(face.rows) * std::size_t(resolution));
  for (int row = 0; row < face.rows; ++row)
    for (int x = 0; x < resolution; ++x)
      table.solidAngles[std::size_t(row) * resolution + x] = gpu::atlasPixelSolidAngle(face, resolution, x, row);
  return table.solidAngles;
}

// One face of a capture: its atlas rows as row-major arrays of `width` texels (row 0 the face's first), and its
// pixels' solid angles (faceSolidAngles).
struct FaceTexels {
  const glm::vec4* positions = nullptr;        // xyz, w = 1 where covered
  const glm::vec4* normalsGeometry = nullptr;  // xyz normal facing the centre, w = g
  std::span<const float> solidAngles;
  int width = 0, rows = 0;
};

// The edge reach of a sample at p (normal n, footprint `area`) in texel `index` = (x, row) of `face`: the sum over
// its four neighbours within the face, in the order −x, +x, −y, +y, that meet its surface at an edge
// (ibrr::edgeReachTowards).
__attribute__((always_inline)) inline glm::vec3 edgeReach(const FaceTexels& face, std::size_t index, int x, int row,
                                                         const glm::vec3& p, const glm::vec3& n, float area) {
  glm::vec3 reach(0.0f);
  auto towards = [&](std::size_t neighbour) __attribute__((always_inline)) {
    if (face.positions[neighbour].w < 0.5f) return;
    reach += edgeReachTowards(p, n, area, glm::vec3(face.positions[neighbour]),
                              glm::vec3(face.normalsGeometry[neighbour]));
  };
  const auto width = std::size_t(face.width);
  if (x > 0) towards(index - 1);
  if (x + 1 < face.width) towards(index + 1);
  if (row > 0) towards(index - width);
  if (row + 1 < face.rows) towards(index + width);
  return reach;
}

// Texel (x, row) of `face` as a sample of a hemicube centred at `centre`: g clamped if asked, footprint
// A = dω·r²/cosθx from the pixel's solid angle (ibrr::footprintArea), and the reach of a sample beside an edge where
// two surfaces meet; not valid where the pixel sees nothing or a surface the VPL does not light.
// Written into `s` (a block's entry, reused block after block: an invalid sample sets only `valid`). Inlined in
// the block loop: a call a pixel cost a fifth of its instructions in saving and restoring registers.
__attribute__((always_inline)) inline void atlasPixelSample(const FaceTexels& face, const glm::vec3& centre,
                                                            float geometryClamp, int x, int row, PixelSample& s) {
  s.valid = false;
  const std::size_t index = std::size_t(row) * std::size_t(face.width) + std::size_t(x);
  const glm::vec4& position = face.positions[index];
  if (position.w < 0.5f) return;
  const glm::vec4& normalGeometry = face.normalsGeometry[index];
  s.g = normalGeometry.w;
  if (geometryClamp > 0.0f) s.g = std::min(s.g, geometryClamp);
  if (!(s.g > 0.0f)) return;  // back-facing to the VPL or outside a spot's cone: no light
  s.position = glm::vec3(position);
  s.normal = glm::vec3(normalGeometry);
  const glm::vec3 toCentre = centre - s.position;
  const float distance = glm::length(toCentre);
  const float cosTheta = distance > 0.0f ? glm::dot(s.normal, toCentre) / distance : 1.0f;
  s.area = footprintArea(face.solidAngles[index], distance, cosTheta);
  s.edgeReach = edgeReach(face, index, x, row, s.position, s.normal, s.area);
  s.valid = true;
}

// Covered atlas pixels of one capture → store samples of value Φ·g, each face by aligned 2×2 blocks (rows, then
// columns; within a block row by row), a block that sees one plane merged into one sample (ibrr::mergeableBlock).
// shaders/ldc_insert.comp takes the same samples in the same order.
void captureToSamples(const gpu::HemicubeCapture& capture, const glm::vec3& power, float geometryClamp,
                      HemicubeSamples& samples) {
  samples.clear();
  samples.reserve(capture.positions.size());
  samples.edgeReaches.reserve(capture.positions.size());  // every sample of a capture has one
  samples.centre = capture.centre;
  const int width = capture.width();
  auto add = [&](const PixelSample& s) { samples.add(s.position, s.normal, power * s.g, s.area, s.edgeReach); };
  for (const gpu::HemicubeFace& gpuFace : capture.faces) {
    const std::size_t firstTexel = std::size_t(gpuFace.firstRow) * std::size_t(width);
    const FaceTexels face{capture.positions.data() + firstTexel, capture.normalsGeometry.data() + firstTexel,
                          faceSolidAngles(gpuFace, capture.resolution), width, gpuFace.rows};
    PixelSample block[4];
    for (int row = 0; row < face.rows; row += 2) {
      const bool secondRow = row + 1 < face.rows;
      for (int x = 0; x < width; x += 2) {
        const bool secondColumn = x + 1 < width;
        // The block's four pixels written out rather than looped over k: the loop's form kept the pixel's sample
        // out of line (1.2 G instructions against 1.0 G over 256 hemicubes, 16.5 against 10.4 ns a pixel).
        atlasPixelSample(face, capture.centre, geometryClamp, x, row, block[0]);
        block[1].valid = false;  // past the face's edge unless sampled
        block[2].valid = false;
        block[3].valid = false;
        if (secondColumn) atlasPixelSample(face, capture.centre, geometryClamp, x + 1, row, block[1]);
        if (secondRow) atlasPixelSample(face, capture.centre, geometryClamp, x, row + 1, block[2]);
        if (secondRow && secondColumn) atlasPixelSample(face, capture.centre, geometryClamp, x + 1, row + 1, block[3]);
        if (mergeableBlock(block)) {
          add(mergedSample(block));
          continue;
        }
        for (const PixelSample& s : block)
          if (s.valid) add(s);
      }
    }
  }
}

}  // namespace

gpu::HemicubeSource hemicubeSourceFor(const rays::Vpl& vpl, const scene::Scene& scene) {
  gpu::HemicubeSource source;
  source.position = vpl.position;
  source.axis = vpl.normal;
  switch (vpl.kind) {
    case rays::VplKind::Surface:
      source.profile = gpu::EmissionProfile::LambertianSurface;
      break;
    case rays::VplKind::Point:
      source.profile = gpu::EmissionProfile::IsotropicPoint;
      break;
    case rays::VplKind::Spot: {
      source.profile = gpu::EmissionProfile::Spot;
      const scene::SpotLight& spot = scene.spotLights.at(vpl.light);
      source.spotCosInner = spot.cosInner;
      source.spotCosOuter = spot.cosOuter;
      break;
    }
  }
  return source;
}

float geometryClampFor(const scene::Scene& scene, const BakeOptions& options, const AutoClampDistances& distances) {
  if (options.geometryClamp >= 0.0f) return options.geometryClamp;
  const float fraction = options.biasCompensation ? distances.compensated : distances.clamped;
  const float distance = fraction * std::max(scene.bounds().diagonal(), 1e-12f);
  return 1.0f / (glm::pi<float>() * distance * distance);
}

BakeOptions paperConfiguration(BakeOptions options) {
  options.direct = DirectLight::Vpl;
  options.indirectLdcResolution = 0;
  return options;
}

bool compensatesClamp(const scene::Scene& scene, const BakeOptions& options) {
  const bool clampedVpls = options.direct == DirectLight::Vpl || options.maxBounces > 0;
  return options.biasCompensation && clampedVpls && geometryClampFor(scene, options) > 0.0f;
}

int hemicubeResolutionFor(const rays::Vpl& vpl, const BakeOptions& options) {
  return vpl.bounce == 0 ? options.hemicubeResolution : options.indirectHemicubeResolution;
}

rays::VplSet generateBakeVpls(const scene::Scene& scene, const BakeOptions& options) {
  const rays::EmbreeScene embree(scene);
  rays::VplOptions vplOptions;
  vplOptions.pathCount = options.paths;
  vplOptions.seed = options.seed;
  vplOptions.maxBounces = options.maxBounces;
  return rays::generateVpls(embree, vplOptions);
}

void validateBakeOptions(const BakeOptions& options) {
  auto even = [](int value) { return value >= 2 && value <= 4096 && value % 2 == 0; };
  if (options.paths == 0) throw OptionError("--paths must be at least 1");
  if (!(options.timeBudgetSeconds >= 0.0) || !std::isfinite(options.timeBudgetSeconds))
    throw OptionError("--budget must be a non-negative number of seconds");
  if (!even(options.hemicubeResolution))
    throw OptionError("--hemicube " + std::to_string(options.hemicubeResolution) + ": must be even, in [2, 4096]");
  if (!even(options.indirectHemicubeResolution))
    throw OptionError("--indirect-hemicube " + std::to_string(options.indirectHemicubeResolution) +
                ": must be even, in [2, 4096]");
  if (options.maxBounces > 1000) throw OptionError("--max-bounces must be at most 1000");
  if (options.gpuBatchHemicubes < 0 || options.gpuBatchHemicubes > kMaxGpuBatchHemicubes)
    throw OptionError("--gpu-batch " + std::to_string(options.gpuBatchHemicubes) + ": must be in [0, " +
                std::to_string(kMaxGpuBatchHemicubes) + "] (0: from the GPU's memory)");
  if (!std::isfinite(options.geometryClamp)) throw OptionError("--clamp must be finite (0 = off, negative = automatic)");
  if (options.ldcResolution < kMinResolution || options.ldcResolution > kMaxResolution)
    throw OptionError("--ldc " + std::to_string(options.ldcResolution) + ": must be in [" + std::to_string(kMinResolution) +
                ", " + std::to_string(kMaxResolution) + "] (the paper used 128-512)");
  if (options.biasRays == 0 || options.biasRays > kMaxBiasCompensationRays)
    throw OptionError("--bias-rays " + std::to_string(options.biasRays) + ": must be in [1, " +
                std::to_string(kMaxBiasCompensationRays) + "]");
  if (options.biasPasses == 0 || options.biasPasses > kMaxBiasCompensationPasses)
    throw OptionError("--bias-passes " + std::to_string(options.biasPasses) + ": must be in [1, " +
                std::to_string(kMaxBiasCompensationPasses) + "]");
  if (options.indirectLdcResolution > 0 &&
      (options.indirectLdcResolution < kMinResolution || options.indirectLdcResolution > options.ldcResolution))
    throw OptionError("--indirect-ldc " + std::to_string(options.indirectLdcResolution) + ": must be in [" +
                std::to_string(kMinResolution) + ", --ldc " + std::to_string(options.ldcResolution) + "]");
  constexpr std::uint32_t kMaxDirectCount = 1024;
  if (options.directPoints == 0 || options.directPoints > kMaxDirectCount)
    throw OptionError("--direct-points " + std::to_string(options.directPoints) + ": must be in [1, " +
                std::to_string(kMaxDirectCount) + "]");
  if (options.directSamples == 0 || options.directSamples > kMaxDirectCount)
    throw OptionError("--direct-samples " + std::to_string(options.directSamples) + ": must be in [1, " +
                std::to_string(kMaxDirectCount) + "]");
  const std::uint32_t endPath = options.shareEnd();
  if (options.firstPath >= endPath || endPath > options.paths)
    throw OptionError("the light-path share [" + std::to_string(options.firstPath) + ", " + std::to_string(endPath) +
                ") is not a non-empty part of the " + std::to_string(options.paths) + " paths");
  if (options.isShare() && options.timeBudgetSeconds > 0.0)
    throw OptionError("--budget stops a whole bake; a distributed bake's share cannot stop on time");
}

WarpDevice resolveWarpDevice(WarpDevice requested) {
  // auto takes the CPU warp on every GL: on llvmpipe the "GPU" is the CPU's own cores, and on a hardware GPU the
  // batched GPU warp has yet to be shown correct and faster there (docs/ibrr.md, "The GPU warp", has the figures).
  return requested == WarpDevice::Automatic ? WarpDevice::Cpu : requested;
}

gpu::SoftwareRaster bakeSoftwareRaster() {
  // The GL thread renders while the warp's TBB tasks (CpuWarp) keep the other cores busy. On two cores llvmpipe's
  // own raster threads only hand each hemicube back and forth between them: rasterising on the GL thread took the
  // Cornell bake from 4.62–4.82 s to 4.29–4.34 s, the same user time and half the system time (docs/benchmarks.md).
  // With more cores its threads rasterise beside the warp, and keep their default.
  return tbb::info::default_concurrency() <= 2 ? gpu::SoftwareRaster::CallingThread : gpu::SoftwareRaster::OwnThreads;
}

namespace {
// The GPU warp matches the CPU warp on llvmpipe; on a hardware GPU the batched warp is not yet measured against it
// (docs/ibrr.md, "The GPU warp").
void warnOfHardwareGpuWarp() {
  const gpu::ContextInfo info = gpu::currentRenderer();
  if (!info.isSoftware())
    warn("--warp gpu on " + info.renderer +
         ": on a hardware GPU this warp's store may differ from the CPU warp's (docs/ibrr.md, \"The GPU warp\"); "
         "--warp cpu is the reference one");
}

// The --warp names, one per device.
constexpr std::pair<WarpDevice, const char*> kWarpDeviceNames[] = {
    {WarpDevice::Automatic, "auto"}, {WarpDevice::Cpu, "cpu"}, {WarpDevice::Gpu, "gpu"}};
}  // namespace

const char* warpDeviceName(WarpDevice warp) {
  for (const auto& [device, name] : kWarpDeviceNames)
    if (device == warp) return name;
  return "auto";
}

std::optional<WarpDevice> parseWarpDevice(std::string_view name) {
  for (const auto& [device, deviceName] : kWarpDeviceNames)
    if (name == deviceName) return device;
  return std::nullopt;
}

namespace {
constexpr std::pair<DirectLight, const char*> kDirectLightNames[] = {{DirectLight::Vpl, "vpl"},
                                                                     {DirectLight::Rays, "rays"}};
}  // namespace

const char* directLightName(DirectLight direct) {
  for (const auto& [kind, name] : kDirectLightNames)
    if (kind == direct) return name;
  return "vpl";
}

std::optional<DirectLight> parseDirectLight(std::string_view name) {
  for (const auto& [kind, kindName] : kDirectLightNames)
    if (name == kindName) return kind;
  return std::nullopt;
}

namespace {

// A hemicube drawn into a slot of the atlas (its layout in `capture`, not yet read back) and its VPL's power Φ.
struct DrawnHemicube {
  gpu::HemicubeCapture* capture = nullptr;
  glm::vec3 power{0.0f};
};

class Warp;

// The hemicubes queued into the atlas's slots and not yet warped, for the warps of both levels: when every slot is
// full, or a warp is asked to finish, one pass draws them all (gpu/hemicube.hpp) and each level warps its own, in
// the order they were queued.
class HemicubeQueue {
public:
  // waitForEachPass: for a warp that reads the hemicubes back at once (the CPU warp), each pass is waited for and
  // timed on the host; otherwise the GPU times it and the host goes on (HemicubeRenderer::submit).
  HemicubeQueue(gpu::HemicubeRenderer& hemicubes, bool waitForEachPass)
      : m_hemicubes(hemicubes),
        m_waitForEachPass(waitForEachPass),
        m_entries(std::size_t(hemicubes.slots())),
        m_captures(m_entries.size()) {}
  void add(Warp& level, const gpu::HemicubeSource& source, int resolution, const glm::vec3& power);
  // Draws the queued hemicubes in one pass (timed as rendering), hands each level its own and empties the queue.
  void flush();
  [[nodiscard]] gpu::HemicubeRenderer& hemicubes() const { return m_hemicubes; }

private:
  struct Entry {
    Warp* level = nullptr;
    DrawnHemicube hemicube;
  };
  gpu::HemicubeRenderer& m_hemicubes;
  bool m_waitForEachPass;
  std::vector<Entry> m_entries;
  std::vector<gpu::HemicubeCapture> m_captures;  // a slot each
  std::vector<DrawnHemicube> m_levelHemicubes;
  std::size_t m_used = 0;
};

// Where the bake sends each VPL's hemicube: it queues it to be drawn (HemicubeQueue) and warps it into the store.
class Warp {
public:
  explicit Warp(HemicubeQueue& queue) : m_queue(queue) {}
  virtual ~Warp() = default;
  void add(const rays::Vpl& vpl, const scene::Scene& scene, int resolution) {
    m_queue.add(*this, hemicubeSourceFor(vpl, scene), resolution, vpl.power);
  }
  // Warps the hemicubes of this level that the queue drew, in their order.
  virtual void warpDrawn(std::span<const DrawnHemicube> hemicubes) = 0;
  virtual void finish() = 0;  // every hemicube added so far is in the store
  virtual LayerSums layerSums() const = 0;
  virtual void addStats(BakeStats& stats) const = 0;

protected:
  HemicubeQueue& m_queue;
};

void HemicubeQueue::add(Warp& level, const gpu::HemicubeSource& source, int resolution, const glm::vec3& power) {
  if (m_used == m_entries.size()) flush();
  m_hemicubes.draw(source, resolution, m_captures[m_used], int(m_used));
  m_entries[m_used] = {&level, {&m_captures[m_used], power}};
  ++m_used;
}

void HemicubeQueue::flush() {
  if (m_used == 0) return;
  m_hemicubes.submit(m_waitForEachPass);
  for (std::size_t first = 0; first < m_used; ++first) {
    Warp* level = m_entries[first].level;
    if (std::any_of(m_entries.begin(), m_entries.begin() + std::ptrdiff_t(first),
                    [&](const Entry& earlier) { return earlier.level == level; }))
      continue;  // this level's hemicubes went with its first one
    m_levelHemicubes.clear();
    for (std::size_t k = first; k < m_used; ++k)
      if (m_entries[k].level == level) m_levelHemicubes.push_back(m_entries[k].hemicube);
    level->warpDrawn(m_levelHemicubes);
  }
  m_used = 0;
}

// Reads each hemicube back into a batch; a TBB task inserts a full batch into the builder while the GL thread
// renders the next one into the other batch. Turning the hemicubes into samples is the one step that can go
// either side. With two threads or fewer the GL thread converts each hemicube right after its readback, while
// its texels are in the cache: converted later by the task, a batch's atlases (32 bytes a texel, up to a million
// texels) had left the caches, and the GL thread waited for the task (the default Cornell bake on 2 cores:
// 5.6–5.8 s against 5.4 s). With more threads the task converts the batch's hemicubes in parallel, where the GL
// thread alone would convert one core at a time. Either way the samples, and so the store, are the same.
class CpuWarp final : public Warp {
public:
  CpuWarp(HemicubeQueue& queue, LdcBuilder& builder, float geometryClamp, BakeStats& stats,
          bool convertOnGlThread = tbb::this_task_arena::max_concurrency() <= 2)
      : Warp(queue),
        m_builder(builder),
        m_clamp(geometryClamp),
        m_stats(stats),
        m_convertOnGlThread(convertOnGlThread) {}
  ~CpuWarp() noexcept override {  // never leave a task running on the builder
    try {
      m_group.wait();
    } catch (...) {  // on the way out of a failed bake: the first error is the one reported
    }
  }

  void warpDrawn(std::span<const DrawnHemicube> hemicubes) override {
    for (const DrawnHemicube& drawn : hemicubes) {
      Batch& batch = m_batches[m_filling];
      if (batch.samples.size() <= batch.used) batch.samples.emplace_back();
      m_queue.hemicubes().readBack(*drawn.capture);
      m_stats.readbackSeconds += m_queue.hemicubes().lastReadbackSeconds();
      batch.pixels += drawn.capture->positions.size();
      if (m_convertOnGlThread) {
        const Stopwatch conversionTime;
        captureToSamples(*drawn.capture, drawn.power, m_clamp, batch.samples[batch.used]);
        m_conversionSeconds += conversionTime.seconds();
      } else {  // the task converts it: the batch takes the capture, the queue's slot the batch's old buffers
        if (batch.captures.size() <= batch.used) {
          batch.captures.emplace_back();
          batch.powers.emplace_back();
        }
        std::swap(batch.captures[batch.used], *drawn.capture);
        batch.powers[batch.used] = drawn.power;
      }
      ++batch.used;
      if (batch.pixels >= kBatchPixels || batch.used >= kBatchHemicubes) launch();
    }
  }
  void finish() override {
    m_queue.flush();
    if (m_batches[m_filling].used > 0) launch();
    wait();
  }
  LayerSums layerSums() const override { return m_builder.layerSums(); }
  void addStats(BakeStats& stats) const override {
    stats.warpSeconds = m_conversionSeconds + m_taskConversionSeconds[0] + m_taskConversionSeconds[1] +
                        m_insertSeconds[0] + m_insertSeconds[1];
    stats.insertSeconds = m_insertSeconds[0] + m_insertSeconds[1];
    const BuilderStats builder = m_builder.stats();
    stats.samplesInserted = builder.samples - builder.droppedSamples;
    stats.pixelWrites = builder.splatRecords;
    stats.openedLayers = builder.layers - stats.seedLayers;
    stats.warp = WarpDevice::Cpu;
  }

private:
  void wait() {
    if (!m_pending) return;
    const Stopwatch waitTime;
    m_group.wait();
    m_stats.waitSeconds += waitTime.seconds();
    m_pending = false;
  }
  // Warps the filling batch in a task once the other one is free, and fills the other.
  void launch() {
    wait();
    const int index = m_filling;
    m_group.run([this, index] {
      Batch& batch = m_batches[index];
      if (!m_convertOnGlThread) {
        const Stopwatch conversionTime;
        tbb::parallel_for(std::size_t(0), batch.used, [&](std::size_t i) {
          captureToSamples(batch.captures[i], batch.powers[i], m_clamp, batch.samples[i]);
        });
        m_taskConversionSeconds[index] += conversionTime.seconds();
      }
      batch.views.resize(batch.used);
      for (std::size_t i = 0; i < batch.used; ++i) batch.views[i] = batch.samples[i].view();
      const Stopwatch insertTime;
      m_builder.insert(batch.views);
      m_insertSeconds[index] += insertTime.seconds();
    });
    m_pending = true;
    m_filling = 1 - m_filling;
    m_batches[m_filling].clear();
  }

  LdcBuilder& m_builder;
  float m_clamp;
  BakeStats& m_stats;
  bool m_convertOnGlThread;
  Batch m_batches[2];
  int m_filling = 0;
  tbb::task_group m_group;
  bool m_pending = false;
  double m_conversionSeconds = 0.0;                  // on the GL thread
  double m_taskConversionSeconds[2] = {0.0, 0.0};    // in the task, a batch each
  double m_insertSeconds[2] = {0.0, 0.0};
};

// Warps each batch of hemicubes the queue drew on the GPU, where they were drawn (gpu_insertion.hpp).
class GpuWarp final : public Warp {
public:
  GpuWarp(HemicubeQueue& queue, const LdcBuilder& seeded, SplatKernel kernel, int maxResolution, float clamp)
      : Warp(queue), m_insertion(seeded, kernel, maxResolution, queue.hemicubes().slots()), m_clamp(clamp) {}

  // Queues the batch's dispatches with no wait (gpu_insertion.hpp; at most two batches in flight), their GPU time
  // measured by a query; on a software GL, whose queries measure nothing, waited for and timed on the host.
  void warpDrawn(std::span<const DrawnHemicube> hemicubes) override {
    m_batch.clear();
    for (const DrawnHemicube& drawn : hemicubes) m_batch.push_back({drawn.capture, drawn.power});
    if (m_software) {
      const Stopwatch warpTime;
      m_insertion.insert(m_queue.hemicubes(), m_batch, m_clamp);
      glFinish();
      m_hostWarpSeconds += warpTime.seconds();
      return;
    }
    m_warpTime.begin();
    m_insertion.insert(m_queue.hemicubes(), m_batch, m_clamp);
    m_warpTime.end();
  }
  void finish() override { m_queue.flush(); }
  LayerSums layerSums() const override { return LayerSums::fromStore(m_insertion.finalize()); }
  void addStats(BakeStats& stats) const override {
    const GpuInsertionStats gpu = m_insertion.stats();
    stats.warpSeconds = stats.insertSeconds = m_software ? m_hostWarpSeconds : m_warpTime.seconds();
    stats.samplesInserted = gpu.samples;
    stats.pixelWrites = gpu.pixelWrites;
    stats.openedLayers = gpu.openedLayers;
    stats.warpDispatches = gpu.dispatches;
    stats.warpBatchWaits = gpu.batchWaits;
    stats.warp = WarpDevice::Gpu;
  }

private:
  GpuInsertion m_insertion;
  float m_clamp;
  std::vector<GpuInsertion::Hemicube> m_batch;
  bool m_software = gpu::currentRenderer().isSoftware();
  gpu::GpuTimeTotal m_warpTime;
  double m_hostWarpSeconds = 0.0;
};

// The VPLs of light paths [first, end) of `all` from bounce `firstBounce` on, with their per-bounce counts.
rays::VplSet pathShare(const rays::VplSet& all, std::uint32_t first, std::uint32_t end, std::uint32_t firstBounce = 0) {
  rays::VplSet share;
  share.pathCount = all.pathCount;
  share.emittedPower = all.emittedPower;
  for (const rays::Vpl& vpl : all.vpls) {
    if (vpl.path < first || vpl.path >= end || vpl.bounce < firstBounce) continue;
    share.vpls.push_back(vpl);
    if (share.countPerBounce.size() <= vpl.bounce) share.countPerBounce.resize(vpl.bounce + 1, 0);
    ++share.countPerBounce[vpl.bounce];
  }
  return share;
}

// The bake's levels: the store's (R) and, with --indirect-ldc R2 < R, the coarser one the VPLs after a bounce
// are warped into.
struct Levels {
  std::unique_ptr<HemicubeQueue> queue;  // the warps' shared slots (first: the warps refer to it)
  std::unique_ptr<Warp> store, indirect;
  Warp& forVpl(const rays::Vpl& vpl) { return indirect && vpl.bounce > 0 ? *indirect : *store; }
  void finish() {
    store->finish();
    if (indirect) indirect->finish();
  }
  LightPathStores rounded() const {
    if (!indirect) return lightPathStores(store->layerSums(), nullptr);
    const LayerSums coarse = indirect->layerSums();
    return lightPathStores(store->layerSums(), &coarse);
  }
};

// Renders and warps every VPL in path order. Checkpoints and the time budget act between light paths: when VPL
// i belongs to path P, paths 0 .. P−1 are complete once the warp has finished. Returns the paths completed.
std::uint32_t warpAllVpls(const scene::Scene& scene, const rays::VplSet& vpls, const BakeOptions& options,
                          Levels& warp, const BakeProgress& progress, const BakeCheckpoints* checkpoints,
                          const Stopwatch& bakeTime, double& checkpointSeconds, BakeStats& stats) {
  std::size_t nextCheckpoint = 0;
  auto bakeSeconds = [&] { return bakeTime.seconds() - checkpointSeconds; };
  const std::uint64_t total = vpls.vpls.size();
  for (std::uint64_t i = 0; i < total; ++i) {
    throwIfInterrupted();
    const rays::Vpl& vpl = vpls.vpls[i];
    if (i > 0 && vpl.path != vpls.vpls[i - 1].path) {
      if (options.timeBudgetSeconds > 0.0 && bakeSeconds() > options.timeBudgetSeconds) {
        warp.finish();
        return vpl.path;
      }
      while (checkpoints && nextCheckpoint < checkpoints->paths.size() &&
             checkpoints->paths[nextCheckpoint] <= vpl.path) {
        const std::uint32_t paths = checkpoints->paths[nextCheckpoint++];
        if (paths == 0) continue;
        warp.finish();
        const double at = bakeSeconds();
        const Stopwatch callbackTime;
        const LightPathStores partial = warp.rounded();
        checkpoints->onCheckpoint(scaleRadiosity(partial.store, float(options.paths) / float(paths)),
                                  partial.bounces(), paths, at);
        checkpointSeconds += callbackTime.seconds();
      }
    }
    const int resolution = hemicubeResolutionFor(vpl, options);
    warp.forVpl(vpl).add(vpl, scene, resolution);
    // A hemicube's atlas holds 3H² pixels (a front face and four half faces), a point light's cube 6H².
    stats.hemicubePixels +=
        std::size_t(vpl.kind == rays::VplKind::Point ? 6 : 3) * std::size_t(resolution) * std::size_t(resolution);
    ++stats.hemicubes;
    if (progress) progress({kHemicubePhase, i + 1, total, "hemicubes", {}});
  }
  warp.finish();
  return options.paths;
}

// The store's frame and ε for a bake of `scene`.
LdcParams storeParams(const scene::Scene& scene, const BakeOptions& options) {
  LdcParams params;
  params.bounds = {scene.bounds().min, scene.bounds().max};
  params.resolution = options.ldcResolution;
  params.epsDistance = options.epsDistance;
  params.epsNormal = options.epsNormal;
  params.sceneFingerprint = scene.fingerprint();
  return params;
}

}  // namespace

std::uint64_t estimateBakeBytes(const scene::Scene& scene, const BakeOptions& options) {
  constexpr double kBytesPerLayer = 200.0;  // builder layers and totals, seeds, store, GPU warp buffers
  constexpr double kBytesPerPixel = 80.0;   // offset arrays of the builder, the store and the warp; the CPU warp's
                                            // four planes a pixel (64 bytes)
  constexpr double kFixedBytes = 320.0 * (1 << 20);  // GL, hemicube atlas, VPLs, the CPU warp's splats of a group
  const LdcFrame frame(resolveParams(storeParams(scene, options)));
  const double pixelArea = double(frame.pixelSize()) * double(frame.pixelSize());
  // Each triangle seeds the pixels it covers in the LDI of its dominant axis: its area times the
  // largest component of its unit normal, in pixels.
  double layers = 0.0;
  for (const scene::MeshInstance& instance : scene.instances) {
    const scene::TriangleMesh& mesh = scene.meshes[instance.mesh];
    for (const glm::uvec3& t : mesh.triangles) {
      glm::vec3 p[3];
      for (int k = 0; k < 3; ++k) p[k] = glm::vec3(instance.objectToWorld * glm::vec4(mesh.positions[t[k]], 1.0f));
      const glm::vec3 doubleAreaNormal = glm::abs(glm::cross(p[1] - p[0], p[2] - p[0]));
      layers += 0.5 * double(std::max({doubleAreaNormal.x, doubleAreaNormal.y, doubleAreaNormal.z})) / pixelArea;
    }
  }
  return std::uint64_t(kFixedBytes + kBytesPerLayer * layers + kBytesPerPixel * double(frame.pixelCount()));
}

void checkBakeMemory(const scene::Scene& scene, const BakeOptions& options) {
  requireMemory(estimateBakeBytes(scene, options),
                "baking the IBRR store at --ldc " + std::to_string(options.ldcResolution),
                "lower --ldc (each halving needs about a quarter of the memory)");
}

namespace {

// A builder for the cube of `options` at resolution R, seeded from the geometry when the options say so.
LdcBuilder seededBuilder(const scene::Scene& scene, BakeOptions options, int resolution) {
  options.ldcResolution = resolution;
  LdcBuilder builder(storeParams(scene, options), options.splat);  // validates R and ε
  if (options.seedLayersFromGeometry) seedLayersFromGeometry(scene, builder);
  return builder;
}

std::unique_ptr<Warp> makeWarp(WarpDevice device, HemicubeQueue& queue, LdcBuilder& builder, const BakeOptions& options,
                               float geometryClamp, BakeStats& stats, int maxResolution) {
  if (device == WarpDevice::Gpu)
    return std::make_unique<GpuWarp>(queue, builder, options.splat, maxResolution, geometryClamp);
  return std::make_unique<CpuWarp>(queue, builder, geometryClamp, stats);
}

// A level's share of the statistics: its writes and samples add up, the times too.
void addLevelStats(const Warp& warp, BakeStats& stats, std::uint64_t* levelWrites) {
  BakeStats level;
  level.seedLayers = stats.seedLayers;
  warp.addStats(level);
  stats.warp = level.warp;
  stats.warpSeconds += level.warpSeconds;
  stats.insertSeconds += level.insertSeconds;
  stats.samplesInserted += level.samplesInserted;
  stats.pixelWrites += level.pixelWrites;
  stats.warpDispatches += level.warpDispatches;
  stats.warpBatchWaits += level.warpBatchWaits;
  if (levelWrites)
    *levelWrites = level.pixelWrites;
  else
    stats.openedLayers = level.openedLayers;  // the store's level: its layers are the store's
}

}  // namespace

InsertionTiming timeCpuInsertion(const scene::Scene& scene, const BakeOptions& options, int resolution,
                                 std::uint32_t hemicubes) {
  constexpr int kInsertionTimings = 3;
  validateBakeOptions(options);
  const rays::VplSet vpls = pathShare(generateBakeVpls(scene, options), 0, options.paths, 1);
  const float geometryClamp = geometryClampFor(scene, options);
  const gpu::SceneRenderer renderer(scene);
  gpu::HemicubeRenderer hemicubeRenderer(renderer, scene, options.indirectHemicubeResolution);
  std::vector<HemicubeSamples> samples(std::min<std::size_t>(hemicubes, vpls.vpls.size()));
  std::vector<HemicubeSampleView> views(samples.size());
  gpu::HemicubeCapture capture;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const rays::Vpl& vpl = vpls.vpls[i];
    hemicubeRenderer.render(hemicubeSourceFor(vpl, scene), hemicubeResolutionFor(vpl, options), capture);
    captureToSamples(capture, vpl.power, geometryClamp, samples[i]);
    views[i] = samples[i].view();
  }
  InsertionTiming timing;
  timing.hemicubes = samples.size();
  timing.threads = tbb::info::default_concurrency();
  for (const int threads : {1, timing.threads}) {
    LdcBuilder builder = seededBuilder(scene, options, resolution);
    tbb::task_arena arena(threads);
    // Timed after a first call, as in a bake, where a builder takes thousands of hemicubes: the first also
    // indexes the seeds and allocates each thread's sums. The fastest of three calls: on a shared machine the
    // others measure what else ran.
    arena.execute([&] { builder.insert(views); });
    double fastest = std::numeric_limits<double>::infinity();
    for (int call = 0; call < kInsertionTimings; ++call) {
      const std::uint64_t before = builder.stats().splatRecords;
      const Stopwatch insertTime;
      arena.execute([&] { builder.insert(views); });
      fastest = std::min(fastest, insertTime.seconds());
      timing.writes = builder.stats().splatRecords - before;
    }
    (threads == 1 ? timing.oneThreadSeconds : timing.allThreadsSeconds) = fastest;
  }
  return timing;
}

// The GPU warp's batch: the hemicube slots that an eighth of the GPU's free memory holds, each with its share of
// every level's miss list and layer room (GpuInsertion::slotBytes; options.gpuBatchHemicubes when set), within
// GL's array layers and the miss list within one shader storage block.
int gpuBatchSlots(const BakeOptions& options, int maxResolution, int levels) {
  GLint maxLayers = 0, maxBlock = 0;
  glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &maxLayers);
  glGetIntegerv(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &maxBlock);
  const std::uint64_t missBytes = GpuInsertion::missListBytes(maxResolution, 1);
  const std::uint64_t limit = std::min<std::uint64_t>(std::uint64_t(std::max(maxLayers, 1)),
                                                      std::max<std::uint64_t>(std::uint64_t(maxBlock) / missBytes, 1));
  if (options.gpuBatchHemicubes > 0)
    return int(std::min<std::uint64_t>(std::uint64_t(options.gpuBatchHemicubes), limit));
  constexpr std::uint64_t kMaxSlots = 256;
  constexpr std::uint64_t kSoftwareBudget = 64u << 20;  // a software GL's memory is the process's
  const std::uint64_t slotBytes =
      gpu::HemicubeRenderer::slotBytes(maxResolution) + std::uint64_t(levels) * GpuInsertion::slotBytes(maxResolution);
  const std::optional<std::uint64_t> free = gpu::availableVideoMemoryBytes();
  const std::uint64_t budget = free ? *free / 8 : kSoftwareBudget;
  return int(std::clamp<std::uint64_t>(budget / slotBytes, 1, std::min(kMaxSlots, limit)));
}

int hemicubeSlots(const BakeOptions& options, WarpDevice warp, int maxResolution, int levels) {
  if (warp == WarpDevice::Gpu) return gpuBatchSlots(options, maxResolution, levels);
  // The CPU warp reads each hemicube back, one a pass. Alone, 971 bounce hemicubes of the Cornell box (H = 64) drew
  // in 0.20 s sixteen a pass against 0.30 s one a pass on llvmpipe; but in the default bake, beside the insertion
  // on the other core, sixteen a pass took 2.8–2.9 s to render against 2.2 s (5.7–6.1 s against 5.3–5.4 s in all,
  // one busy hour), as a pass's readbacks find its atlases out of the cache and llvmpipe's threads wait longer.
  return 1;
}

bool rendersHemicube(const rays::Vpl& vpl, const BakeOptions& options) {
  return vpl.bounce > 0 || options.direct == DirectLight::Vpl;
}

int renderedHemicubeResolution(const rays::VplSet& vpls, const BakeOptions& options) {
  int resolution = 0;
  for (const rays::Vpl& vpl : vpls.vpls)
    if (rendersHemicube(vpl, options)) resolution = std::max(resolution, hemicubeResolutionFor(vpl, options));
  return resolution > 0 ? resolution : options.indirectHemicubeResolution;
}

int indirectLevelResolution(const BakeOptions& options) {
  if (options.indirectLdcResolution < 0)
    return std::max(options.ldcResolution / 8, std::min(options.ldcResolution, kMinDefaultIndirectLdc));
  return options.indirectLdcResolution == 0 ? options.ldcResolution : options.indirectLdcResolution;
}

LightPathStores lightPathStores(const LayerSums& sums, const LayerSums* indirect) {
  if (!indirect) return {sums.rounded(), std::nullopt};
  LayeredDepthCube bounces = indirect->rounded();
  LayeredDepthCube store = withIndirectLevel(sums.rounded(), bounces);
  return {std::move(store), std::move(bounces)};
}

namespace {

// The direct light of every layer of `store` (direct_light.hpp, options.directPoints and directSamples); its time
// and rays go into `stats`.
std::vector<glm::vec3> directLightOf(const scene::Scene& scene, const LayeredDepthCube& store,
                                     const BakeOptions& options, const BakeProgress& progress, BakeStats& stats) {
  const rays::EmbreeScene embree(scene);
  const rays::LightSet lights(scene, "the direct light");
  DirectLightOptions settings;
  settings.points = options.directPoints;
  settings.samplesPerLight = options.directSamples;
  settings.seed = options.seed;
  DirectLightStats directStats;
  std::vector<glm::vec3> direct = directLightPerLayer(store, embree, lights, settings, directStats, progress);
  stats.directSeconds = directStats.seconds;
  stats.directRays = directStats.rays;
  stats.directLayersWithoutSurface = directStats.layersWithoutSurface;
  return direct;
}

// The store level's seeds and direct light, worked out beside the hemicubes. With the direct light by rays and the
// bounces on a level of their own, no hemicube reaches the store's level: its layers are the geometry's seeds, and
// its direct light needs nothing the hemicubes make. One task seeds the level's builder and runs the direct pass
// in a task arena of low priority, so that TBB gives its worker threads to the warp's insertion first and to this
// work whenever the insertion leaves them idle; the bake thread helps with what is left once its hemicubes are
// done (wait). The seeding, one thread's work, and the direct pass then fill what the two sides of the hemicube
// phase (the GL thread's rendering and conversion, the task's insertion) leave idle, where they ran before it and
// after it. The values are the same as those of the pass run after the bake: the layers are the same.
class StoreLevelBeside {
public:
  StoreLevelBeside(const scene::Scene& scene, const BakeOptions& options, LdcBuilder& builder)
      : m_arena(tbb::task_arena::automatic, 1, tbb::task_arena::priority::low) {
    m_arena.execute([&] {
      m_group.run([this, &scene, options, &builder] {
        const Stopwatch seedTime;
        seedLayersFromGeometry(scene, builder);
        m_stats.seedSeconds = seedTime.seconds();
        m_direct = directLightOf(scene, builder.finalize(), options, {}, m_stats);
      });
    });
  }
  ~StoreLevelBeside() noexcept {
    if (m_waited) return;
    try {  // on the way out of a failed bake: stop the pass, and never leave it running on the builder
      m_arena.execute([&] {
        m_group.cancel();
        m_group.wait();
      });
    } catch (...) {  // the bake's own error is the one reported
    }
  }
  StoreLevelBeside(const StoreLevelBeside&) = delete;
  StoreLevelBeside& operator=(const StoreLevelBeside&) = delete;

  // Waits for the seeds and the direct light, working on them meanwhile; rethrows the task's error. The builder is
  // seeded after it. Returns the direct light of the level's layers, in store order, and adds its figures to stats.
  std::vector<glm::vec3> wait(BakeStats& stats) {
    m_waited = true;
    const Stopwatch waitTime;
    m_arena.execute([&] { m_group.wait(); });
    stats.directBeside = true;
    stats.besideWaitSeconds = waitTime.seconds();
    stats.besideSeedSeconds = m_stats.seedSeconds;
    stats.directSeconds = m_stats.directSeconds;
    stats.directRays = m_stats.directRays;
    stats.directLayersWithoutSurface = m_stats.directLayersWithoutSurface;
    return std::move(m_direct);
  }

private:
  tbb::task_arena m_arena;
  tbb::task_group m_group;
  BakeStats m_stats;  // the task's seeding and direct-pass figures
  std::vector<glm::vec3> m_direct;
  bool m_waited = false;
};

// Whether a bake of `options` works out its store level beside the hemicubes (StoreLevelBeside): the whole bake on
// the CPU warp, from seeds, with the direct light by rays and the bounces on their own level, and no checkpoints
// (which read the store level while the hemicubes go on).
bool storeLevelBeside(const BakeOptions& options, WarpDevice warp, bool twoLevels, const BakeCheckpoints* checkpoints) {
  return twoLevels && options.direct == DirectLight::Rays && options.seedLayersFromGeometry && warp == WarpDevice::Cpu &&
         !options.isShare() && checkpoints == nullptr;
}

// bakeLightPaths; `besideAllowed`: the store level's direct light may be traced beside the hemicubes
// (LightPathBake::storeDirect), as bakeStore, which adds it, allows.
LightPathBake bakeLightPathsWith(const scene::Scene& scene, const BakeOptions& options, const BakeProgress& progress,
                                 const BakeCheckpoints* checkpoints, bool besideAllowed) {
  validateBakeOptions(options);
  if (checkpoints && options.isShare()) throw Error("checkpoints need the whole bake, not a share of its light paths");
  const WarpDevice warpDevice = resolveWarpDevice(options.warp);
  if (warpDevice == WarpDevice::Gpu && !options.seedLayersFromGeometry)
    throw Error("--warp gpu inserts into the layers the geometry seeds; it cannot bake without them");
  if (warpDevice == WarpDevice::Gpu && !options.isShare()) warnOfHardwareGpuWarp();
  const Stopwatch bakeTime;
  BakeStats stats;

  checkBakeMemory(scene, options);
  const MemoryPhase phase("baking the IBRR store");
  const bool twoLevels = indirectLevelResolution(options) != options.ldcResolution;
  const bool beside = besideAllowed && storeLevelBeside(options, warpDevice, twoLevels, checkpoints);
  const Stopwatch seedTime;
  LdcBuilder builder =
      beside ? LdcBuilder(storeParams(scene, options), options.splat) : seededBuilder(scene, options, options.ldcResolution);
  std::optional<StoreLevelBeside> storeLevel;  // after the builder: it seeds it
  if (beside) storeLevel.emplace(scene, options, builder);
  std::optional<LdcBuilder> coarse;
  if (twoLevels) coarse.emplace(seededBuilder(scene, options, indirectLevelResolution(options)));
  stats.seedSeconds = seedTime.seconds();
  auto countSeeds = [&] {
    stats.seedSamples = builder.stats().seedSamples;
    stats.seedLayers = builder.stats().layers;
  };
  if (!beside) countSeeds();
  stats.indirectLdcResolution = twoLevels ? indirectLevelResolution(options) : 0;

  // Light paths (CPU, Embree): all of them, then this share's, so that a share's VPLs are the whole bake's. With
  // the direct light from rays, the VPLs on the lights render no hemicube (their light is the direct pass's).
  const Stopwatch vplTime;
  rays::VplSet vpls = generateBakeVpls(scene, options);
  stats.vplsPerBounce = vpls.countPerBounce;
  const std::uint32_t firstBounce = options.direct == DirectLight::Rays ? 1 : 0;
  if (options.isShare() && warpDevice == WarpDevice::Cpu && options.seedLayersFromGeometry) {
    // Each level numbers its hemicubes from the bake's first: the earlier shares' come before this one's.
    const rays::VplSet earlier = pathShare(vpls, 0, options.firstPath, firstBounce);
    const std::size_t indirect = twoLevels ? pathShare(earlier, 0, options.firstPath, 1).vpls.size() : 0;
    builder.deferOpenedLayers(static_cast<std::uint32_t>(earlier.vpls.size() - indirect));
    if (coarse) coarse->deferOpenedLayers(static_cast<std::uint32_t>(indirect));
  }
  if (options.isShare() || firstBounce > 0) vpls = pathShare(vpls, options.firstPath, options.shareEnd(), firstBounce);
  const float geometryClamp = geometryClampFor(scene, options);
  stats.vplSeconds = vplTime.seconds();

  const gpu::SceneRenderer renderer(scene);
  const int maxResolution = renderedHemicubeResolution(vpls, options);
  gpu::HemicubeRenderer hemicubes(renderer, scene, maxResolution,
                                  hemicubeSlots(options, warpDevice, maxResolution, twoLevels ? 2 : 1));
  Levels levels;
  const bool software = gpu::currentRenderer().isSoftware();  // its time queries measure nothing
  levels.queue = std::make_unique<HemicubeQueue>(hemicubes, warpDevice == WarpDevice::Cpu || software);
  auto levelWarp = [&](LdcBuilder& level) {
    return makeWarp(warpDevice, *levels.queue, level, options, geometryClamp, stats, maxResolution);
  };
  levels.store = levelWarp(builder);
  if (coarse) levels.indirect = levelWarp(*coarse);
  double checkpointSeconds = 0.0;  // spent in callbacks, left out of the bake's times
  stats.pathsCompleted =
      warpAllVpls(scene, vpls, options, levels, progress, checkpoints, bakeTime, checkpointSeconds, stats);
  // The CPU warp (and any warp on a software GL) waits for each pass: the host's time is the rendering's. The GPU
  // warp on a GPU does not: the GPU's is.
  stats.gpuTimes = warpDevice == WarpDevice::Gpu && !software;
  stats.renderSeconds = stats.gpuTimes ? hemicubes.gpuPassSeconds() : hemicubes.renderSeconds();
  stats.trianglesSubmitted = hemicubes.trianglesSubmitted();
  stats.renderPasses = hemicubes.passes();
  std::optional<std::vector<glm::vec3>> storeDirect;
  if (storeLevel) {
    storeDirect = storeLevel->wait(stats);
    countSeeds();
  }
  addLevelStats(*levels.store, stats, nullptr);
  if (levels.indirect) addLevelStats(*levels.indirect, stats, &stats.indirectLevelWrites);
  LightPathBake result{levels.store->layerSums(), builder.deferredOpenings(), std::nullopt, {}, std::move(storeDirect),
                       stats};
  if (levels.indirect) {
    result.indirect = levels.indirect->layerSums();
    result.indirectDeferred = coarse->deferredOpenings();
  }
  result.stats.totalSeconds = bakeTime.seconds() - checkpointSeconds;
  return result;
}

}  // namespace

LightPathBake bakeLightPaths(const scene::Scene& scene, const BakeOptions& options, const BakeProgress& progress,
                             const BakeCheckpoints* checkpoints) {
  return bakeLightPathsWith(scene, options, progress, checkpoints, false);
}

BakeResult bakeStore(const scene::Scene& scene, const BakeOptions& options, const BakeProgress& progress,
                     const BakeCheckpoints* checkpoints) {
  const Stopwatch bakeTime;
  LightPathBake paths = bakeLightPathsWith(scene, options, progress, checkpoints, true);
  const double checkpointSeconds = bakeTime.seconds() - paths.stats.totalSeconds;
  BakeStats& stats = paths.stats;
  const Stopwatch levelTime;
  LightPathStores stores = lightPathStores(paths.sums, paths.indirect ? &*paths.indirect : nullptr);
  LayeredDepthCube store = std::move(stores.store);
  if (paths.indirect) stats.levelSeconds = levelTime.seconds();
  if (stats.pathsCompleted < options.paths) {
    if (stats.pathsCompleted == 0) throw Error("the time budget ended the bake before its first light path was done");
    store = scaleRadiosity(store, float(options.paths) / float(stats.pathsCompleted));
  }
  if (paths.storeDirect) {
    IBRR_CHECK(paths.storeDirect->size() == store.layers().size(), "the direct light traced beside the hemicubes "
               "has a value for every layer of the store");
    store = withAddedRadiosity(store, *paths.storeDirect);
  } else if (options.direct == DirectLight::Rays) {
    store = addDirectLight(scene, store, options, progress, stats);
  }
  if (compensatesClamp(scene, options))
    store = compensateBias(scene, store, stores.bounces(), options, progress, stats);
  BakeResult result{std::move(store), stats};
  result.stats.totalSeconds = bakeTime.seconds() - checkpointSeconds;
  return result;
}

LayeredDepthCube addDirectLight(const scene::Scene& scene, const LayeredDepthCube& store, const BakeOptions& options,
                                const BakeProgress& progress, BakeStats& stats) {
  return withAddedRadiosity(store, directLightOf(scene, store, options, progress, stats));
}

LayeredDepthCube compensateBias(const scene::Scene& scene, const LayeredDepthCube& store,
                                const LayeredDepthCube* bouncesLevel, const BakeOptions& options,
                                const BakeProgress& progress, BakeStats& stats,
                                const std::function<void(BiasCompensationOptions&)>& share) {
  const float geometryClamp = geometryClampFor(scene, options);
  const rays::EmbreeScene embree(scene);
  const rays::LightSet lights(scene, "bias compensation");
  const LayeredDepthCube& level = compensationLevel(store, bouncesLevel, options);
  const bool onBouncesLevel = &level != &store;
  BiasCompensationOptions settings;
  settings.raysPerLayer = onBouncesLevel ? std::min(options.biasRays * kBouncesLevelBiasPoints, kMaxBiasCompensationRays)
                                        : options.biasRays;
  settings.passes = options.biasPasses;
  settings.seed = options.seed;
  settings.directLightFromRays = options.direct == DirectLight::Rays;
  if (share) share(settings);
  BiasCompensationStats biasStats;
  LayeredDepthCube compensated = compensateClampBias(store, onBouncesLevel ? &level : nullptr, embree, lights,
                                                     geometryClamp, settings, biasStats, progress);
  stats.biasCompensated = true;
  stats.biasSeconds = biasStats.seconds;
  stats.biasRays = biasStats.rays;
  stats.biasLayersWithoutSurface = biasStats.layersWithoutSurface;
  stats.biasPointsPerLayer = settings.raysPerLayer;
  stats.biasLevelResolution = level.frame().resolution();
  return compensated;
}

const LayeredDepthCube& compensationLevel(const LayeredDepthCube& store, const LayeredDepthCube* bouncesLevel,
                                          const BakeOptions& options) {
  // With --direct vpl the VPLs on the lights, clamped too, are the store's.
  return options.direct == DirectLight::Rays && bouncesLevel ? *bouncesLevel : store;
}

void writeStoreFile(const LayeredDepthCube& store, const std::filesystem::path& path) {
  writeFileAtomically(path, [&](const std::filesystem::path& temporary) { saveStore(store, temporary); });
}

LayeredDepthCube readStoreFile(const std::filesystem::path& path, std::optional<std::uint64_t> expectedFingerprint) {
  requireRegularFile(path, "store file");
  return loadStore(path, expectedFingerprint);
}

}  // namespace ibrr::bake
