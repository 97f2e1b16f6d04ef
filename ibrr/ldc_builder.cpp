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

// Samples per phase-1 chunk. Fixed, so chunking never depends on the thread count.
constexpr std::size_t kChunkSamples = 8192;
constexpr std::uint32_t kNoHemicube = std::numeric_limits<std::uint32_t>::max();

// A layer while building: the plane, the running total, and the current hemicube's weighted sums.
struct BuildLayer {
  glm::vec3 n{0.0f};           // plane normal, unit (quantised to octahedral only when finalised)
  float d = 0.0f;              // plane offset p·n, world units
  glm::vec3 total{0.0f};       // Σ over finished hemicubes of their averaged contribution
  std::uint32_t count = 0;     // finished hemicubes
  glm::vec3 pendingSum{0.0f};  // Σ w·value of the current hemicube
  float pendingWeight = 0.0f;  // Σ w of the current hemicube
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

// A sample after phase 1: normalised, with its LDI, its splat set up, and its hemicube index within the batch.
struct PreparedSample {
  glm::vec3 position{0.0f};
  glm::vec3 normal{0.0f};
  glm::vec3 value{0.0f};
  std::uint32_t hemicube = 0;
  SplatRaster raster;
};

// A (tile, sample) pair as emitted, before sorting by tile: one per tile a sample's splat touches (usually one).
struct TiledRecord {
  std::uint32_t tile;
  std::uint32_t sample;
};

struct ChunkOutput {
  std::vector<std::uint32_t> samples;    // sample indices sorted by tile, in sample order within a tile
  std::vector<std::uint32_t> tileStart;  // samples of tile t: [tileStart[t], tileStart[t+1])
  std::vector<TiledRecord> unsorted;
  std::uint64_t dropped = 0;
  std::uint64_t splats = 0;
};

bool finite3(const glm::vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

}  // namespace

struct LdcBuilder::Scratch {
  std::vector<PreparedSample> prepared;
  std::vector<ChunkOutput> chunks;
};

struct LdcBuilder::Tile {
  std::vector<std::int32_t> head;  // first layer of each pixel, -1 when empty
  std::vector<BuildLayer> layers;
  std::vector<std::int32_t> pending;  // layers holding an unfinished hemicube sum
};

LdcBuilder::LdcBuilder(const LdcParams& params, SplatKernel kernel)
    : m_params(resolveParams(params)), m_frame(m_params), m_kernel(kernel), m_scratch(std::make_unique<Scratch>()) {
  const int res = m_frame.resolution();
  // Tiles of 16–32 pixels: a few hundred tiles, enough parallel slack for any core count here.
  m_tileSize = std::max(16, res / 16);
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

void LdcBuilder::insert(std::span<const HemicubeSampleView> hemicubes) {
  // Global sample index s runs over the hemicubes in order; hemicubeStart[h] is the first of hemicube h.
  std::vector<std::size_t> hemicubeStart(hemicubes.size() + 1, 0);
  for (std::size_t h = 0; h < hemicubes.size(); ++h) {
    const HemicubeSampleView& hc = hemicubes[h];
    const std::size_t n = hc.positions.size();
    if (hc.normals.size() != n || hc.values.size() != n || hc.footprints.size() != n)
      throw Error("hemicube " + std::to_string(h) + " has arrays of different lengths (positions " + std::to_string(n) +
                  ", normals " + std::to_string(hc.normals.size()) + ", values " + std::to_string(hc.values.size()) +
                  ", footprints " + std::to_string(hc.footprints.size()) + "); every sample needs all four");
    hemicubeStart[h + 1] = hemicubeStart[h] + n;
  }
  const std::size_t total = hemicubeStart.back();
  if (total > std::numeric_limits<std::uint32_t>::max())
    throw Error("one insert() call takes at most 2^32-1 samples; split the batch");
  m_stats.hemicubes += hemicubes.size();
  m_stats.samples += total;
  if (total == 0) return;

  const int res = m_frame.resolution();
  const int tileSize = m_tileSize;
  const int tilesPerSide = m_tilesPerSide;
  const std::size_t tileCount = m_tiles.size();
  const std::size_t chunkCount = (total + kChunkSamples - 1) / kChunkSamples;
  std::vector<PreparedSample>& prepared = m_scratch->prepared;
  std::vector<ChunkOutput>& chunks = m_scratch->chunks;
  if (prepared.size() < total) prepared.resize(total);
  if (chunks.size() < chunkCount) chunks.resize(chunkCount);

  // Phase 1: per chunk, prepare samples and list them under every tile their splat touches.
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunkCount, 1), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t c = r.begin(); c != r.end(); ++c) {
      ChunkOutput& out = chunks[c];
      const std::size_t s0 = c * kChunkSamples;
      const std::size_t s1 = std::min(total, s0 + kChunkSamples);
      out.unsorted.clear();
      out.unsorted.reserve((s1 - s0) * 2);
      out.dropped = 0;
      std::size_t h = static_cast<std::size_t>(std::upper_bound(hemicubeStart.begin(), hemicubeStart.end(), s0) -
                                               hemicubeStart.begin() - 1);
      for (std::size_t s = s0; s < s1; ++s) {
        while (s >= hemicubeStart[h + 1]) ++h;
        const HemicubeSampleView& hc = hemicubes[h];
        const std::size_t k = s - hemicubeStart[h];
        const glm::vec3 p = hc.positions[k];
        const glm::vec3 nIn = hc.normals[k];
        const glm::vec3 value = hc.values[k];
        const float area = hc.footprints[k];
        const float len2 = glm::dot(nIn, nIn);
        if (!finite3(p) || !finite3(value) || !std::isfinite(area) || !(len2 > 1e-20f) || !std::isfinite(len2)) {
          ++out.dropped;
          continue;
        }
        const glm::vec3 n = nIn / std::sqrt(len2);
        const int ldi = dominantAxis(n);
        const SplatFootprint fp = splatFootprint(m_frame, ldi, p, n, hc.centre, std::max(area, 0.0f));
        if (!(fp.centre.x >= 0.0f && fp.centre.y >= 0.0f && fp.centre.x < static_cast<float>(res) &&
              fp.centre.y < static_cast<float>(res))) {
          ++out.dropped;
          continue;
        }
        PreparedSample& prep = prepared[s];
        prep.position = p;
        prep.normal = n;
        prep.value = value;
        prep.hemicube = static_cast<std::uint32_t>(h);
        prep.raster = prepareSplat(fp, m_kernel, res);
        const std::uint32_t ldiTileBase = static_cast<std::uint32_t>(ldi * tilesPerSide * tilesPerSide);
        const int ti0 = prep.raster.i0 / tileSize, ti1 = prep.raster.i1 / tileSize;
        const int tj0 = prep.raster.j0 / tileSize, tj1 = prep.raster.j1 / tileSize;
        for (int tj = tj0; tj <= tj1; ++tj)
          for (int ti = ti0; ti <= ti1; ++ti)
            out.unsorted.push_back(TiledRecord{ldiTileBase + static_cast<std::uint32_t>(tj * tilesPerSide + ti),
                                               static_cast<std::uint32_t>(s)});
      }
      // Stable counting sort by tile.
      out.tileStart.assign(tileCount + 1, 0);
      for (const TiledRecord& tr : out.unsorted) ++out.tileStart[tr.tile + 1];
      for (std::size_t t = 0; t < tileCount; ++t) out.tileStart[t + 1] += out.tileStart[t];
      out.samples.resize(out.unsorted.size());
      std::vector<std::uint32_t> cursor(out.tileStart.begin(), out.tileStart.end() - 1);
      for (const TiledRecord& tr : out.unsorted) out.samples[cursor[tr.tile]++] = tr.sample;
    }
  });

  // Phase 2: per tile, rasterise its samples' splats clipped to the tile, in global sample order.
  const float epsDistance = m_params.epsDistance;
  const float minCos = 1.0f - m_params.epsNormal;
  const SplatKernel kernel = m_kernel;
  std::vector<std::uint64_t> tileSplats(tileCount, 0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tileCount, 1), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t t = r.begin(); t != r.end(); ++t) {
      Tile& tile = *m_tiles[t];
      const int tileInLdi = static_cast<int>(t) % (tilesPerSide * tilesPerSide);
      const int iBase = (tileInLdi % tilesPerSide) * tileSize;
      const int jBase = (tileInLdi / tilesPerSide) * tileSize;
      const int iEnd = std::min(res, iBase + tileSize) - 1;
      const int jEnd = std::min(res, jBase + tileSize) - 1;
      std::uint64_t splats = 0;
      for (std::size_t c = 0; c < chunkCount; ++c) {
        const ChunkOutput& chunk = chunks[c];
        for (std::uint32_t k = chunk.tileStart[t]; k < chunk.tileStart[t + 1]; ++k) {
          const PreparedSample& s = prepared[chunk.samples[k]];
          rasterSplat(s.raster, kernel, iBase, iEnd, jBase, jEnd, [&](int i, int j, float weight) {
            ++splats;
            const auto localPixel = static_cast<std::size_t>((j - jBase) * tileSize + (i - iBase));
            // Plane matching (paper §3.1): |p'·n − d| < ε_d and n'·n > 1 − ε_n; nearest plane wins.
            std::int32_t idx = tile.head[localPixel];
            std::int32_t best = -1;
            std::int32_t last = -1;
            float bestDist = epsDistance;
            while (idx >= 0) {
              const BuildLayer& layer = tile.layers[static_cast<std::size_t>(idx)];
              const float dist = std::fabs(glm::dot(s.position, layer.n) - layer.d);
              if (dist < bestDist && glm::dot(s.normal, layer.n) > minCos) {
                best = idx;
                bestDist = dist;
              }
              last = idx;
              idx = layer.next;
            }
            if (best < 0) {
              best = static_cast<std::int32_t>(tile.layers.size());
              BuildLayer layer;
              layer.n = s.normal;
              layer.d = glm::dot(s.position, s.normal);
              tile.layers.push_back(layer);
              if (last < 0)
                tile.head[localPixel] = best;
              else
                tile.layers[static_cast<std::size_t>(last)].next = best;
            }
            BuildLayer& layer = tile.layers[static_cast<std::size_t>(best)];
            if (layer.pendingHemicube != s.hemicube) {
              if (layer.pendingHemicube == kNoHemicube)
                tile.pending.push_back(best);
              else
                layer.flush();  // samples come in hemicube order: the previous one is complete
              layer.pendingHemicube = s.hemicube;
            }
            layer.pendingSum += weight * s.value;
            layer.pendingWeight += weight;
          });
        }
      }
      for (std::int32_t idx : tile.pending) tile.layers[static_cast<std::size_t>(idx)].flush();
      tile.pending.clear();
      tileSplats[t] = splats;
    }
  });

  for (std::size_t c = 0; c < chunkCount; ++c) m_stats.droppedSamples += chunks[c].dropped;
  for (std::uint64_t n : tileSplats) m_stats.splatRecords += n;
}

BuilderStats LdcBuilder::stats() const {
  BuilderStats s = m_stats;
  s.layers = 0;
  for (const auto& tile : m_tiles) s.layers += tile->layers.size();
  return s;
}

LayeredDepthCube LdcBuilder::finalize() const {
  const int res = m_frame.resolution();
  std::size_t layerCount = 0;
  for (const auto& tile : m_tiles) layerCount += tile->layers.size();
  if (layerCount >= std::numeric_limits<std::uint32_t>::max())
    throw Error("the LDC holds " + std::to_string(layerCount) +
                " layers, more than 32-bit offsets address; lower the resolution or epsilon");
  std::vector<std::uint32_t> offsets(static_cast<std::size_t>(m_frame.pixelCount()) + 1);
  std::vector<PackedLayer> layers;
  layers.reserve(layerCount);
  std::uint32_t g = 0;
  for (int ldi = 0; ldi < 3; ++ldi)
    for (int j = 0; j < res; ++j)
      for (int i = 0; i < res; ++i, ++g) {
        offsets[g] = static_cast<std::uint32_t>(layers.size());
        const int ti = i / m_tileSize;
        const int tj = j / m_tileSize;
        const Tile& tile = *m_tiles[static_cast<std::size_t>((ldi * m_tilesPerSide + tj) * m_tilesPerSide + ti)];
        std::int32_t idx =
            tile.head[static_cast<std::size_t>((j - tj * m_tileSize) * m_tileSize + (i - ti * m_tileSize))];
        while (idx >= 0) {
          const BuildLayer& b = tile.layers[static_cast<std::size_t>(idx)];
          if (b.count > 0) layers.push_back(PackedLayer{octEncode(b.n), b.d, b.total.x, b.total.y, b.total.z, b.count});
          idx = b.next;
        }
      }
  offsets[g] = static_cast<std::uint32_t>(layers.size());
  return LayeredDepthCube(m_params, m_stats.hemicubes, std::move(offsets), std::move(layers));
}

}  // namespace ibrr
