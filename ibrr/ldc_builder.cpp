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
  glm::vec3 total{0.0f};       // Σ over finished hemicubes of their area-weighted mean
  std::uint32_t count = 0;     // finished hemicubes
  glm::vec3 pendingSum{0.0f};  // Σ a·E of the current hemicube
  float pendingWeight = 0.0f;  // Σ a of the current hemicube (m²)
  std::int32_t next = -1;      // next layer of the same pixel, -1 ends the list
  std::uint32_t pendingHemicube = kNoHemicube;

  void flush() {
    if (pendingWeight > 0.0f) {
      total += pendingSum / pendingWeight;
      ++count;
    }
    pendingSum = glm::vec3(0.0f);
    pendingWeight = 0.0f;
    pendingHemicube = kNoHemicube;
  }
};

// The sample that opened a record: its plane is what phase 2 matches against the pixel's layers.
struct RecordPlane {
  glm::vec3 position{0.0f};
  float d = 0.0f;  // position·normal
  glm::vec3 normal{0.0f};
  std::uint32_t hemicube = 0;  // within the insert() call
};

// One pixel's share of one or more samples of one hemicube: Σ a·E and Σ a (see ldc_builder.hpp).
struct PixelRecord {
  std::uint32_t plane = 0;  // index into the chunk's planes
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
  std::vector<std::int32_t> pending;  // layers holding an unfinished hemicube sum
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

void LdcBuilder::insertSamples(std::span<const HemicubeSampleView> hemicubes, bool seedOnly) {
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
  if (seedOnly) {
    m_seeded = true;
    m_stats.seedSamples += total;
  } else {
    m_stats.hemicubes += hemicubes.size();
    m_stats.samples += total;
  }
  if (total == 0) return;

  const int res = m_frame.resolution();
  const int tileSize = m_tileSize;
  const int tilesPerSide = m_tilesPerSide;
  const std::size_t tileCount = m_tiles.size();
  const std::size_t chunkCount = ranges.size();
  std::vector<ChunkOutput>& chunks = m_scratch->chunks;
  if (chunks.size() < chunkCount) chunks.resize(chunkCount);
  const float epsDistance = m_params.epsDistance;
  const float minCos = 1.0f - m_params.epsNormal;
  const SplatKernel kernel = m_kernel;
  const bool seeded = m_seeded;
  const float minArea = kMinSampleAreaPixels * m_frame.pixelSize() * m_frame.pixelSize();
  const float resLast = static_cast<float>(res - 1);

  // Phase 1, in parallel over chunks: warp each sample, rasterise its splat, and give every covered pixel its
  // share a = w·A/W of the sample's area (A the footprint, w the kernel weight, W the weights' sum over the
  // splat) as a record (pixel, Σa, Σa·E). A share folds into an earlier record of the same chunk for the same
  // pixel when the sample lies on that record's plane (the phase-2 matching test): near a VPL thousands of
  // samples fall in one pixel and become one record, which also keeps one tile from holding most of the
  // work. A large splat (low-resolution hemicubes, grazing angles) instead gets one record per tile it
  // touches, rasterised there in phase 2. Records are then counting-sorted by tile, stably, with their plane
  // copied in, so that phase 2 reads each tile's records in one sweep.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunkCount, 1), [&](const tbb::blocked_range<std::size_t>& r) {
    std::uint32_t foldPixel[kFoldCacheSize];
    std::uint32_t foldRecord[kFoldCacheSize];
    glm::vec3 splatPixels[kPixelRecordMaxBox];  // (i, j, kernel weight) of a small splat's pixels
    for (std::size_t c = r.begin(); c != r.end(); ++c) {
      const ChunkRange range = ranges[c];
      const HemicubeSampleView& hc = hemicubes[range.hemicube];
      ChunkOutput& out = chunks[c];
      out.planes.clear();
      out.largeSplats.clear();
      out.records.clear();
      std::uint64_t dropped = 0;
      std::uint64_t splats = 0;
      std::fill(std::begin(foldRecord), std::end(foldRecord), kNoRecord);
      for (std::uint32_t k = range.begin; k < range.end; ++k) {
        const glm::vec3 p = hc.positions[k];
        const glm::vec3 nIn = hc.normals[k];
        const glm::vec3 value = hc.values[k];
        const float area = hc.footprints[k];
        const float len2 = glm::dot(nIn, nIn);
        if (!finite3(p) || !finite3(value) || !std::isfinite(area) || !(len2 > 1e-20f) || !std::isfinite(len2)) {
          ++dropped;
          continue;
        }
        const glm::vec3 n = nIn * (1.0f / std::sqrt(len2));
        const int ldi = dominantAxis(n);
        const glm::vec2 centre = m_frame.toPixel(ldi, p);
        if (!(centre.x >= 0.0f && centre.y >= 0.0f && centre.x < static_cast<float>(res) &&
              centre.y < static_cast<float>(res))) {
          ++dropped;
          continue;
        }
        std::size_t pixelCount = 0;
        float weightSum = 0.0f;
        const float d = glm::dot(p, n);
        std::uint32_t plane = kNoRecord;  // this sample's plane, added when it opens a record
        const glm::vec3 reach = hc.edgeReaches.empty() ? glm::vec3(0.0f) : hc.edgeReaches[k];
        if (kernel == SplatKernel::Box && reach == glm::vec3(0.0f) &&
            boxCoversOwnPixelOnly(m_frame, p, n, hc.centre, area, centre)) {
          // Fast path, same result as the general one: a box splat that reaches no neighbouring pixel centre.
          splatPixels[0] = glm::vec3(std::min(static_cast<float>(static_cast<int>(centre.x)), resLast),
                                     std::min(static_cast<float>(static_cast<int>(centre.y)), resLast), 1.0f);
          pixelCount = 1;
          weightSum = 1.0f;
        } else {
          const SplatFootprint fp = splatFootprint(m_frame, ldi, p, n, hc.centre, std::max(area, 0.0f), reach);
          const SplatRaster raster = prepareSplat(fp, kernel, res);
          if ((raster.i1 - raster.i0 + 1) * (raster.j1 - raster.j0 + 1) > kPixelRecordMaxBox) {
            // Large splat: one record per tile it touches, rasterised there in phase 2.
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
            splats += pixelCount;
            const auto splat = static_cast<std::uint32_t>(out.largeSplats.size());
            out.largeSplats.push_back(LargeSplat{raster, value, std::max(area, minArea) / weightSum});
            plane = static_cast<std::uint32_t>(out.planes.size());
            out.planes.push_back(RecordPlane{p, d, n, range.hemicube});
            for (int tj = raster.j0 / tileSize; tj <= raster.j1 / tileSize; ++tj)
              for (int ti = raster.i0 / tileSize; ti <= raster.i1 / tileSize; ++ti) {
                PixelRecord rec;
                rec.plane = plane;
                rec.tile = static_cast<std::uint32_t>((ldi * tilesPerSide + tj) * tilesPerSide + ti);
                rec.splat = splat;
                out.records.push_back(rec);
              }
            continue;
          }
          rasterSplat(raster, kernel, 0, res - 1, 0, res - 1, [&](int i, int j, float w) {
            splatPixels[pixelCount++] = glm::vec3(static_cast<float>(i), static_cast<float>(j), w);
            weightSum += w;
          });
        }
        splats += pixelCount;
        const float areaScale = std::max(area, minArea) / weightSum;  // A/W
        for (std::size_t q = 0; q < pixelCount; ++q) {
          const glm::vec3 px = splatPixels[q];
          const int i = static_cast<int>(px.x);
          const int j = static_cast<int>(px.y);
          const float a = px.z * areaScale;
          const std::uint32_t pixel = m_frame.globalPixel(ldi, i, j);
          const std::size_t slot = (pixel * 0x9E3779B1u >> 24) & (kFoldCacheSize - 1);
          const std::uint32_t prev = foldRecord[slot];
          if (prev != kNoRecord && foldPixel[slot] == pixel) {
            PixelRecord& rec = out.records[prev];
            const RecordPlane& rp = out.planes[rec.plane];
            if (std::fabs(glm::dot(p, rp.normal) - rp.d) < epsDistance && glm::dot(n, rp.normal) > minCos) {
              rec.area += a;
              rec.areaValue += a * value;
              continue;
            }
          }
          if (plane == kNoRecord) {
            plane = static_cast<std::uint32_t>(out.planes.size());
            out.planes.push_back(RecordPlane{p, d, n, range.hemicube});
          }
          const int ti = i / tileSize, tj = j / tileSize;
          PixelRecord rec;
          rec.plane = plane;
          rec.tile = static_cast<std::uint32_t>((ldi * tilesPerSide + tj) * tilesPerSide + ti);
          rec.localPixel = static_cast<std::uint32_t>((j - tj * tileSize) * tileSize + (i - ti * tileSize));
          rec.area = a;
          rec.areaValue = a * value;
          foldPixel[slot] = pixel;
          foldRecord[slot] = static_cast<std::uint32_t>(out.records.size());
          out.records.push_back(rec);
        }
      }
      out.dropped = dropped;
      out.splats = splats;
      // Stable counting sort by tile.
      out.tileStart.assign(tileCount + 1, 0);
      for (const PixelRecord& rec : out.records) ++out.tileStart[rec.tile + 1];
      for (std::size_t t = 0; t < tileCount; ++t) out.tileStart[t + 1] += out.tileStart[t];
      if (out.sorted.size() < out.records.size()) out.sorted.resize(out.records.size());  // only grows
      out.cursor.assign(out.tileStart.begin(), out.tileStart.end() - 1);
      for (const PixelRecord& rec : out.records) {
        const RecordPlane& plane = out.planes[rec.plane];
        out.sorted[out.cursor[rec.tile]++] = TileRecord{plane.position, plane.normal,   rec.areaValue, rec.area,
                                                        plane.hemicube, rec.localPixel, rec.splat};
      }
    }
  });

  // Phase 2, in parallel over tiles: each tile takes its records chunk by chunk, i.e. in sample order, matches
  // or creates the pixel's layer (paper §3.1: |p'·n − d| < ε_d and n'·n > 1 − ε_n, nearest plane wins) and adds
  // the record's sums to the layer's pending hemicube. A tile owns its pixels' layers: no two threads share one.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tileCount, 1), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t t = r.begin(); t != r.end(); ++t) {
      Tile& tile = *m_tiles[t];
      const int tileLdi = static_cast<int>(t) / (tilesPerSide * tilesPerSide);
      const int tileInLdi = static_cast<int>(t) % (tilesPerSide * tilesPerSide);
      const int iBase = (tileInLdi % tilesPerSide) * tileSize;
      const int jBase = (tileInLdi / tilesPerSide) * tileSize;
      const int iEnd = std::min(res, iBase + tileSize) - 1;
      const int jEnd = std::min(res, jBase + tileSize) - 1;
      // Once the geometry seeded the layers, a splat's spill into pixels around its sample's own pixel
      // matches layers but never opens one: a VPL opens a layer only where its sample lies (a surface the
      // seeds lack, such as the back of a thin wall), so the layers do not depend on the VPLs.
      auto spillOnly = [&](std::uint32_t localPixel, const TileRecord& rec) {
        const glm::vec2 own = m_frame.toPixel(tileLdi, rec.position);
        return static_cast<int>(own.x) != iBase + static_cast<int>(localPixel) % tileSize ||
               static_cast<int>(own.y) != jBase + static_cast<int>(localPixel) / tileSize;
      };
      auto accumulate = [&](std::uint32_t localPixel, const TileRecord& rec, float area, const glm::vec3& areaValue) {
        std::int32_t idx = tile.head[localPixel];
        std::int32_t best = -1;
        std::int32_t last = -1;
        float bestDist = epsDistance;
        while (idx >= 0) {
          const BuildLayer& layer = tile.layers[static_cast<std::size_t>(idx)];
          const float dist = std::fabs(glm::dot(rec.position, layer.n) - layer.d);
          if (dist < bestDist && glm::dot(rec.normal, layer.n) > minCos) {
            best = idx;
            bestDist = dist;
          }
          last = idx;
          idx = layer.next;
        }
        if (best < 0) {
          if (seeded && !seedOnly && spillOnly(localPixel, rec)) return;
          best = static_cast<std::int32_t>(tile.layers.size());
          BuildLayer layer;
          layer.n = rec.normal;
          layer.d = glm::dot(rec.position, rec.normal);
          tile.layers.push_back(layer);
          if (last < 0)
            tile.head[localPixel] = best;
          else
            tile.layers[static_cast<std::size_t>(last)].next = best;
        }
        if (seedOnly) return;  // a seed only makes sure the layer exists
        BuildLayer& layer = tile.layers[static_cast<std::size_t>(best)];
        if (layer.pendingHemicube != rec.hemicube) {
          if (layer.pendingHemicube == kNoHemicube)
            tile.pending.push_back(best);
          else
            layer.flush();  // records come in hemicube order: the previous one is complete
          layer.pendingHemicube = rec.hemicube;
        }
        layer.pendingSum += areaValue;
        layer.pendingWeight += area;
      };
      for (std::size_t c = 0; c < chunkCount; ++c) {
        const ChunkOutput& chunk = chunks[c];
        for (std::uint32_t k = chunk.tileStart[t]; k < chunk.tileStart[t + 1]; ++k) {
          const TileRecord& rec = chunk.sorted[k];
          if (rec.splat == kNoRecord) {
            accumulate(rec.localPixel, rec, rec.area, rec.areaValue);
            continue;
          }
          const LargeSplat& splat = chunk.largeSplats[rec.splat];
          rasterSplat(splat.raster, kernel, iBase, iEnd, jBase, jEnd, [&](int i, int j, float w) {
            const float a = w * splat.areaScale;
            accumulate(static_cast<std::uint32_t>((j - jBase) * tileSize + (i - iBase)), rec, a, a * splat.value);
          });
        }
      }
      for (std::int32_t idx : tile.pending) tile.layers[static_cast<std::size_t>(idx)].flush();
      tile.pending.clear();
    }
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
        layers.push_back(PackedLayer{octEncode(b.n), b.d, b.total.x, b.total.y, b.total.z, b.count});
      });
  offsets.back() = static_cast<std::uint32_t>(layers.size());
  return LayeredDepthCube(m_params, m_stats.hemicubes, std::move(offsets), std::move(layers));
}

}  // namespace ibrr
