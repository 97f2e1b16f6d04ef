#include "ibrr/ldc_builder.hpp"

#include "ibrr/error.hpp"
#include "ibrr/octahedral.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

namespace ibrr {

namespace {

// Footprints are floored at this many LDI pixel areas, so that samples handed in with a zero footprint still
// count (with a negligible weight next to any real footprint).
constexpr float kMinSampleAreaPixels = 1e-9f;
constexpr std::uint32_t kNoHemicube = std::numeric_limits<std::uint32_t>::max();
// A box splat's half-edges are at most kMaxSplatHalfExtentPixels long, so its pixel box spans at most
// 2·(2·16) + 1 = 65 rows and columns; each row is one run of covered pixels, or two where the own pixel lies
// apart from it (splat.hpp, rasterBoxRuns).
constexpr std::size_t kMaxBoxRuns = 2 * (4 * static_cast<std::size_t>(kMaxSplatHalfExtentPixels) + 2);
// A Gaussian splat: V ⪯ (2·16²/3 + 1/12)·I, so its cut-off box reaches 2·√170.75 < 27 pixels from the centre:
// at most 55 × 55 pixels.
constexpr std::size_t kMaxGaussianPixels = 55 * 55;
// The side of the tiles the parallel pass sorts a hemicube's samples by: 16 pixels, or more at R > 512 so that an
// LDI holds at most 32 × 32 of them. A tile's layers and sums (about 20 × 20 pixels with the splats' reach, two
// layers a pixel, 32 bytes a layer: 25 KiB) stay in the cache while its samples are splatted.
int sortTileSize(int resolution) { return std::max(16, resolution / 32); }

// A layer while building: the plane, and the current hemicube's area-weighted sums where the ordered pass fills
// them (its running total is a LayerTotal beside it).
struct BuildLayer {
  glm::vec3 n{0.0f};           // plane normal, unit (quantised to octahedral only when finalised)
  float d = 0.0f;              // plane offset p·n, world units
  glm::vec3 pendingSum{0.0f};  // Σ a·E of the current hemicube
  float pendingWeight = 0.0f;  // Σ a of the current hemicube (m²)
  std::int32_t next = -1;      // next layer of the same pixel, -1 ends the list
  std::uint32_t pendingHemicube = kNoHemicube;
  bool opened = false;  // a hemicube's sample opened it after the geometry seeds (a surface they lack)
};

// A layer's running total: Σ over finished hemicubes of their area-weighted mean B_h = Σ a·E / Σ a, in double
// precision so that shares of the hemicubes add to the same sums (ldc.hpp, LayerSums), and their count.
struct LayerTotal {
  glm::dvec3 sum{0.0};
  std::uint32_t count = 0;
  void add(const glm::vec3& mean) {
    sum += glm::dvec3(mean);
    ++count;
  }
};

// Adds the layer's pending hemicube mean, if any, to its total and clears the pending sums.
void flushShares(BuildLayer& layer, LayerTotal& total) {
  if (layer.pendingWeight > 0.0f) total.add(layer.pendingSum / layer.pendingWeight);
  layer.pendingSum = glm::vec3(0.0f);
  layer.pendingWeight = 0.0f;
  layer.pendingHemicube = kNoHemicube;
}

// Adds a share of hemicube `stamp` to the layer's pending sums, finishing the previous hemicube's first (into
// `total`). Returns true when the layer held no pending hemicube (the caller lists it for the final flush).
bool addShare(BuildLayer& layer, LayerTotal& total, std::uint32_t stamp, float area, const glm::vec3& areaValue) {
  bool fresh = false;
  if (layer.pendingHemicube != stamp) {
    if (layer.pendingHemicube == kNoHemicube)
      fresh = true;
    else
      flushShares(layer, total);  // shares come in hemicube order: the previous one is complete
    layer.pendingHemicube = stamp;
  }
  layer.pendingSum += areaValue;
  layer.pendingWeight += area;
  return fresh;
}

// The distance of p from the plane (n_l, d_l), |p·n_l − d_l| (world units), or +∞ when the normals differ by more
// than ε_n (n·n_l ≤ minCos): the matching test of paper §3.1, the nearest plane within ε_d winning.
inline float planeDistance(const glm::vec3& planeNormal, float planeD, const glm::vec3& p, const glm::vec3& n,
                           float minCos) {
  if (!(glm::dot(n, planeNormal) > minCos)) return std::numeric_limits<float>::infinity();
  return std::fabs(glm::dot(p, planeNormal) - planeD);
}

// A new layer on the plane of a sample at p with normal n; `opened` when a hemicube opens it after the seeds.
BuildLayer layerOnPlaneOf(const glm::vec3& p, const glm::vec3& n, bool opened) {
  BuildLayer layer;
  layer.n = n;
  layer.d = glm::dot(p, n);
  layer.opened = opened;
  return layer;
}

// True when a box splat of the sample certainly covers its own pixel only: its half-extent along either image
// axis is at most |e1| + |e2| ≤ kSplatCoverage·(s/2 + l/2)/pixel (splat.hpp), and a neighbouring pixel centre
// lies at least 1 − |frac − ½| from the centre. The margin keeps the test conservative against float rounding
// and the rasteriser's edge slack, so the fast path gives exactly what rasterising the splat would.
inline bool boxCoversOwnPixelOnly(const LdcFrame& frame, const glm::vec3& p, const glm::vec3& n,
                                  const glm::vec3& hemicubeCentre, float area, const glm::vec2& centre) {
  if (!(area > 0.0f)) return false;  // the general path handles degenerate footprints
  // s/2 + l/2 = ½√A·(√cos θ + 1/√cos θ) ≥ √A, so the extent is at least kSplatCoverage·√A/pixel, and it must stay
  // below 1: a footprint of 0.64 pixel areas or more (0.7 with room for rounding) spills.
  if (area * frame.invPixelSize() * frame.invPixelSize() >= 0.7f) return false;
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

// One sample as the warp sees it: its plane, the LDI its normal selects and its place in that LDI's image.
struct WarpedSample {
  glm::vec3 p{0.0f};
  glm::vec3 n{0.0f};  // unit (sampleUnitNormal)
  glm::vec3 value{0.0f};
  float area = 0.0f;  // the footprint as handed in, m²
  int ldi = 0;
  glm::vec2 centre{0.0f};    // p in pixel coordinates
  int ownI = 0, ownJ = 0;    // the pixel containing p
  glm::vec3 reach{0.0f};     // its edge reach (hemicube_samples.hpp), or zero
  std::uint32_t sample = 0;  // its index in the hemicube
};

// Warps sample k of hc; false for a sample that is dropped (non-finite, zero normal, or outside the cube).
bool warpSample(const LdcFrame& frame, const HemicubeSampleView& hc, std::uint32_t k, WarpedSample& s) {
  s.p = hc.positions[k];
  const glm::vec3 nIn = hc.normals[k];
  s.value = hc.values[k];
  s.area = hc.footprints[k];
  const float len2 = glm::dot(nIn, nIn);
  if (!finite3(s.p) || !finite3(s.value) || !std::isfinite(s.area) || !(len2 > 1e-20f) || !std::isfinite(len2))
    return false;
  s.n = sampleUnitNormal(nIn);
  s.ldi = dominantAxis(s.n);
  s.centre = frame.toPixel(s.ldi, s.p);
  const auto res = static_cast<float>(frame.resolution());
  if (!(s.centre.x >= 0.0f && s.centre.y >= 0.0f && s.centre.x < res && s.centre.y < res)) return false;
  s.ownI = static_cast<int>(s.centre.x);
  s.ownJ = static_cast<int>(s.centre.y);
  s.reach = hc.edgeReaches.empty() ? glm::vec3(0.0f) : hc.edgeReaches[k];
  s.sample = k;
  return true;
}

// Room for one splat's pixels: the runs of a box splat, the weighted pixels of a Gaussian one.
struct SplatBuffer {
  std::array<glm::ivec3, kMaxBoxRuns> runs;  // (j, first i, last i)
  std::vector<glm::vec3> weighted;           // (i, j, kernel weight)
  SplatBuffer() { weighted.reserve(kMaxGaussianPixels); }
};

}  // namespace

// The layers of the store being built. Every pixel's layers form a list in creation order (head, BuildLayer::next);
// once hemicubes arrive after the geometry seeds, the seeded layers are renumbered into store order and their
// planes copied into `seedPlanes`, which the parallel pass matches against (they no longer change).
struct LdcBuilder::Layers {
  std::vector<std::int32_t> head;  // first layer of each global pixel, -1 when empty
  std::vector<BuildLayer> layers;
  std::vector<LayerTotal> totals;         // one a layer, apart so that adding the hemicube means reads only these
  std::vector<std::int32_t> pending;      // layers holding an unfinished hemicube sum (the ordered pass)
  std::vector<DeferredOpening> deferred;  // deferOpenedLayers: the shares kept aside, in sample order
  // The seed index: the seeded layers of global pixel g are layers[seedOffsets[g] .. seedOffsets[g+1]), their
  // planes (n, d) in seedPlanes at the same indices. Empty until the first hemicube after seeding.
  std::vector<std::uint32_t> seedOffsets;
  std::vector<glm::vec4> seedPlanes;
};

// A thread's running sums of the hemicube it is warping, one entry per seeded layer: (Σ a·E, Σ a), zero when the
// hemicube has not reached the layer, and the layers it has reached, in the order it reached them.
struct HemicubeSums {
  std::vector<glm::vec4> sums;
  std::vector<std::uint32_t> touched;  // room for every layer and one more (the first-touch list)
  SplatBuffer splat;
  // The hemicube's samples, warped, and the order they are splatted in (InsertionPass::sortByTile).
  std::vector<WarpedSample> warped;
  std::vector<std::uint32_t> tileOf;
  std::vector<std::uint32_t> tileStart;
  std::vector<std::uint32_t> order;
};

// A share of a sample's own pixel that matched no seeded layer: the ordered pass opens or joins a layer with it.
struct OwnPixelMiss {
  std::uint32_t pixel = 0;   // global LDI pixel
  std::uint32_t sample = 0;  // within its hemicube
  glm::vec3 position{0.0f};  // the sample's plane
  glm::vec3 normal{0.0f};
  glm::vec3 areaValue{0.0f};  // a·E
  float area = 0.0f;          // a
};

// What the parallel pass makes of one hemicube: its area-weighted mean on every seeded layer it reached, and its
// own-pixel shares that matched none.
struct HemicubeResult {
  struct LayerMean {
    std::uint32_t layer = 0;
    glm::vec3 mean{0.0f};  // B_h = Σ a·E / Σ a
  };
  std::vector<LayerMean> means;
  std::vector<OwnPixelMiss> misses;
  std::uint64_t dropped = 0;
  std::uint64_t splats = 0;
};

struct LdcBuilder::Scratch {
  tbb::enumerable_thread_specific<HemicubeSums> sums;
  std::vector<HemicubeResult> results;
  SplatBuffer splat;  // the ordered pass's
};

namespace {

// One insert() or seedLayers() call: its samples, the store's frame and parameters, and the passes over them.
struct InsertionPass {
  const LdcFrame& frame;
  LdcBuilder::Layers& store;
  std::span<const HemicubeSampleView> hemicubes;
  int res = 0;
  int tileSize = 0, tilesPerSide = 0;  // the squares of pixels the parallel pass sorts samples by
  float epsDistance = 0.0f, minCos = 0.0f, minArea = 0.0f;
  SplatKernel kernel = SplatKernel::Box;
  bool seeded = false;              // the geometry seeded the layers before this call
  bool seedOnly = false;            // this call seeds them
  bool deferring = false;           // LdcBuilder::deferOpenedLayers
  std::uint64_t firstHemicube = 0;  // the bake's index of this call's first hemicube

  // Calls share(i, j, a) for every pixel (i, j) of sample s's splat (a sample of the hemicube centred at
  // `hemicubeCentre`), row by row, with the pixel's share a = w·A/W of the sample's area (ldc_builder.hpp);
  // returns the pixel count. The splat is rasterised once, into `buffer`, and W summed in the rasteriser's order.
  template <class Share>
  std::size_t forEachShare(const glm::vec3& hemicubeCentre, const WarpedSample& s, SplatBuffer& buffer,
                           Share&& share) const {
    const glm::vec3& reach = s.reach;
    const float area = std::max(s.area, minArea);
    if (kernel == SplatKernel::Box && reach == glm::vec3(0.0f) &&
        boxCoversOwnPixelOnly(frame, s.p, s.n, hemicubeCentre, s.area, s.centre)) {
      share(s.ownI, s.ownJ, area);  // a box splat that reaches no neighbouring pixel centre: W = 1
      return 1;
    }
    const SplatFootprint fp = splatFootprint(frame, s.ldi, s.p, s.n, hemicubeCentre, std::max(s.area, 0.0f), reach);
    const SplatRaster raster = prepareSplat(fp, kernel, res);
    if (kernel == SplatKernel::Box) {  // every weight is 1: W is the pixel count
      std::size_t runs = 0, pixels = 0;
      rasterBoxRuns(raster, [&](int j, int iFirst, int iLast) {
        IBRR_CHECK(runs < buffer.runs.size(), "a box splat has at most two runs of pixels a row");
        buffer.runs[runs++] = glm::ivec3(j, iFirst, iLast);
        pixels += static_cast<std::size_t>(iLast - iFirst + 1);
      });
      const float a = area / static_cast<float>(pixels);
      for (std::size_t r = 0; r < runs; ++r)
        for (int i = buffer.runs[r].y; i <= buffer.runs[r].z; ++i) share(i, buffer.runs[r].x, a);
      return pixels;
    }
    buffer.weighted.clear();
    float weightSum = 0.0f;
    rasterSplat(raster, kernel, [&](int i, int j, float w) {
      buffer.weighted.emplace_back(static_cast<float>(i), static_cast<float>(j), w);
      weightSum += w;
    });
    const float areaScale = area / weightSum;  // A/W
    for (const glm::vec3& q : buffer.weighted) share(static_cast<int>(q.x), static_cast<int>(q.y), q.z * areaScale);
    return buffer.weighted.size();
  }

  // The nearest seeded layer of global pixel g that a sample at p with normal n lies on (paper §3.1:
  // |p·n_l − d_l| < ε_d and n·n_l > 1 − ε_n), or -1.
  std::int32_t nearestSeededLayer(std::uint32_t g, const glm::vec3& p, const glm::vec3& n) const {
    std::int32_t best = -1;
    float bestDistance = epsDistance;
    const glm::vec4* const planes = store.seedPlanes.data();
    for (std::uint32_t l = store.seedOffsets[g], end = store.seedOffsets[g + 1]; l < end; ++l) {
      const glm::vec4& plane = planes[l];
      const float dist = planeDistance(glm::vec3(plane), plane.w, p, n, minCos);
      if (dist < bestDistance) {
        best = static_cast<std::int32_t>(l);
        bestDistance = dist;
      }
    }
    return best;
  }

  // The parallel pass for one hemicube (after seeding). Its samples are warped and sorted by the LDI tile their
  // pixel lies in (stably, so in sample order within a tile): a tile's splats then fall on a few thousand layers
  // that stay in the cache, where in sample order every splat row would reach a layer far from the last. Every
  // share that lies on a seeded layer adds to the thread's sums of that layer; a share of the sample's own pixel
  // that lies on none is kept for the ordered pass (in sample order), and spill that lies on none is dropped.
  // Then every reached layer's mean.
  void sumHemicube(const HemicubeSampleView& hc, HemicubeSums& sums, HemicubeResult& out) const {
    out.means.clear();
    out.misses.clear();
    out.splats = 0;
    sortByTile(hc, sums);
    out.dropped = hc.size() - sums.warped.size();
    // Plain pointers and a local count, so that the compiler keeps them in registers across the shares.
    glm::vec4* const layerSums = sums.sums.data();
    std::uint32_t* const touched = sums.touched.data();
    std::size_t touchedCount = 0;
    for (const std::uint32_t index : sums.order) {
      const WarpedSample& s = sums.warped[index];
      out.splats += forEachShare(hc.centre, s, sums.splat, [&](int i, int j, float a) {
        const std::uint32_t g = frame.globalPixel(s.ldi, i, j);
        const std::int32_t layer = nearestSeededLayer(g, s.p, s.n);
        if (layer < 0) {
          if (i == s.ownI && j == s.ownJ) out.misses.push_back(OwnPixelMiss{g, s.sample, s.p, s.n, a * s.value, a});
          return;
        }
        glm::vec4& sum = layerSums[layer];
        touched[touchedCount] = static_cast<std::uint32_t>(layer);  // kept only on the first touch
        touchedCount += sum.w == 0.0f ? 1 : 0;                      // (every share has a > 0)
        sum += glm::vec4(a * s.value, a);
      });
    }
    std::sort(out.misses.begin(), out.misses.end(),
              [](const OwnPixelMiss& x, const OwnPixelMiss& y) { return x.sample < y.sample; });
    out.means.reserve(touchedCount);
    for (std::size_t t = 0; t < touchedCount; ++t) {
      glm::vec4& sum = layerSums[touched[t]];
      out.means.push_back(HemicubeResult::LayerMean{touched[t], glm::vec3(sum) / sum.w});
      sum = glm::vec4(0.0f);
    }
  }

  // Warps hc's samples into sums.warped (the dropped ones left out) and orders them by tile into sums.order: a
  // stable counting sort on the tile of each sample's own pixel.
  void sortByTile(const HemicubeSampleView& hc, HemicubeSums& sums) const {
    sums.warped.clear();
    sums.tileOf.clear();
    sums.tileStart.assign(static_cast<std::size_t>(3 * tilesPerSide * tilesPerSide) + 1, 0);
    WarpedSample s;
    for (std::uint32_t k = 0; k < hc.size(); ++k) {
      if (!warpSample(frame, hc, k, s)) continue;
      const auto tile =
          static_cast<std::uint32_t>((s.ldi * tilesPerSide + s.ownJ / tileSize) * tilesPerSide + s.ownI / tileSize);
      sums.warped.push_back(s);
      sums.tileOf.push_back(tile);
      ++sums.tileStart[tile + 1];
    }
    for (std::size_t t = 1; t < sums.tileStart.size(); ++t) sums.tileStart[t] += sums.tileStart[t - 1];
    sums.order.resize(sums.warped.size());
    for (std::uint32_t w = 0; w < sums.warped.size(); ++w) sums.order[sums.tileStart[sums.tileOf[w]]++] = w;
  }

  // The nearest layer of global pixel g that a sample at p with normal n lies on, among the seeded layers or
  // among those hemicubes opened; -1 when none. Before seeding, and without seeds, every layer counts as seeded.
  std::int32_t nearestListedLayer(std::uint32_t g, const glm::vec3& p, const glm::vec3& n, bool opened) const {
    std::int32_t best = -1;
    float bestDistance = epsDistance;
    for (std::int32_t idx = store.head[g]; idx >= 0; idx = store.layers[std::size_t(idx)].next) {
      const BuildLayer& layer = store.layers[static_cast<std::size_t>(idx)];
      if (layer.opened != opened) continue;
      const float dist = planeDistance(layer.n, layer.d, p, n, minCos);
      if (dist < bestDistance) {
        best = idx;
        bestDistance = dist;
      }
    }
    return best;
  }

  // Where a share (a, a·E) of global pixel g goes in the ordered pass, its sample at p with normal n: the nearest
  // seeded layer; failing that, spill is dropped, and a share of the sample's own pixel joins the nearest layer an
  // earlier share opened there or opens one, unless opened layers are deferred (deferOpenedLayers). Spill never
  // opens a layer and never reaches an opened one: a VPL opens a layer only where its sample lies (a surface the
  // seeds lack, such as the back of a thin wall), so the layers do not depend on the VPLs, and what a hemicube
  // adds to the store does not depend on the hemicubes before it (a distributed bake's shares add up to the
  // whole bake). Without seeds, and while seeding, every share matches or opens a layer.
  void placeShare(std::uint32_t g, bool ownPixel, const glm::vec3& p, const glm::vec3& n, std::uint32_t hemicube,
                  std::uint32_t sample, float area, const glm::vec3& areaValue) const {
    std::int32_t best = nearestListedLayer(g, p, n, false);
    const bool afterSeeds = seeded && !seedOnly;
    if (best < 0 && afterSeeds) {
      if (!ownPixel) return;  // spill
      if (deferring) {
        store.deferred.push_back(
            DeferredOpening{g, std::uint32_t(firstHemicube + hemicube), sample, p, n, areaValue, area});
        return;
      }
      best = nearestListedLayer(g, p, n, true);
    }
    if (best < 0) {  // a new layer, at the end of the pixel's list
      best = static_cast<std::int32_t>(store.layers.size());
      store.layers.push_back(layerOnPlaneOf(p, n, afterSeeds));
      store.totals.emplace_back();
      std::int32_t* link = &store.head[g];
      while (*link >= 0) link = &store.layers[static_cast<std::size_t>(*link)].next;
      *link = best;
    }
    if (seedOnly) return;  // a seed only makes sure the layer exists
    const auto layer = static_cast<std::size_t>(best);
    if (addShare(store.layers[layer], store.totals[layer], hemicube, area, areaValue)) store.pending.push_back(best);
  }

  // The ordered pass over every share of every sample, in sample order: seeding, and inserting without seeds.
  // Returns (dropped samples, splat pixels).
  std::pair<std::uint64_t, std::uint64_t> placeAllShares(SplatBuffer& buffer) const {
    std::uint64_t dropped = 0, splats = 0;
    WarpedSample s;
    for (std::uint32_t h = 0; h < hemicubes.size(); ++h) {
      const HemicubeSampleView& hc = hemicubes[h];
      for (std::uint32_t k = 0; k < hc.size(); ++k) {
        if (!warpSample(frame, hc, k, s)) {
          ++dropped;
          continue;
        }
        splats += forEachShare(hc.centre, s, buffer, [&](int i, int j, float a) {
          placeShare(frame.globalPixel(s.ldi, i, j), i == s.ownI && j == s.ownJ, s.p, s.n, h, k, a, a * s.value);
        });
      }
    }
    flushPending();
    return {dropped, splats};
  }

  // The ordered pass after the parallel one: the own-pixel shares no seeded layer took, in sample order;
  // results[k] is the call's hemicube groupStart + k. placeShare tries the seeded layers again (and fails): a
  // few extra plane tests for the rare shares that get here, so that one function holds the whole rule.
  void placeMisses(std::span<const HemicubeResult> results, std::uint32_t groupStart) const {
    for (std::uint32_t k = 0; k < results.size(); ++k)
      for (const OwnPixelMiss& m : results[k].misses)
        placeShare(m.pixel, true, m.position, m.normal, groupStart + k, m.sample, m.area, m.areaValue);
    flushPending();
  }

  void flushPending() const {
    for (const std::int32_t idx : store.pending)
      flushShares(store.layers[static_cast<std::size_t>(idx)], store.totals[static_cast<std::size_t>(idx)]);
    store.pending.clear();
  }
};

// Walks the layers in store order: beginPixel(g) for every global pixel g in turn, then layer(index) for each of
// its layers in creation order.
template <class BeginPixel, class Layer>
void forEachLayerInStoreOrder(const LdcBuilder::Layers& store, BeginPixel&& beginPixel, Layer&& layer) {
  for (std::uint32_t g = 0; g < store.head.size(); ++g) {
    beginPixel(g);
    for (std::int32_t idx = store.head[g]; idx >= 0; idx = store.layers[static_cast<std::size_t>(idx)].next)
      layer(static_cast<std::size_t>(idx));
  }
}

}  // namespace

LdcBuilder::LdcBuilder(const LdcParams& params, SplatKernel kernel)
    : m_params(resolveParams(params)),
      m_frame(m_params),
      m_kernel(kernel),
      m_layers(std::make_unique<Layers>()),
      m_scratch(std::make_unique<Scratch>()) {
  m_layers->head.assign(m_frame.pixelCount(), -1);
}

LdcBuilder::~LdcBuilder() = default;
LdcBuilder::LdcBuilder(LdcBuilder&&) noexcept = default;
LdcBuilder& LdcBuilder::operator=(LdcBuilder&&) noexcept = default;

void LdcBuilder::insert(const HemicubeSampleView& hemicube) {
  insert(std::span<const HemicubeSampleView>(&hemicube, 1));
}

void LdcBuilder::insert(std::span<const HemicubeSampleView> hemicubes) { insertSamples(hemicubes, false); }

void LdcBuilder::seedLayers(const HemicubeSampleView& seeds) {
  IBRR_CHECK(m_layers->seedOffsets.empty(), "the geometry seeds come before the hemicubes");
  insertSamples(std::span<const HemicubeSampleView>(&seeds, 1), true);
}

// Renumbers the layers into store order and indexes the seeded ones (Layers::seedOffsets, seedPlanes): done once,
// when the first hemicube after the seeds arrives, when every layer is a seeded one.
void LdcBuilder::indexSeededLayers() {
  Layers& store = *m_layers;
  std::vector<BuildLayer> ordered;
  std::vector<LayerTotal> orderedTotals;
  ordered.reserve(store.layers.size());
  orderedTotals.reserve(store.layers.size());
  store.seedOffsets.assign(store.head.size() + 1, 0);
  store.seedPlanes.clear();
  store.seedPlanes.reserve(store.layers.size());
  for (std::size_t g = 0; g < store.head.size(); ++g) {
    store.seedOffsets[g] = static_cast<std::uint32_t>(ordered.size());
    const std::int32_t first = store.head[g];
    for (std::int32_t idx = first; idx >= 0; idx = store.layers[static_cast<std::size_t>(idx)].next) {
      BuildLayer layer = store.layers[static_cast<std::size_t>(idx)];
      IBRR_CHECK(!layer.opened, "only seeded layers exist before the first hemicube after the seeds");
      layer.next = layer.next >= 0 ? static_cast<std::int32_t>(ordered.size() + 1) : -1;
      store.seedPlanes.emplace_back(layer.n, layer.d);
      ordered.push_back(layer);
      orderedTotals.push_back(store.totals[static_cast<std::size_t>(idx)]);
    }
    store.head[g] = first >= 0 ? static_cast<std::int32_t>(store.seedOffsets[g]) : -1;
  }
  store.seedOffsets.back() = static_cast<std::uint32_t>(ordered.size());
  store.layers = std::move(ordered);
  store.totals = std::move(orderedTotals);
}

namespace {

// After the seeds, in three passes:
//   1. In parallel over hemicubes, each hemicube's samples in order (HemicubeSums, one per thread): every share
//      that lies on a seeded layer adds to that layer's Σ a·E and Σ a, and the hemicube's mean on every layer it
//      reached is listed. Each sum is formed in sample order, whatever thread forms it.
//   2. In hemicube order, each layer adds the means (in parallel over ranges of layers, each range taking every
//      hemicube's means in order, so every total is summed in hemicube order).
//   3. In sample order, the own-pixel shares that lay on no seeded layer open or join layers (placeShare).
void insertAfterSeeds(const InsertionPass& pass, LdcBuilder::Scratch& scratch, BuilderStats& stats) {
  LdcBuilder::Layers& store = pass.store;
  const std::size_t seededLayers = store.seedPlanes.size();
  const auto threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  // Hemicubes in groups of eight a thread: enough that hemicubes of different sizes even out over the threads,
  // few enough that the means waiting for step 2 take a few tens of hemicubes' worth of memory however large
  // the batch.
  const std::size_t groupSize = 8 * threads;
  std::vector<HemicubeResult>& results = scratch.results;
  results.resize(std::min(groupSize, pass.hemicubes.size()));
  // One range of layers a thread: each range reads every mean, so more ranges would only read them more often.
  const std::size_t ranges = std::clamp<std::size_t>(seededLayers / 4096, 1, threads);
  for (std::size_t first = 0; first < pass.hemicubes.size(); first += groupSize) {
    const std::size_t count = std::min(groupSize, pass.hemicubes.size() - first);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      HemicubeSums& sums = scratch.sums.local();
      if (sums.sums.size() != seededLayers) {
        sums.sums.assign(seededLayers, glm::vec4(0.0f));
        sums.touched.assign(seededLayers + 1, 0);
      }
      for (std::size_t h = r.begin(); h != r.end(); ++h) pass.sumHemicube(pass.hemicubes[first + h], sums, results[h]);
    });
    const std::span<const HemicubeResult> done(results.data(), count);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, ranges, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      const std::size_t lo = seededLayers * r.begin() / ranges, hi = seededLayers * r.end() / ranges;
      for (const HemicubeResult& result : done)
        for (const HemicubeResult::LayerMean& m : result.means)
          if (m.layer >= lo && m.layer < hi) store.totals[m.layer].add(m.mean);
    });
    pass.placeMisses(done, static_cast<std::uint32_t>(first));
    for (const HemicubeResult& result : done) {
      stats.droppedSamples += result.dropped;
      stats.splatRecords += result.splats;
    }
  }
}

}  // namespace

void LdcBuilder::checkLengths(std::span<const HemicubeSampleView> hemicubes) const {
  for (std::size_t h = 0; h < hemicubes.size(); ++h) {
    const HemicubeSampleView& hc = hemicubes[h];
    const std::size_t n = hc.positions.size();
    if (hc.normals.size() != n || hc.values.size() != n || hc.footprints.size() != n ||
        (!hc.edgeReaches.empty() && hc.edgeReaches.size() != n))
      throw Error("hemicube " + std::to_string(h) + " has arrays of different lengths (positions " + std::to_string(n) +
                  ", normals " + std::to_string(hc.normals.size()) + ", values " + std::to_string(hc.values.size()) +
                  ", footprints " + std::to_string(hc.footprints.size()) + ", edge reaches " +
                  std::to_string(hc.edgeReaches.size()) + "); every sample needs all four (and a reach, if any has)");
    if (n > std::numeric_limits<std::uint32_t>::max()) throw Error("a hemicube holds at most 2^32-1 samples; split it");
  }
}

void LdcBuilder::insertSamples(std::span<const HemicubeSampleView> hemicubes, bool seedOnly) {
  checkLengths(hemicubes);
  const bool parallel = m_seeded && !seedOnly;
  if (parallel && m_layers->seedOffsets.empty()) indexSeededLayers();
  const int res = m_frame.resolution();
  const int tileSize = sortTileSize(res);
  const InsertionPass pass{m_frame,
                           *m_layers,
                           hemicubes,
                           res,
                           tileSize,
                           (res + tileSize - 1) / tileSize,
                           m_params.epsDistance,
                           1.0f - m_params.epsNormal,
                           kMinSampleAreaPixels * m_frame.pixelSize() * m_frame.pixelSize(),
                           m_kernel,
                           m_seeded,
                           seedOnly,
                           m_deferOpenings,
                           m_firstHemicube + m_stats.hemicubes};
  std::uint64_t samples = 0;
  for (const HemicubeSampleView& hc : hemicubes) samples += hc.size();
  if (seedOnly) {
    m_seeded = true;
    m_stats.seedSamples += samples;
    pass.placeAllShares(m_scratch->splat);
    return;
  }
  m_stats.hemicubes += hemicubes.size();
  m_stats.samples += samples;
  if (!parallel) {  // no seeds: every share's layer depends on the shares before it
    const auto [dropped, splats] = pass.placeAllShares(m_scratch->splat);
    m_stats.droppedSamples += dropped;
    m_stats.splatRecords += splats;
    return;
  }
  insertAfterSeeds(pass, *m_scratch, m_stats);
}

BuilderStats LdcBuilder::stats() const {
  BuilderStats s = m_stats;
  s.layers = m_layers->layers.size();
  return s;
}

LdcBuilder::Planes LdcBuilder::planes() const {
  Planes result;
  result.offsets.resize(static_cast<std::size_t>(m_frame.pixelCount()) + 1);
  forEachLayerInStoreOrder(
      *m_layers, [&](std::uint32_t g) { result.offsets[g] = static_cast<std::uint32_t>(result.planes.size()); },
      [&](std::size_t idx) {
        const BuildLayer& b = m_layers->layers[idx];
        result.planes.emplace_back(b.n, b.d);
      });
  result.offsets.back() = static_cast<std::uint32_t>(result.planes.size());
  return result;
}

LayeredDepthCube LdcBuilder::finalize() const {
  const std::size_t layerCount = m_layers->layers.size();
  if (layerCount >= std::numeric_limits<std::uint32_t>::max())
    throw Error("the LDC holds " + std::to_string(layerCount) +
                " layers, more than 32-bit offsets address; lower the resolution or epsilon");
  std::vector<std::uint32_t> offsets(static_cast<std::size_t>(m_frame.pixelCount()) + 1);
  std::vector<PackedLayer> layers;
  layers.reserve(layerCount);
  // Every layer is kept: one a hemicube made has count ≥ 1, a seeded one that no hemicube reached has 0.
  forEachLayerInStoreOrder(
      *m_layers, [&](std::uint32_t g) { offsets[g] = static_cast<std::uint32_t>(layers.size()); },
      [&](std::size_t idx) {
        const BuildLayer& b = m_layers->layers[idx];
        const LayerTotal& t = m_layers->totals[idx];
        const glm::vec3 total(t.sum);
        layers.push_back(PackedLayer{octEncode(b.n), b.d, total.x, total.y, total.z, t.count});
      });
  offsets.back() = static_cast<std::uint32_t>(layers.size());
  return LayeredDepthCube(m_params, m_stats.hemicubes, std::move(offsets), std::move(layers));
}

LayerSums LdcBuilder::layerSums() const {
  LayeredDepthCube store = finalize();
  std::vector<glm::dvec3> sums;
  sums.reserve(store.layers().size());
  forEachLayerInStoreOrder(
      *m_layers, [](std::uint32_t) {}, [&](std::size_t idx) { sums.push_back(m_layers->totals[idx].sum); });
  return LayerSums(std::move(store), std::move(sums));
}

void LdcBuilder::deferOpenedLayers(std::uint32_t firstHemicube) {
  m_deferOpenings = true;
  m_firstHemicube = std::uint64_t(firstHemicube) - m_stats.hemicubes;
}

std::vector<DeferredOpening> LdcBuilder::deferredOpenings() const { return m_layers->deferred; }

LayerSums openDeferredLayers(const LayerSums& seeded, std::vector<DeferredOpening> openings) {
  auto order = [](const DeferredOpening& x) { return std::tie(x.pixel, x.hemicube, x.sample); };
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
  std::vector<LayerTotal> openedTotals;
  std::size_t next = 0;  // the first record not yet replayed
  for (std::uint32_t g = 0; g + 1 < offsets.size(); ++g) {
    offsets[g] = static_cast<std::uint32_t>(layers.size());
    for (std::uint32_t k = store.offsets()[g]; k < store.offsets()[g + 1]; ++k) {
      layers.push_back(store.layers()[k]);
      sums.push_back(seeded.sums[k]);
    }
    opened.clear();
    openedTotals.clear();
    for (; next < openings.size() && openings[next].pixel == g; ++next) {
      const DeferredOpening& rec = openings[next];
      std::int32_t best = -1;
      float bestDistance = epsDistance;
      for (std::size_t l = 0; l < opened.size(); ++l) {
        const float dist = planeDistance(opened[l].n, opened[l].d, rec.position, rec.normal, minCos);
        if (dist < bestDistance) {
          best = static_cast<std::int32_t>(l);
          bestDistance = dist;
        }
      }
      if (best < 0) {
        best = static_cast<std::int32_t>(opened.size());
        opened.push_back(layerOnPlaneOf(rec.position, rec.normal, true));
        openedTotals.emplace_back();
      }
      addShare(opened[std::size_t(best)], openedTotals[std::size_t(best)], rec.hemicube, rec.area, rec.areaValue);
    }
    for (std::size_t l = 0; l < opened.size(); ++l) {
      flushShares(opened[l], openedTotals[l]);
      const glm::vec3 total(openedTotals[l].sum);
      layers.push_back(
          PackedLayer{octEncode(opened[l].n), opened[l].d, total.x, total.y, total.z, openedTotals[l].count});
      sums.push_back(openedTotals[l].sum);
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
