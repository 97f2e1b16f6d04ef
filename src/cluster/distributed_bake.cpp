#include "cluster/distributed_bake.hpp"

#include "ibrr/ldc_builder.hpp"
#include "util/error.hpp"
#include "util/stopwatch.hpp"

#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

namespace ibrr::cluster {
namespace {

// Appends and reads back plain arrays as bytes, for the exchanges between ranks (same machine type everywhere).
class ByteWriter {
public:
  template <typename T>
  void put(std::span<const T> values) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::uint64_t count = values.size();
    append(&count, sizeof count);
    append(values.data(), values.size_bytes());
  }
  std::vector<std::byte> bytes;

private:
  void append(const void* data, std::size_t size) {
    const auto* begin = static_cast<const std::byte*>(data);
    bytes.insert(bytes.end(), begin, begin + size);
  }
};

class ByteReader {
public:
  explicit ByteReader(std::span<const std::byte> bytes) : m_bytes(bytes) {}
  template <typename T>
  std::vector<T> get() {
    std::uint64_t count = 0;
    take(&count, sizeof count);
    if (count > (m_bytes.size() - m_at) / sizeof(T)) throw Error("a rank sent a truncated store");
    std::vector<T> values(count);
    take(values.data(), count * sizeof(T));
    return values;
  }

private:
  void take(void* out, std::size_t size) {
    if (size > m_bytes.size() - m_at) throw Error("a rank sent a truncated store");
    std::memcpy(out, m_bytes.data() + m_at, size);
    m_at += size;
  }
  std::span<const std::byte> m_bytes;
  std::size_t m_at = 0;
};

std::vector<std::byte> storeBytes(const LayeredDepthCube& store, const std::vector<glm::dvec3>* sums) {
  ByteWriter writer;
  const std::uint64_t vplCount = store.vplCount();
  writer.put(std::span<const std::uint64_t>(&vplCount, 1));
  writer.put(store.offsets());
  writer.put(store.layers());
  if (sums) writer.put(std::span<const glm::dvec3>(*sums));
  return std::move(writer.bytes);
}

// `params`: the receiving rank's own (every rank bakes the same scene with the same options).
LayeredDepthCube storeFromBytes(ByteReader& reader, const LdcParams& params) {
  const std::vector<std::uint64_t> vplCount = reader.get<std::uint64_t>();
  std::vector<std::uint32_t> offsets = reader.get<std::uint32_t>();
  std::vector<PackedLayer> layers = reader.get<PackedLayer>();
  if (vplCount.size() != 1) throw Error("a rank sent a malformed store");
  return LayeredDepthCube(params, vplCount[0], std::move(offsets), std::move(layers));
}

// `store` as rank 0 has it, on every rank (`params`: the receiving rank's own).
void broadcastStore(Cluster& cluster, LayeredDepthCube& store, const LdcParams& params) {
  std::vector<std::byte> bytes = cluster.isRoot() ? storeBytes(store, nullptr) : std::vector<std::byte>();
  cluster.broadcast(bytes, 0);
  ByteReader reader(bytes);
  if (!cluster.isRoot()) store = storeFromBytes(reader, params);
}

// A share's part of the store as it goes up the tree: its layer sums and its deferred layer records.
struct SharePart {
  LayerSums sums;
  std::vector<DeferredOpening> deferred;
};

// The ranks' parts added up a binary tree in a fixed order: at step s (1, 2, 4, ...) rank r with r mod 2s = 0
// adds rank r + s's part after its own (sums added, deferred records appended); rank r mod 2s = s sends its part
// to r − s and is done. Returns the whole bake's part on rank 0 (the others' results are partial).
SharePart reduceUpTree(Cluster& cluster, SharePart mine) {
  for (int step = 1; step < cluster.size(); step *= 2) {
    if (cluster.rank() % (2 * step) == step) {
      std::vector<std::byte> bytes = storeBytes(mine.sums.layers, &mine.sums.sums);
      ByteWriter deferred;
      deferred.put(std::span<const DeferredOpening>(mine.deferred));
      bytes.insert(bytes.end(), deferred.bytes.begin(), deferred.bytes.end());
      cluster.send(cluster.rank() - step, bytes);
      return mine;
    }
    if (cluster.rank() % (2 * step) == 0 && cluster.rank() + step < cluster.size()) {
      const std::vector<std::byte> bytes = cluster.receive(cluster.rank() + step);
      ByteReader reader(bytes);
      LayeredDepthCube layers = storeFromBytes(reader, mine.sums.layers.params());
      const LayerSums theirs(std::move(layers), reader.get<glm::dvec3>());
      const std::vector<DeferredOpening> deferred = reader.get<DeferredOpening>();
      mine.sums = addLayerSums(mine.sums, theirs);
      mine.deferred.insert(mine.deferred.end(), deferred.begin(), deferred.end());
    }
  }
  return mine;
}

// The pixels [first, end) whose layers rank `rank` compensates: equal shares of the layers, cut at pixels.
std::pair<std::uint32_t, std::uint32_t> pixelShareOf(const LayeredDepthCube& store, int rank, int ranks) {
  const std::span<const std::uint32_t> offsets = store.offsets();
  const std::uint64_t layers = offsets.back();
  auto cut = [&](int r) -> std::uint32_t {
    if (r == 0) return 0;
    if (r == ranks) return std::uint32_t(offsets.size() - 1);
    const std::uint64_t target = layers * std::uint64_t(r) / std::uint64_t(ranks);
    return std::uint32_t(std::lower_bound(offsets.begin(), offsets.end() - 1, target) - offsets.begin());
  };
  return {cut(rank), cut(rank + 1)};
}

// After each compensation pass: every rank's layers of H_miss gathered into every rank.
void shareMissingLight(Cluster& cluster, const LayeredDepthCube& store, std::vector<glm::vec3>& missing) {
  cluster.agree();  // no rank enters the exchange while another has failed
  std::vector<std::uint64_t> begins(std::size_t(cluster.size()) + 1);
  for (int r = 0; r < cluster.size(); ++r) begins[std::size_t(r)] = store.offsets()[pixelShareOf(store, r, cluster.size()).first];
  begins.back() = store.layers().size();
  const std::size_t first = begins[std::size_t(cluster.rank())], end = begins[std::size_t(cluster.rank()) + 1];
  const auto mine = std::as_bytes(std::span<const glm::vec3>(missing.data() + first, end - first));
  const std::vector<std::byte> all = cluster.allGather(mine);
  if (all.size() != missing.size() * sizeof(glm::vec3)) throw Error("the ranks' compensation shares do not add up");
  std::memcpy(missing.data(), all.data(), all.size());
}

// Every rank's light-path statistics added (counts) or the slowest rank's (times); the compensation's are
// added after it.
bake::BakeStats addedStats(Cluster& cluster, const bake::BakeStats& mine) {
  bake::BakeStats all = mine;
  const std::vector<double> counts = cluster.allSum(std::vector<double>{
      double(mine.hemicubes), double(mine.hemicubePixels), double(mine.samplesInserted),
      double(mine.trianglesSubmitted), double(mine.pixelWrites), double(mine.indirectLevelWrites)});
  all.hemicubes = std::uint64_t(counts[0]);
  all.hemicubePixels = std::uint64_t(counts[1]);
  all.samplesInserted = std::uint64_t(counts[2]);
  all.trianglesSubmitted = std::uint64_t(counts[3]);
  all.pixelWrites = std::uint64_t(counts[4]);
  all.indirectLevelWrites = std::uint64_t(counts[5]);
  const std::vector<double> times = cluster.allMax(std::vector<double>{
      mine.vplSeconds, mine.renderSeconds, mine.readbackSeconds, mine.warpSeconds, mine.insertSeconds,
      mine.waitSeconds, mine.seedSeconds});
  all.vplSeconds = times[0];
  all.renderSeconds = times[1];
  all.readbackSeconds = times[2];
  all.warpSeconds = times[3];
  all.insertSeconds = times[4];
  all.waitSeconds = times[5];
  all.seedSeconds = times[6];
  const std::vector<double> bounces = cluster.allMax(std::vector<double>{double(mine.vplsPerBounce.size())});
  std::vector<double> perBounce(static_cast<std::size_t>(bounces[0]), 0.0);
  for (std::size_t k = 0; k < mine.vplsPerBounce.size(); ++k) perBounce[k] = double(mine.vplsPerBounce[k]);
  perBounce = cluster.allSum(perBounce);
  all.vplsPerBounce.assign(perBounce.size(), 0);
  for (std::size_t k = 0; k < perBounce.size(); ++k) all.vplsPerBounce[k] = std::size_t(perBounce[k]);
  return all;
}

}  // namespace

std::pair<std::uint32_t, std::uint32_t> pathShareOf(std::uint32_t paths, int rank, int ranks) {
  auto cut = [&](int r) { return std::uint32_t(std::uint64_t(paths) * std::uint64_t(r) / std::uint64_t(ranks)); };
  return {cut(rank), cut(rank + 1)};
}

DistributedBakeResult bakeStoreAcrossRanks(Cluster& cluster, const scene::Scene& scene,
                                           const bake::BakeOptions& options, const bake::BakeProgress& progress) {
  if (options.timeBudgetSeconds > 0.0) throw Error("--budget stops a bake in one process; start it without mpirun");
  if (!options.seedLayersFromGeometry)
    throw Error("a distributed bake adds the ranks' layers to the geometry seeds; bake without seeds in one process");
  if (options.paths < std::uint32_t(cluster.size()))
    throw Error("--paths " + std::to_string(options.paths) + " gives some of the " + std::to_string(cluster.size()) +
                " ranks no light path; use at least one path per rank");
  const Stopwatch wall;
  DistributedBakeResult out;
  // Every rank reports to the cluster; rank 0 shows the sum. A stop announced by another rank ends the work here.
  // The phases travel as their index: 0 the hemicubes, 1 the compensation's points.
  auto summed = [](const ProgressCount& sum) {
    const bool hemicubes = sum.phase == 0;
    return ProgressUpdate{hemicubes ? bake::kHemicubePhase : bake::kCompensationPhase, sum.done, sum.total,
                          hemicubes ? "hemicubes" : "points", {}};
  };
  const bake::BakeProgress everyRank = [&](const ProgressUpdate& update) {
    cluster.checkStop();
    const int phase = std::string_view(update.phase) == bake::kHemicubePhase ? 0 : 1;
    const ProgressCount sum = cluster.reportProgress(ProgressCount{phase, update.done, update.total});
    if (cluster.isRoot() && progress && sum.total > 0) progress(summed(sum));
  };
  cluster.onProgress([&](const ProgressCount& sum) {
    if (progress) progress(summed(sum));
  });
  struct ForgetProgress {  // the callback refers to this frame: drop it however the bake ends
    Cluster& cluster;
    ~ForgetProgress() { cluster.onProgress({}); }
  } forgetProgress{cluster};

  bake::BakeOptions share = options;
  std::tie(share.firstPath, share.endPath) = pathShareOf(options.paths, cluster.rank(), cluster.size());
  bake::LightPathBake paths = bake::bakeLightPaths(scene, share, everyRank);
  cluster.agree();
  const std::vector<double> slowest = cluster.allMax(std::vector<double>{
      paths.stats.totalSeconds, double(paths.sums.layers.layers().size()), double(paths.deferred.size())});
  out.times.lightPathSeconds = slowest[0];
  // A message up the tree: a share's layer sums (offsets; 24-byte layers and three doubles per layer) and its
  // deferred records (grown by the shares below it; the largest rank's size is given).
  out.times.storeBytes = std::uint64_t(4 * paths.sums.layers.offsets().size()) +
                         std::uint64_t((sizeof(PackedLayer) + sizeof(glm::dvec3)) * slowest[1]) +
                         std::uint64_t(sizeof(DeferredOpening) * slowest[2]);

  const Stopwatch reduceTime;
  const LdcParams params = paths.sums.layers.params();
  const std::optional<LdcParams> levelParams =
      paths.indirect ? std::optional<LdcParams>(paths.indirect->layers.params()) : std::nullopt;
  SharePart whole = reduceUpTree(cluster, SharePart{std::move(paths.sums), std::move(paths.deferred)});
  std::optional<SharePart> indirect;  // the bounces' level (--indirect-ldc), added up the same tree
  if (paths.indirect)
    indirect = reduceUpTree(cluster, SharePart{std::move(*paths.indirect), std::move(paths.indirectDeferred)});
  LayeredDepthCube store;
  std::optional<LayeredDepthCube> bounces;  // the bounces' level, where the compensation estimates
  if (cluster.isRoot()) {
    const LayerSums level = openDeferredLayers(whole.sums, std::move(whole.deferred));
    std::optional<LayerSums> coarse;
    if (indirect) coarse = openDeferredLayers(indirect->sums, std::move(indirect->deferred));
    bake::LightPathStores stores = bake::lightPathStores(level, coarse ? &*coarse : nullptr);
    store = std::move(stores.store);
    bounces = std::move(stores.bouncesLevel);
  }
  out.times.reduceSeconds = reduceTime.seconds();
  bake::BakeStats stats = addedStats(cluster, paths.stats);
  stats.openedLayers = cluster.isRoot() ? store.layers().size() - stats.seedLayers : 0;
  // The direct light (--direct rays) on rank 0, over the whole store: each layer draws from its own stream, so the
  // store is the one-process bake's byte for byte.
  if (options.direct == bake::DirectLight::Rays && cluster.isRoot())
    store = bake::addDirectLight(scene, store, options, progress, stats);

  if (bake::compensatesClamp(scene, options)) {
    cluster.agree();
    const Stopwatch broadcastTime;
    broadcastStore(cluster, store, params);
    if (levelParams) {  // the level's layers as rank 0 opened them, for every rank
      if (!bounces) bounces.emplace();
      broadcastStore(cluster, *bounces, *levelParams);
    }
    out.times.broadcastSeconds = broadcastTime.seconds();
    const Stopwatch compensationTime;
    const LayeredDepthCube& estimated = bake::compensationLevel(store, bounces ? &*bounces : nullptr, options);
    store = bake::compensateBias(scene, store, bounces ? &*bounces : nullptr, options, everyRank, stats,
                                 [&](bake::BiasCompensationOptions& part) {
                                   std::tie(part.firstPixel, part.endPixel) =
                                       pixelShareOf(estimated, cluster.rank(), cluster.size());
                                   part.shareMissing = [&cluster, &estimated](std::vector<glm::vec3>& missing) {
                                     shareMissingLight(cluster, estimated, missing);
                                   };
                                 });
    cluster.agree();
    out.times.compensationSeconds = compensationTime.seconds();
    const std::vector<double> bias = cluster.allSum(
        std::vector<double>{double(stats.biasRays), double(stats.biasLayersWithoutSurface)});
    stats.biasRays = std::uint64_t(bias[0]);
    stats.biasLayersWithoutSurface = std::uint64_t(bias[1]);
    stats.biasSeconds = out.times.compensationSeconds;
  }
  stats.pathsCompleted = options.paths;
  stats.totalSeconds = wall.seconds();
  if (cluster.isRoot()) out.result = bake::BakeResult{std::move(store), stats};
  return out;
}

}  // namespace ibrr::cluster
