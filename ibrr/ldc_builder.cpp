#include "ibrr/ldc_builder.hpp"

#include "ibrr/error.hpp"
#include "ibrr/octahedral.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

namespace ibrr {

namespace {

// Samples per phase-1 chunk. Chunks never straddle two hemicubes and start at fixed offsets within one, so the
// chunking depends neither on the thread count nor on how hemicubes are batched into insert() calls.
constexpr std::size_t kChunkSamples = 8192;
// Footprints are floored at this many LDI pixel areas, so that samples handed in with a zero footprint still
// count (with a negligible weight next to any real footprint).
constexpr float kMinSampleAreaPixels = 1e-9f;
// Entries of the per-chunk cache that folds a sample's pixel contributions into an earlier record of the same
// pixel (direct-mapped by pixel index; a power of two).
constexpr std::size_t kFoldCacheSize = 256;
// A splat whose pixel bounding box holds more pixels than this is not cut into pixel records in phase 1:
// phase 2 rasterises it into each tile it touches (large splats overlap little, so folding gains little).
constexpr int kPixelRecordMaxBox = 12;
constexpr std::uint32_t kNoHemicube = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kNoRecord = std::numeric_limits<std::uint32_t>::max();

// A layer while building: the plane, the running total, and the current hemicube's area-weighted sums.
struct BuildLayer {
  glm::vec3 n{0.0f};           // plane normal, unit (quantised to octahedral only when finalised)
  float d = 0.0f;              // plane offset p·n, world units
  glm::dvec3 total{0.0};       // Σ over finished hemicubes of their area-weighted mean, in double precision so
                               // that shares of the hemicubes add to the same sums (ldc.hpp, LayerSums)
  std::uint32_t count = 0;     // finished hemicubes
  glm::vec3 pendingSum{0.0f};  // Σ a·E of the current hemicube
  float pendingWeight = 0.0f;  // Σ a of the current hemicube (m²)
  std::int32_t next = -1;      // next layer of the same pixel, -1 ends the list
  std::uint32_t pendingHemicube = kNoHemicube;
  bool opened = false;  // a hemicube's sample opened it after the geometry seeds (a surface they lack)

  // Adds a record of hemicube `stamp` to the pending sums, finishing the previous hemicube's first. Returns
  // true when the layer held no pending hemicube (the caller lists it for the final flush).
  bool add(std::uint32_t stamp, float area, const glm::vec3& areaValue) {
    bool fresh = false;
    if (pendingHemicube != stamp) {
      if (pendingHemicube == kNoHemicube)
        fresh = true;
      else
        flush();  // records come in hemicube order: the previous one is complete
      pendingHemicube = stamp;
    }
    pendingSum += areaValue;
    pendingWeight += area;
    return fresh;
  }

  void flush() {
    if (pendingWeight > 0.0f) {
      total += glm::dvec3(pendingSum / pendingWeight);
      ++count;
    }
    pendingSum = glm::vec3(0.0f);
    pendingWeight = 0.0f;
    pendingHemicube = kNoHemicube;
  }
};

// The distance of p from the layer's plane, |p·n_l − d_l| (world units), or +∞ when the normals differ by more
// than ε_n (n·n_l ≤ minCos): the matching test of paper §3.1, the nearest plane within ε_d winning.
float planeDistance(const BuildLayer& layer, const glm::vec3& p, const glm::vec3& n, float minCos) {
  if (!(glm::dot(n, layer.n) > minCos)) return std::numeric_limits<float>::infinity();
  return std::fabs(glm::dot(p, layer.n) - layer.d);
}

// A new layer on the plane of a record at p with normal n; `opened` when a hemicube opens it after the seeds.
BuildLayer layerOnPlaneOf(const glm::vec3& p, const glm::vec3& n, bool opened) {
  BuildLayer layer;
  layer.n = n;
  layer.d = glm::dot(p, n);
  layer.opened = opened;
  return layer;
}

// The sample that opened a record: its plane is what phase 2 matches against the pixel's layers.
struct RecordPlane {
  glm::vec3 position{0.0f};
  float d = 0.0f;  // position·normal
  glm::vec3 normal{0.0f};
  std::uint32_t hemicube = 0;  // within the insert() call
};

// One pixel's share of one or more samples of one hemicube: Σ a·E and Σ a (see ldc_builder.hpp).
struct PixelRecord {
  std::uint32_t plane = kNoRecord;  // index into the chunk's planes (kNoRecord when `layer` is known)
  std::int32_t layer = -1;          // the seeded layer of the tile it matched in phase 1; -1: matched in phase 2
  std::uint32_t tile = 0;
  std::uint32_t localPixel = 0;     // within the tile
  float area = 0.0f;                // Σ a, m²
  glm::vec3 areaValue{0.0f};        // Σ a·E
  std::uint32_t splat = kNoRecord;  // a LargeSplat's share of one tile instead of one pixel's sums
};

// A record as phase 2 reads it: sorted by tile, with its plane inline so a tile's records are read in one sweep.
struct TileRecord {
  glm::vec3 position{0.0f};  // of the sample that opened the record
  glm::vec3 normal{0.0f};
  glm::vec3 areaValue{0.0f};  // Σ a·E
  float area = 0.0f;          // Σ a, m²
  std::uint32_t hemicube = 0;
  std::uint32_t localPixel = 0;
  std::uint32_t splat = 0;  // kNoRecord for a pixel record, else the chunk's LargeSplat to rasterise here
  std::int32_t layer = -1;  // the tile's layer matched in phase 1, or -1: phase 2 matches by the plane above
};

// A splat too large for pixel records: phase 2 rasterises it into every tile it touches, a = w·A/W per pixel.
struct LargeSplat {
  SplatRaster raster;
  glm::vec3 value{0.0f};
  float areaScale = 0.0f;  // A/W
};

struct ChunkRange {
  std::uint32_t hemicube = 0;
  std::uint32_t begin = 0, end = 0;  // sample range within the hemicube
};

// Aligned to its own cache lines: chunks side by side in one vector are written by different threads.
struct alignas(128) ChunkOutput {
  std::vector<RecordPlane> planes;
  std::vector<LargeSplat> largeSplats;
  std::vector<PixelRecord> records;      // in creation order
  std::vector<TileRecord> sorted;        // the same, stably sorted by tile
  std::vector<std::uint32_t> tileStart;  // records of tile t: sorted[tileStart[t] .. tileStart[t+1])
  std::vector<std::uint32_t> cursor;
  std::uint64_t dropped = 0;
  std::uint64_t splats = 0;
  std::uint32_t hemicube = 0;  // within the insert() call: a chunk never straddles two
};

// True when a box splat of the sample certainly covers its own pixel only: its half-extent along either image
// axis is at most |e1| + |e2| ≤ kSplatCoverage·(s/2 + l/2)/pixel (splat.hpp), and a neighbouring pixel centre
// lies at least 1 − |frac − ½| from the centre. The margin keeps the test conservative against float rounding
// and the rasteriser's edge slack, so the fast path gives exactly what rasterising the splat would.
inline bool boxCoversOwnPixelOnly(const LdcFrame& frame, const glm::vec3& p, const glm::vec3& n,
                                  const glm::vec3& hemicubeCentre, float area, const glm::vec2& centre) {
  if (!(area > 0.0f)) return false;  // the general path handles degenerate footprints
  const glm::vec3 w = p - hemicubeCentre;
  const float dist2 = glm::dot(w, w);
  if (!(dist2 > 0.0f)) return false;
  const float cosTheta = std::max(std::fabs(glm::dot(w, n)) / std::sqrt(dist2), kMinFootprintCos);
  const float halfShort = 0.5f * std::sqrt(area * cosTheta);
  const float extent = kSplatCoverage * frame.invPixelSize() * (halfShort + halfShort / cosTheta);
  const float fx = centre.x - static_cast<float>(static_cast<int>(centre.x));  // centre ≥ 0: truncation = floor
  const float fy = centre.y - static_cast<float>(static_cast<int>(centre.y));
  const float room = 0.5f - std::max(std::fabs(fx - 0.5f), std::fabs(fy - 0.5f));  // to the nearest pixel edge
  return extent * 1.01f + 1e-3f < room + 0.5f;
}

bool finite3(const glm::vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

}  // namespace

struct LdcBuilder::Scratch {
  std::vector<ChunkRange> ranges;
  std::vector<ChunkOutput> chunks;
};

struct LdcBuilder::Tile {
  std::vector<std::int32_t> head;  // first layer of each pixel, -1 when empty
  std::vector<BuildLayer> layers;
  std::vector<std::int32_t> pending;      // layers holding an unfinished hemicube sum
  std::vector<DeferredOpening> deferred;  // deferOpenedLayers: the records kept aside, in this tile's order
};

LdcBuilder::LdcBuilder(const LdcParams& params, SplatKernel kernel, int tileSize)
    : m_params(resolveParams(params)), m_frame(m_params), m_kernel(kernel), m_scratch(std::make_unique<Scratch>()) {
  const int res = m_frame.resolution();
  if (tileSize < 0 || tileSize > kMaxResolution)
    throw Error("LDC builder tile size " + std::to_string(tileSize) + ": must be in [1, " +
                std::to_string(kMaxResolution) + "], or 0 for automatic");
  // A large splat makes one record per tile it touches, so larger tiles mean fewer records (Cornell, R = 256,
  // 2 cores: tiles of 32 pixels warp 11% faster than tiles of 16). Automatic: R/8 pixels (192 tiles), at least
  // 16. That is enough pieces for 16 cores: with every tile of 21 Cornell batches timed on one core, handing
  // the tiles in order to the first free of 16 cores takes 0.478 s of phase 2 against 0.471 s for a perfect
  // split. The store is the same for any tile size, since every pixel still takes its records in sample
  // order (tested).
  m_tileSize = tileSize > 0 ? std::min(tileSize, res) : std::max(16, res / 8);
  m_tilesPerSide = (res + m_tileSize - 1) / m_tileSize;
  const int tileCount = 3 * m_tilesPerSide * m_tilesPerSide;
  m_tiles.reserve(static_cast<std::size_t>(tileCount));
  for (int t = 0; t < tileCount; ++t) {
    auto tile = std::make_unique<Tile>();
    tile->head.assign(static_cast<std::size_t>(m_tileSize) * static_cast<std::size_t>(m_tileSize), -1);
    m_tiles.push_back(std::move(tile));
  }
}

LdcBuilder::~LdcBuilder() = default;
LdcBuilder::LdcBuilder(LdcBuilder&&) noexcept = default;
LdcBuilder& LdcBuilder::operator=(LdcBuilder&&) noexcept = default;

void LdcBuilder::insert(const HemicubeSampleView& hemicube) {
  insert(std::span<const HemicubeSampleView>(&hemicube, 1));
}

void LdcBuilder::insert(std::span<const HemicubeSampleView> hemicubes) { insertSamples(hemicubes, false); }

void LdcBuilder::seedLayers(const HemicubeSampleView& seeds) {
  insertSamples(std::span<const HemicubeSampleView>(&seeds, 1), true);
}

namespace {

// The per-chunk cache that folds a sample's pixel shares into an earlier record of the same pixel and layer.
struct FoldCache {
  std::uint32_t pixel[kFoldCacheSize];
  std::uint32_t record[kFoldCacheSize];
  void clear() { std::fill(std::begin(record), std::end(record), kNoRecord); }
};

// One insert() call: its samples, the store's frame and parameters, and its two phases.
struct InsertionPass {
  const LdcFrame& frame;
  std::span<const std::unique_ptr<LdcBuilder::Tile>> tiles;  // read-only in phase 1
  std::span<const HemicubeSampleView> hemicubes;
  std::span<const ChunkRange> ranges;
  int res = 0, tileSize = 0, tilesPerSide = 0;
  std::size_t tileCount = 0;
  float epsDistance = 0.0f, minCos = 0.0f, minArea = 0.0f;
  SplatKernel kernel = SplatKernel::Box;
  bool seeded = false;              // the geometry seeded the layers before this call
  bool seedOnly = false;            // this call seeds them
  bool deferring = false;           // LdcBuilder::deferOpenedLayers
  std::uint64_t firstHemicube = 0;  // the bake's index of this call's first hemicube

  // Phase 1 for chunk c: its samples' records and large splats, sorted by tile.
  void chunkRecords(std::size_t c, ChunkOutput& out, FoldCache& fold) const {
    const ChunkRange range = ranges[c];
    const HemicubeSampleView& hc = hemicubes[range.hemicube];
    out.planes.clear();
    out.largeSplats.clear();
    out.records.clear();
    out.dropped = 0;
    out.splats = 0;
    out.hemicube = range.hemicube;
    fold.clear();
    for (std::uint32_t k = range.begin; k < range.end; ++k) addSample(hc, range.hemicube, k, out, fold);
    sortByTile(out);
  }

  // Warps sample k and gives its splat's pixels their shares (or one record per tile for a large splat).
  void addSample(const HemicubeSampleView& hc, std::uint32_t hemicube, std::uint32_t k, ChunkOutput& out,
                 FoldCache& fold) const {
    const glm::vec3 p = hc.positions[k];
    const glm::vec3 nIn = hc.normals[k];
    const glm::vec3 value = hc.values[k];
    const float area = hc.footprints[k];
    const float len2 = glm::dot(nIn, nIn);
    if (!finite3(p) || !finite3(value) || !std::isfinite(area) || !(len2 > 1e-20f) || !std::isfinite(len2)) {
      ++out.dropped;
      return;
    }
    const glm::vec3 n = sampleUnitNormal(nIn);
    const int ldi = dominantAxis(n);
    const glm::vec2 centre = frame.toPixel(ldi, p);
    if (!(centre.x >= 0.0f && centre.y >= 0.0f && centre.x < static_cast<float>(res) &&
          centre.y < static_cast<float>(res))) {
      ++out.dropped;
      return;
    }
    const RecordPlane plane{p, glm::dot(p, n), n, hemicube};
    glm::vec3 splatPixels[kPixelRecordMaxBox];  // (i, j, kernel weight) of a small splat's pixels
    std::size_t pixelCount = 0;
    float weightSum = 0.0f;
    const glm::vec3 reach = hc.edgeReaches.empty() ? glm::vec3(0.0f) : hc.edgeReaches[k];
    if (kernel == SplatKernel::Box && reach == glm::vec3(0.0f) &&
        boxCoversOwnPixelOnly(frame, p, n, hc.centre, area, centre)) {
      // Fast path, same result as the general one: a box splat that reaches no neighbouring pixel centre.
      const float resLast = static_cast<float>(res - 1);
      splatPixels[0] = glm::vec3(std::min(static_cast<float>(static_cast<int>(centre.x)), resLast),
                                 std::min(static_cast<float>(static_cast<int>(centre.y)), resLast), 1.0f);
      pixelCount = 1;
      weightSum = 1.0f;
    } else {
      const SplatFootprint fp = splatFootprint(frame, ldi, p, n, hc.centre, std::max(area, 0.0f), reach);
      const SplatRaster raster = prepareSplat(fp, kernel, res);
      if ((raster.i1 - raster.i0 + 1) * (raster.j1 - raster.j0 + 1) > kPixelRecordMaxBox) {
        addLargeSplat(raster, ldi, plane, value, area, out);
        return;
      }
      rasterSplat(raster, kernel, 0, res - 1, 0, res - 1, [&](int i, int j, float w) {
        splatPixels[pixelCount++] = glm::vec3(static_cast<float>(i), static_cast<float>(j), w);
        weightSum += w;
      });
    }
    out.splats += pixelCount;
    const float areaScale = std::max(area, minArea) / weightSum;  // A/W
    std::uint32_t planeIndex = kNoRecord;                         // this sample's plane, added when it opens a record
    for (std::size_t q = 0; q < pixelCount; ++q) {
      const int i = static_cast<int>(splatPixels[q].x);
      const int j = static_cast<int>(splatPixels[q].y);
      const float a = splatPixels[q].z * areaScale;
      const bool ownPixel = i == static_cast<int>(centre.x) && j == static_cast<int>(centre.y);
      addPixelShare(ldi, i, j, ownPixel, a, a * value, plane, planeIndex, out, fold);
    }
  }

  // The nearest layer of the tile's pixel that a sample at p with normal n lies on (paper §3.1: |p·n_l − d_l| < ε_d
  // and n·n_l > 1 − ε_n), among the seeded layers or among those hemicubes opened; -1 when none. Before seeding,
  // and without seeds, every layer counts as seeded. The seeded layers do not change while samples are inserted,
  // so phase 1 may read them from every thread.
  std::int32_t nearestLayer(const LdcBuilder::Tile& tile, std::uint32_t localPixel, const glm::vec3& p,
                            const glm::vec3& n, bool opened) const {
    std::int32_t best = -1;
    float bestDistance = epsDistance;
    for (std::int32_t idx = tile.head[localPixel]; idx >= 0; idx = tile.layers[std::size_t(idx)].next) {
      const BuildLayer& layer = tile.layers[static_cast<std::size_t>(idx)];
      if (layer.opened != opened) continue;
      const float dist = planeDistance(layer, p, n, minCos);
      if (dist < bestDistance) {
        best = idx;
        bestDistance = dist;
      }
    }
    return best;
  }

  // Share (a, a·E) of pixel (i, j). Every share is matched by its own sample's plane (the one rule of the CPU and
  // GPU warps, ldc_builder.hpp). After seeding it is matched here, against the seeded layers: a matched share
  // folds into the chunk's earlier record of the same pixel and layer (near a VPL thousands of samples fall in
  // one pixel and become one record), spill that matches none is dropped, and a share of the sample's own pixel
  // that matches none becomes a record of its own, for phase 2 to open or join a layer with. Without seeds
  // every share is such a record. Geometry seeds fold into a record whose plane they lie on: they only make
  // sure a layer exists.
  void addPixelShare(int ldi, int i, int j, bool ownPixel, float a, const glm::vec3& areaValue,
                     const RecordPlane& plane, std::uint32_t& planeIndex, ChunkOutput& out, FoldCache& fold) const {
    const int ti = i / tileSize, tj = j / tileSize;
    const auto tile = static_cast<std::uint32_t>((ldi * tilesPerSide + tj) * tilesPerSide + ti);
    const auto localPixel = static_cast<std::uint32_t>((j - tj * tileSize) * tileSize + (i - ti * tileSize));
    std::int32_t layer = -1;
    bool foldable = seedOnly;
    if (seeded && !seedOnly) {
      layer = nearestLayer(*tiles[tile], localPixel, plane.position, plane.normal, false);
      if (layer < 0 && !ownPixel) return;  // spill beside the layers
      foldable = layer >= 0;
    }
    const std::uint32_t pixel = frame.globalPixel(ldi, i, j);
    const std::size_t slot = (pixel * 0x9E3779B1u >> 24) & (kFoldCacheSize - 1);
    if (foldable) {
      const std::uint32_t prev = fold.record[slot];
      if (prev != kNoRecord && fold.pixel[slot] == pixel) {
        PixelRecord& rec = out.records[prev];
        if (layer >= 0 ? rec.layer == layer : rec.layer < 0 && onPlaneOf(plane, out.planes[rec.plane])) {
          rec.area += a;
          rec.areaValue += areaValue;
          return;
        }
      }
    }
    PixelRecord rec;
    rec.layer = layer;
    if (layer < 0) {
      if (planeIndex == kNoRecord) {
        planeIndex = static_cast<std::uint32_t>(out.planes.size());
        out.planes.push_back(plane);
      }
      rec.plane = planeIndex;
    }
    rec.tile = tile;
    rec.localPixel = localPixel;
    rec.area = a;
    rec.areaValue = areaValue;
    if (foldable) {
      fold.pixel[slot] = pixel;
      fold.record[slot] = static_cast<std::uint32_t>(out.records.size());
    }
    out.records.push_back(rec);
  }

  // The matching test of phase 2 (planeDistance) of a sample against a record's plane.
  bool onPlaneOf(const RecordPlane& sample, const RecordPlane& record) const {
    return std::fabs(glm::dot(sample.position, record.normal) - record.d) < epsDistance &&
           glm::dot(sample.normal, record.normal) > minCos;
  }

  // A large splat: one record per tile it touches, rasterised there in phase 2.
  void addLargeSplat(const SplatRaster& raster, int ldi, const RecordPlane& plane, const glm::vec3& value, float area,
                     ChunkOutput& out) const {
    std::size_t pixelCount = 0;
    float weightSum = 0.0f;
    if (kernel == SplatKernel::Box) {  // every weight is 1: W is the pixel count, a few tests per row
      rasterBoxRuns(raster, 0, res - 1, 0, res - 1,
                    [&](int, int iFirst, int iLast) { pixelCount += std::size_t(iLast - iFirst + 1); });
      weightSum = static_cast<float>(pixelCount);
    } else {
      rasterSplat(raster, kernel, 0, res - 1, 0, res - 1, [&](int, int, float w) {
        ++pixelCount;
        weightSum += w;
      });
    }
    out.splats += pixelCount;
    const auto splat = static_cast<std::uint32_t>(out.largeSplats.size());
    out.largeSplats.push_back(LargeSplat{raster, value, std::max(area, minArea) / weightSum});
    const auto planeIndex = static_cast<std::uint32_t>(out.planes.size());
    out.planes.push_back(plane);
    for (int tj = raster.j0 / tileSize; tj <= raster.j1 / tileSize; ++tj)
      for (int ti = raster.i0 / tileSize; ti <= raster.i1 / tileSize; ++ti) {
        PixelRecord rec;
        rec.plane = planeIndex;
        rec.tile = static_cast<std::uint32_t>((ldi * tilesPerSide + tj) * tilesPerSide + ti);
        rec.splat = splat;
        out.records.push_back(rec);
      }
  }

  // Stable counting sort of the chunk's records by tile, each with its plane copied in.
  void sortByTile(ChunkOutput& out) const {
    out.tileStart.assign(tileCount + 1, 0);
    for (const PixelRecord& rec : out.records) ++out.tileStart[rec.tile + 1];
    for (std::size_t t = 0; t < tileCount; ++t) out.tileStart[t + 1] += out.tileStart[t];
    if (out.sorted.size() < out.records.size()) out.sorted.resize(out.records.size());  // only grows
    out.cursor.assign(out.tileStart.begin(), out.tileStart.end() - 1);
    for (const PixelRecord& rec : out.records) {
      const RecordPlane plane = rec.plane == kNoRecord ? RecordPlane{} : out.planes[rec.plane];
      out.sorted[out.cursor[rec.tile]++] = TileRecord{plane.position, plane.normal,   rec.areaValue, rec.area,
                                                      out.hemicube,   rec.localPixel, rec.splat,     rec.layer};
    }
  }

  // Phase 2 for tile t: its records chunk by chunk, i.e. in sample order; the pending hemicube sums flushed.
  void accumulateTile(std::size_t t, LdcBuilder::Tile& tile, std::span<const ChunkOutput> chunks) const {
    const TilePlace place = tilePlace(t);
    const int iEnd = std::min(res, place.iBase + tileSize) - 1;
    const int jEnd = std::min(res, place.jBase + tileSize) - 1;
    for (std::size_t c = 0; c < ranges.size(); ++c) {
      const ChunkOutput& chunk = chunks[c];
      for (std::uint32_t k = chunk.tileStart[t]; k < chunk.tileStart[t + 1]; ++k) {
        const TileRecord& rec = chunk.sorted[k];
        const RecordOrder order{ranges[c].begin, k};
        if (rec.layer >= 0) {
          addToLayer(tile, rec.layer, rec.hemicube, rec.area, rec.areaValue);
          continue;
        }
        if (rec.splat == kNoRecord) {
          accumulate(tile, place, rec.localPixel, rec, order, rec.area, rec.areaValue);
          continue;
        }
        const LargeSplat& splat = chunk.largeSplats[rec.splat];
        rasterSplat(splat.raster, kernel, place.iBase, iEnd, place.jBase, jEnd, [&](int i, int j, float w) {
          const float a = w * splat.areaScale;
          const auto localPixel = static_cast<std::uint32_t>((j - place.jBase) * tileSize + (i - place.iBase));
          accumulate(tile, place, localPixel, rec, order, a, a * splat.value);
        });
      }
    }
    for (std::int32_t idx : tile.pending) tile.layers[static_cast<std::size_t>(idx)].flush();
    tile.pending.clear();
  }

  struct TilePlace {
    int ldi = 0, iBase = 0, jBase = 0;  // the tile's LDI and its first pixel there
  };
  TilePlace tilePlace(std::size_t t) const {
    const int inLdi = static_cast<int>(t) % (tilesPerSide * tilesPerSide);
    return {static_cast<int>(t) / (tilesPerSide * tilesPerSide), (inLdi % tilesPerSide) * tileSize,
            (inLdi / tilesPerSide) * tileSize};
  }
  struct RecordOrder {
    std::uint32_t chunkSample = 0, record = 0;  // the record's place within its hemicube, for deferral
  };

  // Where a record's share of one pixel goes (nearestLayer): the nearest seeded layer; failing that, spill is dropped,
  // and a record in its own pixel joins the nearest layer an earlier record opened there or opens one, unless opened
  // layers are deferred (deferOpenedLayers). Spill never opens a layer and never reaches an opened one: a VPL opens a
  // layer only where its sample lies (a surface the seeds lack, such as the back of a thin wall), so the layers do not
  // depend on the VPLs, and what a hemicube adds to the store does not depend on the hemicubes before it (a distributed
  // bake's shares add up to the whole bake).
  void accumulate(LdcBuilder::Tile& tile, const TilePlace& place, std::uint32_t localPixel, const TileRecord& rec,
                  const RecordOrder& order, float area, const glm::vec3& areaValue) const {
    std::int32_t best = nearestLayer(tile, localPixel, rec.position, rec.normal, false);
    if (best < 0 && seeded && !seedOnly) {
      const int i = place.iBase + static_cast<int>(localPixel) % tileSize;
      const int j = place.jBase + static_cast<int>(localPixel) / tileSize;
      const glm::vec2 own = frame.toPixel(place.ldi, rec.position);
      if (static_cast<int>(own.x) != i || static_cast<int>(own.y) != j) return;  // spill
      if (deferring) {
        tile.deferred.push_back(DeferredOpening{frame.globalPixel(place.ldi, i, j),
                                                std::uint32_t(firstHemicube + rec.hemicube), order.chunkSample,
                                                order.record, rec.position, rec.normal, areaValue, area});
        return;
      }
      best = nearestLayer(tile, localPixel, rec.position, rec.normal, true);
    }
    if (best < 0) {  // a new layer, at the end of the pixel's list
      best = static_cast<std::int32_t>(tile.layers.size());
      tile.layers.push_back(layerOnPlaneOf(rec.position, rec.normal, seeded && !seedOnly));
      std::int32_t* link = &tile.head[localPixel];
      while (*link >= 0) link = &tile.layers[static_cast<std::size_t>(*link)].next;
      *link = best;
    }
    if (seedOnly) return;  // a seed only makes sure the layer exists
    addToLayer(tile, best, rec.hemicube, area, areaValue);
  }

  static void addToLayer(LdcBuilder::Tile& tile, std::int32_t layer, std::uint32_t hemicube, float area,
                         const glm::vec3& areaValue) {
    if (tile.layers[static_cast<std::size_t>(layer)].add(hemicube, area, areaValue)) tile.pending.push_back(layer);
  }
};

}  // namespace

// Cuts every hemicube into chunks of kChunkSamples samples (fixed, whatever the threads and the batching);
// returns the sample count. Throws ibrr::Error for a hemicube whose arrays differ in length.
std::size_t LdcBuilder::chunkRanges(std::span<const HemicubeSampleView> hemicubes) {
  std::vector<ChunkRange>& ranges = m_scratch->ranges;
  ranges.clear();
  std::size_t total = 0;
  for (std::size_t h = 0; h < hemicubes.size(); ++h) {
    const HemicubeSampleView& hc = hemicubes[h];
    const std::size_t n = hc.positions.size();
    if (hc.normals.size() != n || hc.values.size() != n || hc.footprints.size() != n ||
        (!hc.edgeReaches.empty() && hc.edgeReaches.size() != n))
      throw Error("hemicube " + std::to_string(h) + " has arrays of different lengths (positions " + std::to_string(n) +
                  ", normals " + std::to_string(hc.normals.size()) + ", values " + std::to_string(hc.values.size()) +
                  ", footprints " + std::to_string(hc.footprints.size()) + ", edge reaches " +
                  std::to_string(hc.edgeReaches.size()) + "); every sample needs all four (and a reach, if any has)");
    total += n;
    if (total > std::numeric_limits<std::uint32_t>::max())
      throw Error("one insert() call takes at most 2^32-1 samples; split the batch");
    for (std::size_t s0 = 0; s0 < n; s0 += kChunkSamples)
      ranges.push_back(ChunkRange{static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(s0),
                                  static_cast<std::uint32_t>(std::min(n, s0 + kChunkSamples))});
  }
  return total;
}

void LdcBuilder::insertSamples(std::span<const HemicubeSampleView> hemicubes, bool seedOnly) {
  const std::size_t total = chunkRanges(hemicubes);
  const InsertionPass pass{m_frame,
                           m_tiles,
                           hemicubes,
                           m_scratch->ranges,
                           m_frame.resolution(),
                           m_tileSize,
                           m_tilesPerSide,
                           m_tiles.size(),
                           m_params.epsDistance,
                           1.0f - m_params.epsNormal,
                           kMinSampleAreaPixels * m_frame.pixelSize() * m_frame.pixelSize(),
                           m_kernel,
                           m_seeded,
                           seedOnly,
                           m_deferOpenings,
                           m_firstHemicube + m_stats.hemicubes};
  if (seedOnly) {
    m_seeded = true;
    m_stats.seedSamples += total;
  } else {
    m_stats.hemicubes += hemicubes.size();
    m_stats.samples += total;
  }
  if (total == 0) return;
  std::vector<ChunkOutput>& chunks = m_scratch->chunks;
  const std::size_t chunkCount = pass.ranges.size();
  if (chunks.size() < chunkCount) chunks.resize(chunkCount);

  // Phase 1, in parallel over chunks: warp each sample, rasterise its splat, and give every covered pixel its
  // share a = w·A/W of the sample's area (A the footprint, w the kernel weight, W the weights' sum over the
  // splat) as a record (pixel, Σa, Σa·E). A share folds into an earlier record of the same chunk for the same
  // pixel when the sample lies on that record's plane (the phase-2 matching test): near a VPL thousands of
  // samples fall in one pixel and become one record, which also keeps one tile from holding most of the
  // work. A large splat (low-resolution hemicubes, grazing angles) instead gets one record per tile it
  // touches, rasterised there in phase 2. Records are then counting-sorted by tile, stably, with their plane
  // copied in, so that phase 2 reads each tile's records in one sweep.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunkCount, 1), [&](const tbb::blocked_range<std::size_t>& r) {
    FoldCache fold;
    for (std::size_t c = r.begin(); c != r.end(); ++c) pass.chunkRecords(c, chunks[c], fold);
  });
  // Phase 2, in parallel over tiles: each tile takes its records in sample order and matches, opens or defers
  // the pixel's layer (InsertionPass::accumulate). A tile owns its pixels' layers: no two threads share one.
  const std::span<const ChunkOutput> chunkOutputs(chunks.data(), chunkCount);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, pass.tileCount, 1),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t t = r.begin(); t != r.end(); ++t)
                        pass.accumulateTile(t, *m_tiles[t], chunkOutputs);
                    });

  for (std::size_t c = 0; c < chunkCount; ++c) {
    if (seedOnly) continue;
    m_stats.droppedSamples += chunks[c].dropped;
    m_stats.splatRecords += chunks[c].splats;
  }
}

BuilderStats LdcBuilder::stats() const {
  BuilderStats s = m_stats;
  s.layers = 0;
  for (const auto& tile : m_tiles) s.layers += tile->layers.size();
  return s;
}

namespace {
// Walks the layers in store order: beginPixel(g) for every global pixel g in turn, then layer(b) for each of
// its layers in creation order.
template <class BeginPixel, class Layer>
void forEachLayerInStoreOrder(const LdcFrame& frame, int tileSize, int tilesPerSide,
                              const std::vector<std::unique_ptr<LdcBuilder::Tile>>& tiles, BeginPixel&& beginPixel,
                              Layer&& layer) {
  const int res = frame.resolution();
  std::uint32_t g = 0;
  for (int ldi = 0; ldi < 3; ++ldi)
    for (int j = 0; j < res; ++j)
      for (int i = 0; i < res; ++i, ++g) {
        beginPixel(g);
        const int ti = i / tileSize;
        const int tj = j / tileSize;
        const LdcBuilder::Tile& tile = *tiles[static_cast<std::size_t>((ldi * tilesPerSide + tj) * tilesPerSide + ti)];
        std::int32_t idx = tile.head[static_cast<std::size_t>((j - tj * tileSize) * tileSize + (i - ti * tileSize))];
        while (idx >= 0) {
          const BuildLayer& b = tile.layers[static_cast<std::size_t>(idx)];
          layer(b);
          idx = b.next;
        }
      }
}
}  // namespace

LdcBuilder::Planes LdcBuilder::planes() const {
  Planes result;
  result.offsets.resize(static_cast<std::size_t>(m_frame.pixelCount()) + 1);
  forEachLayerInStoreOrder(
      m_frame, m_tileSize, m_tilesPerSide, m_tiles,
      [&](std::uint32_t g) { result.offsets[g] = static_cast<std::uint32_t>(result.planes.size()); },
      [&](const BuildLayer& b) { result.planes.emplace_back(b.n, b.d); });
  result.offsets.back() = static_cast<std::uint32_t>(result.planes.size());
  return result;
}

LayeredDepthCube LdcBuilder::finalize() const {
  std::size_t layerCount = 0;
  for (const auto& tile : m_tiles) layerCount += tile->layers.size();
  if (layerCount >= std::numeric_limits<std::uint32_t>::max())
    throw Error("the LDC holds " + std::to_string(layerCount) +
                " layers, more than 32-bit offsets address; lower the resolution or epsilon");
  std::vector<std::uint32_t> offsets(static_cast<std::size_t>(m_frame.pixelCount()) + 1);
  std::vector<PackedLayer> layers;
  layers.reserve(layerCount);
  // Every layer is kept: one a hemicube made has count ≥ 1, a seeded one that no hemicube reached has 0.
  forEachLayerInStoreOrder(
      m_frame, m_tileSize, m_tilesPerSide, m_tiles,
      [&](std::uint32_t g) { offsets[g] = static_cast<std::uint32_t>(layers.size()); },
      [&](const BuildLayer& b) {
        const glm::vec3 total(b.total);
        layers.push_back(PackedLayer{octEncode(b.n), b.d, total.x, total.y, total.z, b.count});
      });
  offsets.back() = static_cast<std::uint32_t>(layers.size());
  return LayeredDepthCube(m_params, m_stats.hemicubes, std::move(offsets), std::move(layers));
}

LayerSums LdcBuilder::layerSums() const {
  LayeredDepthCube store = finalize();
  std::vector<glm::dvec3> sums;
  sums.reserve(store.layers().size());
  forEachLayerInStoreOrder(
      m_frame, m_tileSize, m_tilesPerSide, m_tiles, [](std::uint32_t) {},
      [&](const BuildLayer& b) { sums.push_back(b.total); });
  return LayerSums(std::move(store), std::move(sums));
}

void LdcBuilder::deferOpenedLayers(std::uint32_t firstHemicube) {
  m_deferOpenings = true;
  m_firstHemicube = std::uint64_t(firstHemicube) - m_stats.hemicubes;
}

std::vector<DeferredOpening> LdcBuilder::deferredOpenings() const {
  std::vector<DeferredOpening> all;
  for (const auto& tile : m_tiles) all.insert(all.end(), tile->deferred.begin(), tile->deferred.end());
  return all;
}

LayerSums openDeferredLayers(const LayerSums& seeded, std::vector<DeferredOpening> openings) {
  auto order = [](const DeferredOpening& x) { return std::tie(x.pixel, x.hemicube, x.sample, x.record); };
  std::sort(openings.begin(), openings.end(),
            [&](const DeferredOpening& a, const DeferredOpening& b) { return order(a) < order(b); });
  const LayeredDepthCube& store = seeded.layers;
  const float epsDistance = store.params().epsDistance;
  const float minCos = 1.0f - store.params().epsNormal;
  std::vector<std::uint32_t> offsets(store.offsets().size());
  std::vector<PackedLayer> layers;
  std::vector<glm::dvec3> sums;
  layers.reserve(store.layers().size());
  sums.reserve(store.layers().size());
  std::vector<BuildLayer> opened;  // of the current pixel, in the order they open
  std::size_t next = 0;            // the first record not yet replayed
  for (std::uint32_t g = 0; g + 1 < offsets.size(); ++g) {
    offsets[g] = static_cast<std::uint32_t>(layers.size());
    for (std::uint32_t k = store.offsets()[g]; k < store.offsets()[g + 1]; ++k) {
      layers.push_back(store.layers()[k]);
      sums.push_back(seeded.sums[k]);
    }
    opened.clear();
    for (; next < openings.size() && openings[next].pixel == g; ++next) {
      const DeferredOpening& rec = openings[next];
      std::int32_t best = -1;
      float bestDistance = epsDistance;
      for (std::size_t l = 0; l < opened.size(); ++l) {
        const float dist = planeDistance(opened[l], rec.position, rec.normal, minCos);
        if (dist < bestDistance) {
          best = static_cast<std::int32_t>(l);
          bestDistance = dist;
        }
      }
      if (best < 0) {
        best = static_cast<std::int32_t>(opened.size());
        opened.push_back(layerOnPlaneOf(rec.position, rec.normal, true));
      }
      opened[std::size_t(best)].add(rec.hemicube, rec.area, rec.areaValue);
    }
    for (BuildLayer& b : opened) {
      b.flush();
      const glm::vec3 total(b.total);
      layers.push_back(PackedLayer{octEncode(b.n), b.d, total.x, total.y, total.z, b.count});
      sums.push_back(b.total);
    }
  }
  IBRR_CHECK(next == openings.size(), "every deferred layer record names a pixel of the store");
  if (layers.size() >= std::numeric_limits<std::uint32_t>::max())
    throw Error("the LDC holds " + std::to_string(layers.size()) +
                " layers, more than 32-bit offsets address; lower the resolution or epsilon");
  offsets.back() = static_cast<std::uint32_t>(layers.size());
  return LayerSums(LayeredDepthCube(store.params(), store.vplCount(), std::move(offsets), std::move(layers)),
                   std::move(sums));
}

}  // namespace ibrr
