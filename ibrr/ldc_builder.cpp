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
#include <cstring>
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
// A Gaussian splat: V ⪯ (2·16²/3 + 1/12)·I, so its cut-off box reaches 2·√170.75 < 27 pixels from the centre:
// at most 55 × 55 pixels.
constexpr std::size_t kMaxGaussianPixels = 55 * 55;
// The rows of one band, the parallel pass's unit of work: R/16 rows (at least 4), so an LDI has 16 bands (more
// below R = 64). A band's
// layers with their planes, sums and totals (at R = 256 about 8K layers, 64 bytes each: half a MiB) stay in the
// core's cache while one thread adds every hemicube of a group to them.
int bandRowsFor(int resolution) { return std::max(4, resolution / 16); }
static_assert(kMaxResolution <= (1 << 13), "InsertionPass::bandOf divides rows j < 2^13 by multiplication");
// The samples whose splats wait for the bands at once (about 90 bytes each, 45 MiB): a group of hemicubes is
// closed when it holds this many, so the bands' layers are read from memory once for many hemicubes.
constexpr std::size_t kGroupSamples = std::size_t(1) << 19;

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
// precision so that shares of the hemicubes add to the same sums (ldc.hpp, LayerSums), and their count as a fourth
// double (exact below 2⁵³), so that the parallel pass adds a hemicube's mean (x/w, y/w, z/w, w/w = 1) with two
// vector additions (meanOf, addMean).
struct alignas(32) LayerTotal {
  double values[4] = {0.0, 0.0, 0.0, 0.0};  // Σ B_h per channel, then the count
  void add(const glm::vec3& mean) {
    values[0] += double(mean.x);
    values[1] += double(mean.y);
    values[2] += double(mean.z);
    values[3] += 1.0;
  }
  glm::dvec3 sum() const { return glm::dvec3(values[0], values[1], values[2]); }
  std::uint32_t count() const { return static_cast<std::uint32_t>(values[3]); }
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

// A pixel's seeded planes (up to four) side by side (a structure of arrays in one cache line), so that a sample is
// tested against all four at once (SlotMatches). An unused slot has n = 0 and d = +∞: no sample lies on it.
struct alignas(64) PixelPlanes {
  float nx[4], ny[4], nz[4], d[4];
};

// A sample's plane (p, n) broadcast for SlotMatches, with the matching tolerances.
struct SamplePlane {
#if defined(__SSE2__)
  __m128 px, py, pz, nx, ny, nz, epsDistance, minCos;
  SamplePlane(const glm::vec3& p, const glm::vec3& n, float epsD, float minC)
      : px(_mm_set1_ps(p.x)),
        py(_mm_set1_ps(p.y)),
        pz(_mm_set1_ps(p.z)),
        nx(_mm_set1_ps(n.x)),
        ny(_mm_set1_ps(n.y)),
        nz(_mm_set1_ps(n.z)),
        epsDistance(_mm_set1_ps(epsD)),
        minCos(_mm_set1_ps(minC)) {}
#else
  glm::vec3 p, n;
  float eps = 0.0f, cosine = 0.0f;
  SamplePlane(const glm::vec3& position, const glm::vec3& normal, float epsD, float minC)
      : p(position), n(normal), eps(epsD), cosine(minC) {}
#endif
};

// The slots of a pixel's four planes that a sample lies on: planeDistance's test of each slot in the same float
// operations, a bit a matching slot, and what nearest() needs to choose among several.
struct SlotMatches {
  int bits = 0;
#if defined(__SSE2__)
  __m128 on, dist;  // all bits set in a matching lane; each slot's distance |p·n_l − d_l|
  SlotMatches(const PixelPlanes& planes, const SamplePlane& s) {
    const __m128 nx = _mm_load_ps(planes.nx), ny = _mm_load_ps(planes.ny), nz = _mm_load_ps(planes.nz);
    const __m128 cosine = _mm_add_ps(_mm_add_ps(_mm_mul_ps(s.nx, nx), _mm_mul_ps(s.ny, ny)), _mm_mul_ps(s.nz, nz));
    const __m128 along = _mm_add_ps(_mm_add_ps(_mm_mul_ps(s.px, nx), _mm_mul_ps(s.py, ny)), _mm_mul_ps(s.pz, nz));
    const __m128 absMask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    dist = _mm_and_ps(_mm_sub_ps(along, _mm_load_ps(planes.d)), absMask);
    on = _mm_and_ps(_mm_cmpgt_ps(cosine, s.minCos), _mm_cmplt_ps(dist, s.epsDistance));
    bits = _mm_movemask_ps(on);
  }
#else
  float dist[4];  // each slot's planeDistance (+∞ where the normals differ)
  SlotMatches(const PixelPlanes& planes, const SamplePlane& s) {
    for (int k = 0; k < 4; ++k) {
      dist[k] = planeDistance(glm::vec3(planes.nx[k], planes.ny[k], planes.nz[k]), planes.d[k], s.p, s.n, s.cosine);
      if (dist[k] < s.eps) bits |= 1 << k;
    }
  }
#endif

  // The nearest matching slot (0–3), the first of equally near ones as the loop over the planes gives; -1 for none.
  int nearest(const SamplePlane& s) const {
    if (bits == 0) return -1;
    // One plane within ε, as for most shares (a pixel's other layers lie far off the sample's plane): the nearest.
    if ((bits & (bits - 1)) == 0) return __builtin_ctz(static_cast<unsigned>(bits));
#if defined(__SSE2__)
    const __m128 candidates = _mm_or_ps(_mm_and_ps(on, dist), _mm_andnot_ps(on, s.epsDistance));
    __m128 least = _mm_min_ps(candidates, _mm_shuffle_ps(candidates, candidates, _MM_SHUFFLE(2, 3, 0, 1)));
    least = _mm_min_ps(least, _mm_shuffle_ps(least, least, _MM_SHUFFLE(1, 0, 3, 2)));
    return __builtin_ctz(static_cast<unsigned>(_mm_movemask_ps(_mm_and_ps(on, _mm_cmpeq_ps(candidates, least)))));
#else
    int best = -1;
    float bestDistance = s.eps;
    for (int k = 0; k < 4; ++k)
      if (dist[k] < bestDistance) {
        best = k;
        bestDistance = dist[k];
      }
    return best;
#endif
  }
};

// One row's run of pixels a splat covers.
struct PixelRun {
  std::int16_t j = 0, first = 0, last = 0;  // row, first and last column
};

// Runs of pixels, appended splat by splat: room for a splat's runs is made before it (makeRoom), so that appending
// a run is a store and an increment.
class RunList {
public:
  void clear() { m_size = 0; }
  void makeRoom(std::size_t runs) {
    if (m_runs.size() < m_size + runs) m_runs.resize(std::max(2 * m_runs.size(), m_size + runs));
  }
  void push(const PixelRun& run) { m_runs.data()[m_size++] = run; }
  PixelRun& back() { return m_runs.data()[m_size - 1]; }
  std::size_t size() const { return m_size; }
  const PixelRun* data() const { return m_runs.data(); }
  const PixelRun* begin() const { return m_runs.data(); }
  const PixelRun* end() const { return m_runs.data() + m_size; }

private:
  std::vector<PixelRun> m_runs;  // its size is the room; the first m_size are the list
  std::size_t m_size = 0;
};

// A sample's splat is its runs of pixels, row by row (rows ascending, runs left to right), and each pixel's share
// of the sample's area. For the box kernel every pixel's share is the same, `boxShare` = A/W; for the Gaussian one
// a list holds them, run by run.
struct SplatShape {
  float boxShare = 0.0f;
  std::uint32_t pixels = 0;
  std::uint32_t runs = 0;
};

// Room for one splat: its runs, its shares (Gaussian kernel) and the Gaussian rasteriser's output.
struct SplatBuffer {
  RunList runs;
  std::vector<float> shares;
  std::vector<glm::vec3> weighted;  // (i, j, kernel weight)
  SplatBuffer() {
    shares.reserve(kMaxGaussianPixels);
    weighted.reserve(kMaxGaussianPixels);
  }
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
  // The seeded planes of each pixel of at most four, for the test of four at once.
  std::vector<PixelPlanes> pixelPlanes;
};

// A share (a·E, a), or a layer's sums of shares (Σ a·E, Σ a): one vector addition a share with SSE2, the same
// float additions as glm's otherwise.
struct alignas(16) ShareSums {
#if defined(__SSE2__)
  __m128 v = _mm_setzero_ps();
  ShareSums() = default;
  ShareSums(const glm::vec3& value, float a) : v(_mm_setr_ps(a * value.x, a * value.y, a * value.z, a)) {}
  // (a·x, a·y, a·z, a·w): a share (a·E, a) from (E, 1), in the products of the constructor above.
  ShareSums scaled(float a) const {
    ShareSums result;
    result.v = _mm_mul_ps(_mm_set1_ps(a), v);
    return result;
  }
  void add(const ShareSums& share) { v = _mm_add_ps(v, share.v); }
  glm::vec4 get() const {
    glm::vec4 out;
    _mm_storeu_ps(&out.x, v);
    return out;
  }
#else
  glm::vec4 v{0.0f};
  ShareSums() = default;
  ShareSums(const glm::vec3& value, float a) : v(a * value, a) {}
  ShareSums scaled(float a) const {
    ShareSums result;
    result.v = a * v;
    return result;
  }
  void add(const ShareSums& share) { v += share.v; }
  glm::vec4 get() const { return v; }
#endif
  glm::vec3 areaValue() const { return glm::vec3(get()); }
  float area() const { return get().w; }
  glm::vec3 mean() const { return areaValue() / area(); }  // B_h = Σ a·E / Σ a
};

// The mean of a layer's sums of shares (Σ a > 0), (B_h, 1) = (Σ a·E / Σ a, Σ a / Σ a): ShareSums::mean()'s float
// divisions, four lanes at once with SSE2.
inline ShareSums meanOf(const ShareSums& sums) {
  ShareSums mean;
#if defined(__SSE2__)
  mean.v = _mm_div_ps(sums.v, _mm_shuffle_ps(sums.v, sums.v, _MM_SHUFFLE(3, 3, 3, 3)));  // w/w = 1
#else
  mean.v = glm::vec4(sums.mean(), 1.0f);
#endif
  return mean;
}

// Adds a hemicube's mean (meanOf) to a layer's total: LayerTotal::add, the same double additions, two lanes at once
// with SSE2.
inline void addMean(const ShareSums& mean, LayerTotal& total) {
#if defined(__SSE2__)
  _mm_store_pd(total.values, _mm_add_pd(_mm_load_pd(total.values), _mm_cvtps_pd(mean.v)));
  _mm_store_pd(total.values + 2,
               _mm_add_pd(_mm_load_pd(total.values + 2), _mm_cvtps_pd(_mm_movehl_ps(mean.v, mean.v))));
#else
  total.add(glm::vec3(mean.v));
#endif
}

// A sample of the parallel pass, splatted (InsertionPass::splatHemicube): its plane, its value and its splat.
struct SplatRecord {
  // Box kernel: the share (a·E, a) every pixel of the splat takes, a = SplatShape::boxShare; Gaussian: (E, 1),
  // which each pixel's share a of HemicubeSplats::shares scales (ShareSums::scaled).
  ShareSums share;
  glm::vec3 p{0.0f};
  glm::vec3 n{0.0f};
  std::uint32_t firstRun = 0;    // into HemicubeSplats::runs
  std::uint32_t firstShare = 0;  // Gaussian kernel: into HemicubeSplats::shares
  std::uint32_t sample = 0;      // its index in the hemicube
  std::uint16_t runCount = 0;
  std::int16_t ownI = 0, ownJ = 0;  // the pixel containing p
  std::uint8_t ldi = 0;
};

// One hemicube's samples, splatted, by band: the records of the samples whose own pixel lies in band b are
// records[ownStart[b] .. ownStart[b+1]) (in sample order), and the records of other bands whose rows reach into
// b are reaching[reachingStart[b] .. reachingStart[b+1]) (by their band, then sample order). So a band reads its
// records from one stretch of memory, and the runs lie in the records' order.
struct HemicubeSplats {
  std::vector<SplatRecord> records;
  RunList runs;
  std::vector<float> shares;
  std::vector<std::uint32_t> ownStart;
  std::vector<std::uint32_t> reachingStart;
  std::vector<std::uint32_t> reaching;
  std::uint64_t dropped = 0;
  std::uint64_t splats = 0;
};

// A thread's buffers for splatting one hemicube: its warped samples, their order by band and the counting sort's
// next slot of each band.
struct HemicubeScratch {
  SplatBuffer splat;
  std::vector<WarpedSample> warped;
  std::vector<std::uint32_t> order;
  std::vector<std::uint32_t> next;
  // The hemicube pass (InsertionPass::sumHemicube): the records whose splats reach beyond their own band, and
  // their runs.
  std::vector<SplatRecord> reaching;
  RunList reachingRuns;
};

// The reached flags (BandSums::reached) that the hemicube means read at once, as one 64-bit word.
constexpr std::uint32_t kReachedChunk = 64;

// A bit for each of a chunk's kReachedChunk flag bytes that is set (BandSums::reached).
inline std::uint64_t reachedBits(const std::uint8_t* flags) {
#if defined(__SSE2__)
  std::uint64_t unset = 0;
  for (std::uint32_t k = 0; k < kReachedChunk / 16; ++k) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(flags + 16 * k));
    unset |= std::uint64_t(std::uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_setzero_si128())))) << (16 * k);
  }
  return ~unset;
#else
  std::uint64_t bits = 0;
  for (std::uint32_t k = 0; k < kReachedChunk; ++k) bits |= std::uint64_t(flags[k] != 0) << k;
  return bits;
#endif
}

// A thread's sums over the band it is adding a hemicube to: (Σ a·E, Σ a) per layer of the band, zero where the
// hemicube has not reached it, and a flag byte for every layer (band-local index), set where it reached it.
struct BandSums {
  std::vector<ShareSums> sums;
  // A byte a layer of the band, in whole chunks of kReachedChunk: 1 where the hemicube added a share to it. A byte
  // is one store a share where a bit was four instructions; the means read a chunk's 64 flags as one word (four
  // SSE2 compares), so that their loop over the set ones ends, and mispredicts, once every 64 layers.
  std::vector<std::uint8_t> reached;
};

// A share of a sample's own pixel that matched no seeded layer: the ordered pass opens or joins a layer with it.
struct OwnPixelMiss {
  std::uint32_t pixel = 0;     // global LDI pixel
  std::uint32_t hemicube = 0;  // within the insert() call
  std::uint32_t sample = 0;    // within its hemicube
  glm::vec3 position{0.0f};    // the sample's plane
  glm::vec3 normal{0.0f};
  glm::vec3 areaValue{0.0f};  // a·E
  float area = 0.0f;          // a
};

// What one hemicube leaves after the hemicube pass (InsertionPass::sumHemicube): each layer it reached and the
// hemicube's mean there, (B_h, 1), in layer order, to be added to the totals in hemicube order; its own-pixel shares
// that no seeded layer took, in sample order; and its counts.
struct HemicubeMeans {
  std::vector<std::uint32_t> layers;
  std::vector<ShareSums> means;
  std::vector<OwnPixelMiss> misses;
  std::uint64_t dropped = 0, splats = 0;
};

struct LdcBuilder::Scratch {
  std::vector<HemicubeMeans> means;               // the hemicube pass: one a hemicube of the call
  std::vector<HemicubeSplats> splats;             // the group's hemicubes
  std::vector<std::vector<OwnPixelMiss>> misses;  // one list a band
  tbb::enumerable_thread_specific<HemicubeScratch> buffers;
  tbb::enumerable_thread_specific<BandSums> bandSums;
  SplatBuffer splat;  // the ordered pass's
};

namespace {

// One insert() or seedLayers() call: its samples, the store's frame and parameters, and the passes over them.
struct InsertionPass {
  const LdcFrame& frame;
  LdcBuilder::Layers& store;
  std::span<const HemicubeSampleView> hemicubes;
  int res = 0;
  int bandRows = 0, bandsPerLdi = 0;  // the rows of one band of the parallel pass, and an LDI's bands
  // ⌈2³²/bandRows⌉: j / bandRows = (j·bandRowInverse) >> 32 exactly for every row j < 2¹³ (the error term
  // j·(bandRowInverse·bandRows − 2³²)/2³² stays below 1/bandRows), a multiplication where a division cost ~25 cycles
  // and bandOf runs several times a sample.
  std::uint64_t bandRowInverse = 0;
  float epsDistance = 0.0f, minCos = 0.0f, minArea = 0.0f;
  SplatKernel kernel = SplatKernel::Box;
  bool seeded = false;              // the geometry seeded the layers before this call
  bool seedOnly = false;            // this call seeds them
  bool deferring = false;           // LdcBuilder::deferOpenedLayers
  std::uint64_t firstHemicube = 0;  // the bake's index of this call's first hemicube

  // The runs of a box splat set up as `raster`, appended to `runs`, and its shape: every weight is 1, so W is the
  // pixel count and each pixel's share of the sample's `area` is A/W.
  static SplatShape boxSplat(const SplatRaster& raster, float area, RunList& runs) {
    const std::size_t firstRun = runs.size();
    std::uint32_t pixels = 0;
    runs.makeRoom(2 * std::size_t(raster.j1 - raster.j0 + 1));  // rasterBoxRuns: one or two runs a row
    rasterBoxRuns(raster, [&](int j, int iFirst, int iLast) {
      runs.push(PixelRun{std::int16_t(j), std::int16_t(iFirst), std::int16_t(iLast)});
      pixels += static_cast<std::uint32_t>(iLast - iFirst + 1);
    });
    return SplatShape{area / static_cast<float>(pixels), pixels, std::uint32_t(runs.size() - firstRun)};
  }

  // The splat of a sample whose box splat covers its own pixel alone (boxCoversOwnPixelOnly): W = 1.
  SplatShape ownPixelSplat(const WarpedSample& s, RunList& runs) const {
    runs.makeRoom(1);
    runs.push(PixelRun{std::int16_t(s.ownJ), std::int16_t(s.ownI), std::int16_t(s.ownI)});
    return SplatShape{std::max(s.area, minArea), 1, 1};
  }

  // Rasterises sample s's splat (a sample of the hemicube centred at `hemicubeCentre`): appends its runs of pixels
  // to `runs` and, for the Gaussian kernel, each pixel's share a = w·A/W of the sample's area to `shares`
  // (ldc_builder.hpp), W summed in the rasteriser's order; `weighted` is the Gaussian rasteriser's scratch.
  SplatShape splatSample(const glm::vec3& hemicubeCentre, const WarpedSample& s, RunList& runs,
                         std::vector<float>& shares, std::vector<glm::vec3>& weighted) const {
    runs.makeRoom(1);
    const std::size_t firstRun = runs.size();
    const glm::vec3& reach = s.reach;
    const float area = std::max(s.area, minArea);
    if (kernel == SplatKernel::Box && reach == glm::vec3(0.0f) &&
        boxCoversOwnPixelOnly(frame, s.p, s.n, hemicubeCentre, s.area, s.centre))
      return ownPixelSplat(s, runs);
    const SplatFootprint fp = splatFootprint(frame, s.ldi, s.p, s.n, hemicubeCentre, std::max(s.area, 0.0f), reach);
    const SplatRaster raster = prepareSplat(fp, kernel, res);
    if (kernel == SplatKernel::Box) return boxSplat(raster, area, runs);
    weighted.clear();
    float weightSum = 0.0f;
    rasterSplat(raster, kernel, [&](int i, int j, float w) {
      weighted.emplace_back(static_cast<float>(i), static_cast<float>(j), w);
      weightSum += w;
    });
    const float areaScale = area / weightSum;  // A/W
    runs.makeRoom(weighted.size());            // at most a run a pixel
    for (const glm::vec3& q : weighted) {
      const auto i = static_cast<std::int16_t>(q.x), j = static_cast<std::int16_t>(q.y);
      if (runs.size() == firstRun || runs.back().j != j || runs.back().last + 1 != i)
        runs.push(PixelRun{j, i, i});
      else
        runs.back().last = i;
      shares.push_back(q.z * areaScale);
    }
    return SplatShape{0.0f, std::uint32_t(weighted.size()), std::uint32_t(runs.size() - firstRun)};
  }

  // Calls share(i, j, a) for every pixel (i, j) of sample s's splat, row by row, with the pixel's share a of the
  // sample's area (splatSample); returns the pixel count.
  template <class Share>
  std::size_t forEachShare(const glm::vec3& hemicubeCentre, const WarpedSample& s, SplatBuffer& buffer,
                           Share&& share) const {
    buffer.runs.clear();
    buffer.shares.clear();
    const SplatShape shape = splatSample(hemicubeCentre, s, buffer.runs, buffer.shares, buffer.weighted);
    std::size_t k = 0;
    for (const PixelRun& run : buffer.runs)
      for (int i = run.first; i <= run.last; ++i, ++k)
        share(i, int(run.j), kernel == SplatKernel::Box ? shape.boxShare : buffer.shares[k]);
    return shape.pixels;
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

  // The band of LDI `ldi` that row j lies in.
  int bandOf(int ldi, int j) const {
    return ldi * bandsPerLdi + static_cast<int>((static_cast<std::uint64_t>(j) * bandRowInverse) >> 32);
  }

  // The box splats of warped samples first … first + 3 of `count` (sampleAt(r) is sample r) set up at once; the
  // lanes past the last sample repeat it.
  template <class SampleAt>
  BoxSplatsOfFour prepareFourBoxSplats(const glm::vec3& hemicubeCentre, std::size_t count, std::size_t first,
                                       SampleAt&& sampleAt) const {
    BoxSplatLanes lanes;
    for (int k = 0; k < 4; ++k) {
      const WarpedSample& s = sampleAt(std::min(first + std::size_t(k), count - 1));  // past the end: a copy
      lanes.px[k] = s.p.x;
      lanes.py[k] = s.p.y;
      lanes.pz[k] = s.p.z;
      lanes.nx[k] = s.n.x;
      lanes.ny[k] = s.n.y;
      lanes.nz[k] = s.n.z;
      lanes.area[k] = s.area;
      lanes.centreX[k] = s.centre.x;
      lanes.centreY[k] = s.centre.y;
      lanes.ldi[k] = s.ldi;
      lanes.reachX[k] = s.reach.x;
      lanes.reachY[k] = s.reach.y;
      lanes.reachZ[k] = s.reach.z;
    }
    return prepareBoxSplats(frame, hemicubeCentre, lanes);
  }

  // Warps every sample of hc into scratch.warped, in sample order; returns the samples dropped.
  std::uint64_t warpHemicube(const HemicubeSampleView& hc, HemicubeScratch& scratch) const {
    scratch.warped.clear();
    WarpedSample s;
    for (std::uint32_t k = 0; k < hc.size(); ++k)
      if (warpSample(frame, hc, k, s)) scratch.warped.push_back(s);
    return hc.size() - scratch.warped.size();
  }

  // The splat of warped sample ws, lane `lane` of the box splats set up four at a time (`four`), appended to runs
  // (and shares, Gaussian kernel): set up alone where the lane is off the common path or the kernel is Gaussian.
  SplatShape splatOf(const glm::vec3& hemicubeCentre, const WarpedSample& ws, const BoxSplatsOfFour& four, int lane,
                     RunList& runs, std::vector<float>& shares, std::vector<glm::vec3>& weighted) const {
    if (kernel != SplatKernel::Box || (four.oneByOne >> lane & 1))
      return splatSample(hemicubeCentre, ws, runs, shares, weighted);
    if (four.ownPixelOnly >> lane & 1) return ownPixelSplat(ws, runs);
    return boxSplat(four.rasters[lane], std::max(ws.area, minArea), runs);
  }

  // A record's plane, share, pixel and run count from its warped sample and splat (not where its runs lie).
  void fillRecord(SplatRecord& rec, const WarpedSample& ws, const SplatShape& shape) const {
    rec.p = ws.p;
    rec.n = ws.n;
    rec.share = kernel == SplatKernel::Box ? ShareSums(ws.value, shape.boxShare) : ShareSums(ws.value, 1.0f);
    rec.sample = ws.sample;
    rec.runCount = static_cast<std::uint16_t>(shape.runs);
    rec.ownI = static_cast<std::int16_t>(ws.ownI);
    rec.ownJ = static_cast<std::int16_t>(ws.ownJ);
    rec.ldi = static_cast<std::uint8_t>(ws.ldi);
  }

  // The parallel pass's first step for one hemicube (after seeding): its samples warped, ordered by the band of
  // their own pixel (a stable counting sort) and splatted into `out` in that order; then the records each band
  // reaches beyond its own.
  void splatHemicube(const HemicubeSampleView& hc, HemicubeScratch& scratch, HemicubeSplats& out) const {
    const auto bands = static_cast<std::size_t>(3 * bandsPerLdi);
    out.dropped = warpHemicube(hc, scratch);
    out.ownStart.assign(bands + 1, 0);
    for (const WarpedSample& s : scratch.warped) ++out.ownStart[std::size_t(bandOf(s.ldi, s.ownJ)) + 1];
    for (std::size_t b = 1; b <= bands; ++b) out.ownStart[b] += out.ownStart[b - 1];
    scratch.order.resize(scratch.warped.size());
    scratch.next.assign(out.ownStart.begin(), out.ownStart.end() - 1);
    for (std::uint32_t w = 0; w < scratch.warped.size(); ++w) {
      const WarpedSample& ws = scratch.warped[w];
      scratch.order[scratch.next[std::size_t(bandOf(ws.ldi, ws.ownJ))]++] = w;
    }
    out.records.resize(scratch.warped.size());
    out.runs.clear();
    out.shares.clear();
    out.splats = 0;
    out.reachingStart.assign(bands + 2, 0);  // counts at [b + 2], so that the fill leaves reachingStart[b] at b's start
    // In record order, so the runs lie in it; a box splat's set-up four samples at once (prepareBoxSplats).
    BoxSplatsOfFour four;
    for (std::size_t r = 0; r < scratch.order.size(); ++r) {
      const WarpedSample& ws = scratch.warped[scratch.order[r]];
      SplatRecord& rec = out.records[r];
      rec.firstRun = static_cast<std::uint32_t>(out.runs.size());
      rec.firstShare = static_cast<std::uint32_t>(out.shares.size());
      const int lane = int(r % 4);
      if (kernel == SplatKernel::Box && lane == 0)
        four = prepareFourBoxSplats(hc.centre, scratch.order.size(), r,
                                    [&](std::size_t k) -> const WarpedSample& { return scratch.warped[scratch.order[k]]; });
      const SplatShape shape = splatOf(hc.centre, ws, four, lane, out.runs, out.shares, scratch.splat.weighted);
      fillRecord(rec, ws, shape);
      out.splats += shape.pixels;
      forEachReachedBand(rec, out.runs.data(), [&](int b) { ++out.reachingStart[std::size_t(b) + 2]; });
    }
    for (std::size_t b = 2; b < out.reachingStart.size(); ++b) out.reachingStart[b] += out.reachingStart[b - 1];
    out.reaching.resize(out.reachingStart.back());
    for (std::uint32_t r = 0; r < out.records.size(); ++r)
      forEachReachedBand(out.records[r], out.runs.data(),
                         [&](int b) { out.reaching[out.reachingStart[std::size_t(b) + 1]++] = r; });
    out.reachingStart.pop_back();
  }

  // The ordered pass's record of a share `add` of a record's own pixel g that no seeded layer took.
  static OwnPixelMiss missOf(std::uint32_t g, std::uint32_t hemicube, const SplatRecord& rec, const ShareSums& add) {
    return OwnPixelMiss{g, hemicube, rec.sample, rec.p, rec.n, add.areaValue(), add.area()};
  }

  // Calls f(b) for every band other than its own that a record's rows reach (its runs from allRuns[rec.firstRun]).
  template <class F>
  void forEachReachedBand(const SplatRecord& rec, const PixelRun* allRuns, F&& f) const {
    const PixelRun* const runs = allRuns + rec.firstRun;
    const int own = bandOf(rec.ldi, rec.ownJ);
    for (int b = bandOf(rec.ldi, runs[0].j), last = bandOf(rec.ldi, runs[rec.runCount - 1].j); b <= last; ++b)
      if (b != own) f(b);
  }

  // What one thread adds a band's shares to (sumBand): the band's rows [jBegin, jEnd) of one LDI, its layers
  // [firstLayer, …) and their sums, and the seed index.
  struct BandTarget {
    ShareSums* sums = nullptr;
    std::uint8_t* reached = nullptr;
    const std::uint32_t* offsets = nullptr;
    const PixelPlanes* pixelPlanes = nullptr;
    std::uint32_t firstLayer = 0, ldiBase = 0;
    int jBegin = 0, jEnd = 0;
  };

  // Adds the shares of one record's pixels in the band's rows (kBox: every pixel takes rec.share; otherwise each
  // its own, scaled from allShares, HemicubeSplats::shares), listing the record's own pixel in `misses` if it matched
  // no seeded layer; its runs are allRuns[rec.firstRun …]. `guess` is the slot the previous share took, tried first
  // (below), and updated.
  template <bool kBox>
  void addRecordShares(const SplatRecord& rec, const PixelRun* allRuns, const float* allShares, std::uint32_t hemicube,
                       const BandTarget& band, int& guess, std::vector<OwnPixelMiss>& misses) const {
    const SamplePlane plane(rec.p, rec.n, epsDistance, minCos);
    const PixelRun* const runs = allRuns + rec.firstRun;
    const std::uint32_t ownPixel = band.ldiBase + std::uint32_t(rec.ownJ * res + rec.ownI);
    const float* shares = kBox ? nullptr : allShares + rec.firstShare;  // the run's first pixel's
    for (std::uint32_t r = 0; r < rec.runCount; ++r) {
      const PixelRun run = runs[r];
      if (run.j < band.jBegin || run.j >= band.jEnd) {
        if (!kBox) shares += run.last - run.first + 1;
        continue;
      }
      const std::uint32_t first = band.ldiBase + std::uint32_t(run.j * res + run.first);
      const std::uint32_t end = first + std::uint32_t(run.last - run.first + 1);
      for (std::uint32_t g = first; g != end; ++g) {
        g = addWhileGuessed<kBox>(g, first, end, guess, rec.share, shares, plane, band);
        if (g == end) break;
        // Pixel g's planes do not give the guessed slot alone: the nearest of its slots, or of its whole list.
        const ShareSums add = kBox ? rec.share : rec.share.scaled(shares[g - first]);
        const int slot = SlotMatches(band.pixelPlanes[g], plane).nearest(plane);  // -1 for more than four layers
        if (slot >= 0) guess = slot;
        addPixelShare(g, band.offsets[g], band.offsets[g + 1], slot, rec, add, ownPixel, hemicube, band, misses);
      }
      if (!kBox) shares += end - first;
    }
  }

  // Adds a record's share to the layer in slot `guess` of pixels g, g + 1, … of a run [first, end) while the sample
  // lies on that slot alone (the box kernel's `share` for every pixel, or the Gaussian's scaled by the run's
  // `shares`), and returns the first pixel where it does not, or end. The slot the previous share took is tried
  // first: a run mostly lies on one surface, in the same slot of pixel after pixel. Branching on it, rather than
  // adding at a slot worked out from the test, lets the sums' address go ahead of the plane test, which each share
  // otherwise waited on. A leaf function without calls, so that the sample's plane stays in registers (every xmm
  // register is caller-saved: a call in the loop spilled them all).
  template <bool kBox>
  static std::uint32_t addWhileGuessed(std::uint32_t g, std::uint32_t first, std::uint32_t end, int guess,
                                       const ShareSums& share, const float* shares, const SamplePlane& plane,
                                       const BandTarget& band) {
    // Walked by pointer, so that a pixel costs no index arithmetic.
    const std::uint32_t* offset = band.offsets + g;
    const PixelPlanes* planes = band.pixelPlanes + g;
    const PixelPlanes* const planesEnd = band.pixelPlanes + end;
    ShareSums* const sums = band.sums;
    std::uint8_t* const reached = band.reached;
    const std::uint32_t slotInBand = std::uint32_t(guess) - band.firstLayer;  // + the pixel's first layer
    const int guessedBits = 1 << guess;
    for (; planes != planesEnd; ++planes, ++offset) {
      if (SlotMatches(*planes, plane).bits != guessedBits) break;
      const std::uint32_t local = *offset + slotInBand;
      sums[local].add(kBox ? share : share.scaled(shares[offset - band.offsets - first]));
      reached[local] = 1;
    }
    return std::uint32_t(planes - band.pixelPlanes);
  }

  // Adds the share of a record whose splat is its own pixel alone (ownPixelSplat) to the pixel, as addRecordShares
  // would, or lists it in `misses`; `band` is the whole store's (firstLayer 0).
  void addOwnPixelShare(const SplatRecord& rec, std::uint32_t hemicube, const BandTarget& band, int& guess,
                        std::vector<OwnPixelMiss>& misses) const {
    const std::uint32_t g = frame.globalPixel(rec.ldi, rec.ownI, rec.ownJ);
    const SamplePlane plane(rec.p, rec.n, epsDistance, minCos);
    const int slot = SlotMatches(band.pixelPlanes[g], plane).nearest(plane);  // -1 for more than four layers
    if (slot >= 0) guess = slot;
    addPixelShare(g, band.offsets[g], band.offsets[g + 1], slot, rec, rec.share, g, hemicube, band, misses);
  }

  // Adds a record's share `add` to pixel g, whose layers are lo … hi: to the layer in `slot` of its four planes, or
  // for a pixel of more than four, to the nearest its whole list gives. A share of the record's own pixel that
  // matches none is listed in `misses`.
  void addPixelShare(std::uint32_t g, std::uint32_t lo, std::uint32_t hi, int slot, const SplatRecord& rec,
                     const ShareSums& add, std::uint32_t ownPixel, std::uint32_t hemicube, const BandTarget& band,
                     std::vector<OwnPixelMiss>& misses) const {
    const std::int32_t layer =
        hi - lo <= 4 ? (slot < 0 ? -1 : std::int32_t(lo) + slot) : nearestSeededLayer(g, rec.p, rec.n);
    if (layer < 0) {
      if (g == ownPixel) misses.push_back(missOf(g, hemicube, rec, add));
      return;
    }
    addToLayer(std::uint32_t(layer) - band.firstLayer, add, band);
  }

  // Points `band` at the rows of band `bandIndex`: their LDI and rows [jBegin, jEnd).
  void setBandRows(BandTarget& band, int bandIndex) const {
    band.jBegin = (bandIndex % bandsPerLdi) * bandRows;
    band.jEnd = std::min(res, band.jBegin + bandRows);
    band.ldiBase = static_cast<std::uint32_t>(bandIndex / bandsPerLdi) * frame.pixelsPerLdi();
  }

  // Adds a share to the band's layer `local` (numbered from the band's first) and marks it reached.
  static void addToLayer(std::uint32_t local, const ShareSums& add, const BandTarget& band) {
    band.sums[local].add(add);
    band.reached[local] = 1;
  }

  // Each layer a hemicube reached adds the hemicube's mean, in layer order (so the totals are read front to back),
  // and its sums are cleared for the next.
  void addHemicubeMeans(const BandTarget& band, std::uint32_t reachedChunks) const {
    LayerTotal* const totals = store.totals.data() + band.firstLayer;
    takeReached(band, reachedChunks, [&](std::uint32_t local, const ShareSums& sums) {
      addMean(meanOf(sums), totals[local]);
    });
  }

  // Calls take(local, sums) for each layer of the band that the hemicube reached, in layer order, and clears its
  // sums and flag for the next hemicube.
  template <class Take>
  static void takeReached(const BandTarget& band, std::uint32_t reachedChunks, Take&& take) {
    ShareSums* const sums = band.sums;  // locals: the sums' stores could otherwise alias the pointers
    for (std::uint32_t chunk = 0; chunk < reachedChunks; ++chunk) {
      std::uint8_t* const flags = band.reached + std::size_t(chunk) * kReachedChunk;
      for (std::uint64_t bits = reachedBits(flags); bits != 0; bits &= bits - 1) {
        const std::uint32_t local = kReachedChunk * chunk + std::uint32_t(__builtin_ctzll(bits));
        take(local, sums[local]);
        sums[local] = ShareSums();
      }
      std::memset(flags, 0, kReachedChunk);
    }
  }

  // Sizes a thread's sums for `layers` layers (zero, as after every hemicube) and points `band` at them: the
  // band's layers from `firstLayer`, in chunks of reached flags (returned).
  static std::uint32_t prepareSums(BandSums& scratch, std::uint32_t firstLayer, std::uint32_t layers,
                                   BandTarget& band) {
    const std::uint32_t reachedChunks = (layers + kReachedChunk - 1) / kReachedChunk;
    if (scratch.sums.size() < layers) scratch.sums.assign(layers, ShareSums());
    if (scratch.reached.size() < std::size_t(reachedChunks) * kReachedChunk)
      scratch.reached.assign(std::size_t(reachedChunks) * kReachedChunk, 0);
    band.sums = scratch.sums.data();
    band.reached = scratch.reached.data();
    band.firstLayer = firstLayer;
    return reachedChunks;
  }

  // The parallel pass's second step for one band: every hemicube of the group in order, its records' shares in
  // the band's rows in sample order. A share that lies on a seeded layer adds to the layer's sums; a share of the
  // sample's own pixel that lies on none is listed in `misses` for the ordered pass, and spill that lies on none
  // is dropped. When a hemicube is done, each layer it reached adds the hemicube's mean to its total: every sum is
  // formed in sample order and every total in hemicube order, whichever thread takes the band.
  template <bool kBox>
  void sumBand(int bandIndex, std::span<const HemicubeSplats> group, BandSums& scratch,
               std::vector<OwnPixelMiss>& misses) const {
    const auto b = std::size_t(bandIndex);
    BandTarget band;
    setBandRows(band, bandIndex);
    const std::uint32_t firstLayer = store.seedOffsets[band.ldiBase + std::uint32_t(band.jBegin * res)];
    const std::uint32_t endLayer = store.seedOffsets[band.ldiBase + std::uint32_t(band.jEnd * res)];
    const std::uint32_t reachedChunks = prepareSums(scratch, firstLayer, endLayer - firstLayer, band);
    band.offsets = store.seedOffsets.data();
    band.pixelPlanes = store.pixelPlanes.data();
    int guess = 0;  // the slot the last share took (addRecordShares)
    for (std::uint32_t h = 0; h < group.size(); ++h) {
      const HemicubeSplats& hs = group[h];
      for (std::uint32_t r = hs.ownStart[b]; r < hs.ownStart[b + 1]; ++r)
        addRecordShares<kBox>(hs.records[r], hs.runs.data(), hs.shares.data(), h, band, guess, misses);
      for (std::uint32_t k = hs.reachingStart[b]; k < hs.reachingStart[b + 1]; ++k)
        addRecordShares<kBox>(hs.records[hs.reaching[k]], hs.runs.data(), hs.shares.data(), h, band, guess, misses);
      addHemicubeMeans(band, reachedChunks);
    }
  }

  // The hemicube pass (insertIntoSmallStore) for hemicube `hemicube` of the call, on one thread, with the box kernel:
  // every sample warped, its splat set up and its shares added to `sums`, the whole store's, in the order in which
  // the band pass adds them, so that the store is the same byte for byte: first, in sample order, each sample's
  // shares in the rows of its own band, where no other band's sample adds; then the shares that reach beyond their
  // band, by the sample's band and then in sample order, as a band takes its reaching records after its own. Then
  // the hemicube's mean of every layer it reached goes to `out`.
  void sumHemicube(std::uint32_t hemicube, const HemicubeSampleView& hc, HemicubeScratch& scratch, BandSums& sums,
                   HemicubeMeans& out) const {
    out.dropped = warpHemicube(hc, scratch);
    out.splats = 0;
    out.misses.clear();
    scratch.reaching.clear();
    scratch.reachingRuns.clear();
    BandTarget band;
    const std::uint32_t reachedChunks = prepareSums(sums, 0, store.seedOffsets.back(), band);
    band.offsets = store.seedOffsets.data();
    band.pixelPlanes = store.pixelPlanes.data();
    const std::size_t count = scratch.warped.size();
    auto warpedAt = [&](std::size_t k) -> const WarpedSample& { return scratch.warped[k]; };
    RunList& runs = scratch.splat.runs;
    BoxSplatsOfFour four;
    int guess = 0;
    for (std::size_t r = 0; r < count; ++r) {
      const WarpedSample& ws = scratch.warped[r];
      const int lane = int(r % 4);
      if (lane == 0) four = prepareFourBoxSplats(hc.centre, count, r, warpedAt);
      SplatRecord rec;
      if (four.ownPixelOnly >> lane & 1) {  // the own pixel alone (ownPixelSplat), without runs or band rows
        fillRecord(rec, ws, SplatShape{std::max(ws.area, minArea), 1, 1});
        addOwnPixelShare(rec, hemicube, band, guess, out.misses);
        ++out.splats;
        continue;
      }
      runs.clear();
      const SplatShape shape = splatOf(hc.centre, ws, four, lane, runs, scratch.splat.shares, scratch.splat.weighted);
      fillRecord(rec, ws, shape);
      out.splats += shape.pixels;
      setBandRows(band, bandOf(ws.ldi, ws.ownJ));
      addRecordShares<true>(rec, runs.data(), nullptr, hemicube, band, guess, out.misses);
      if (runs.data()[0].j >= band.jBegin && runs.back().j < band.jEnd) continue;
      rec.firstRun = std::uint32_t(scratch.reachingRuns.size());  // it reaches another band: for the second part
      scratch.reachingRuns.makeRoom(runs.size());
      for (const PixelRun& run : runs) scratch.reachingRuns.push(run);
      scratch.reaching.push_back(rec);
    }
    std::stable_sort(scratch.reaching.begin(), scratch.reaching.end(), [&](const SplatRecord& x, const SplatRecord& y) {
      return bandOf(x.ldi, x.ownJ) < bandOf(y.ldi, y.ownJ);
    });
    for (const SplatRecord& rec : scratch.reaching)
      forEachReachedBand(rec, scratch.reachingRuns.data(), [&](int b) {
        setBandRows(band, b);
        addRecordShares<true>(rec, scratch.reachingRuns.data(), nullptr, hemicube, band, guess, out.misses);
      });
    out.layers.clear();
    out.means.clear();
    takeReached(band, reachedChunks, [&](std::uint32_t layer, const ShareSums& layerSums) {
      out.layers.push_back(layer);
      out.means.push_back(meanOf(layerSums));
    });
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

  // The ordered pass after the parallel one: the own-pixel shares no seeded layer took, in (hemicube, sample)
  // order; a miss's hemicube is the call's hemicube groupStart + hemicube. placeShare tries the seeded layers again
  // (and fails): a few extra plane tests for the rare shares that get here, so that one function holds the rule.
  void placeMisses(std::span<const OwnPixelMiss> misses, std::uint32_t groupStart) const {
    for (const OwnPixelMiss& m : misses)
      placeShare(m.pixel, true, m.position, m.normal, groupStart + m.hemicube, m.sample, m.area, m.areaValue);
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

namespace {
// The planes (PixelPlanes) of each pixel of at most four seeded layers (Layers::seedOffsets, seedPlanes). A pixel of
// more keeps none, so that no sample matches a slot of it and its shares search its whole list
// (InsertionPass::addPixelShare).
std::vector<PixelPlanes> planesOfFewLayers(const std::vector<std::uint32_t>& offsets,
                                           const std::vector<glm::vec4>& planes) {
  PixelPlanes unused;
  std::fill(std::begin(unused.nx), std::end(unused.nx), 0.0f);
  std::fill(std::begin(unused.ny), std::end(unused.ny), 0.0f);
  std::fill(std::begin(unused.nz), std::end(unused.nz), 0.0f);
  std::fill(std::begin(unused.d), std::end(unused.d), std::numeric_limits<float>::infinity());
  std::vector<PixelPlanes> result(offsets.size() - 1, unused);
  for (std::size_t g = 0; g + 1 < offsets.size(); ++g)
    for (std::uint32_t k = 0; offsets[g + 1] - offsets[g] <= 4 && offsets[g] + k < offsets[g + 1]; ++k) {
      const glm::vec4& plane = planes[offsets[g] + k];
      result[g].nx[k] = plane.x;
      result[g].ny[k] = plane.y;
      result[g].nz[k] = plane.z;
      result[g].d[k] = plane.w;
    }
  return result;
}
}  // namespace

// Renumbers the layers into store order and indexes the seeded ones (Layers::seedOffsets, seedPlanes,
// pixelPlanes): done once, when the first hemicube after the seeds arrives, when every layer is a seeded one.
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
  store.pixelPlanes = planesOfFewLayers(store.seedOffsets, store.seedPlanes);
  store.layers = std::move(ordered);
  store.totals = std::move(orderedTotals);
}

namespace {

// After the seeds, group by group of hemicubes (at most kGroupSamples samples, or one hemicube), in three steps:
//   1. In parallel over hemicubes: every sample is warped and splatted, and listed by the bands its rows reach.
//   2. In parallel over bands: each band takes every hemicube of the group in order, adding the shares that lie on
//      its seeded layers and then each reached layer's hemicube mean to the layer's total (InsertionPass::sumBand).
//      One thread holds a band's layers for the whole group, so they are read from memory once a group.
//   3. In (hemicube, sample) order, the own-pixel shares that lay on no seeded layer open or join layers.
void insertAfterSeeds(const InsertionPass& pass, LdcBuilder::Scratch& scratch, BuilderStats& stats) {
  const std::size_t bands = static_cast<std::size_t>(3 * pass.bandsPerLdi);
  scratch.misses.resize(bands);
  std::vector<OwnPixelMiss> misses;
  for (std::size_t first = 0; first < pass.hemicubes.size();) {
    std::size_t count = 0, samples = 0;
    while (first + count < pass.hemicubes.size() && (count == 0 || samples < kGroupSamples))
      samples += pass.hemicubes[first + count++].size();
    if (scratch.splats.size() < count) scratch.splats.resize(count);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      HemicubeScratch& buffers = scratch.buffers.local();
      for (std::size_t h = r.begin(); h != r.end(); ++h)
        pass.splatHemicube(pass.hemicubes[first + h], buffers, scratch.splats[h]);
    });
    const std::span<const HemicubeSplats> group(scratch.splats.data(), count);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bands, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      BandSums& sums = scratch.bandSums.local();
      for (std::size_t band = r.begin(); band != r.end(); ++band) {
        scratch.misses[band].clear();
        if (pass.kernel == SplatKernel::Box)
          pass.sumBand<true>(static_cast<int>(band), group, sums, scratch.misses[band]);
        else
          pass.sumBand<false>(static_cast<int>(band), group, sums, scratch.misses[band]);
      }
    });
    misses.clear();
    for (const std::vector<OwnPixelMiss>& band : scratch.misses) misses.insert(misses.end(), band.begin(), band.end());
    std::sort(misses.begin(), misses.end(), [](const OwnPixelMiss& x, const OwnPixelMiss& y) {
      return std::tie(x.hemicube, x.sample) < std::tie(y.hemicube, y.sample);
    });
    pass.placeMisses(misses, static_cast<std::uint32_t>(first));
    for (const HemicubeSplats& hemicube : group) {
      stats.droppedSamples += hemicube.dropped;
      stats.splatRecords += hemicube.splats;
    }
    first += count;
  }
}

// After the seeds, in a store whose seeded layers are few (the bounces' level at R2 = 32 holds about 8 K), with the
// box kernel, in two steps:
//   1. In parallel over hemicubes: one thread a hemicube warps, splats and sums it into its own sums over the whole
//      store, which stay in its cache (InsertionPass::sumHemicube), and lists the hemicube's mean of each layer it
//      reached. Nothing is written out a sample and read back, as the band pass's records and runs are: there a
//      sample's set-up, at about 1.7 writes a sample, cost more than its writes.
//   2. In hemicube order, each layer adds the means; then the own-pixel shares that lay on no seeded layer open or
//      join layers, in (hemicube, sample) order.
// The sums are added in the band pass's order, the means in hemicube order: the same store, byte for byte.
void insertIntoSmallStore(const InsertionPass& pass, LdcBuilder::Scratch& scratch, BuilderStats& stats) {
  const std::size_t count = pass.hemicubes.size();
  if (scratch.means.size() < count) scratch.means.resize(count);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1), [&](const tbb::blocked_range<std::size_t>& r) {
    HemicubeScratch& buffers = scratch.buffers.local();
    BandSums& sums = scratch.bandSums.local();
    for (std::size_t h = r.begin(); h != r.end(); ++h)
      pass.sumHemicube(std::uint32_t(h), pass.hemicubes[h], buffers, sums, scratch.means[h]);
  });
  std::vector<OwnPixelMiss> misses;
  for (std::size_t h = 0; h < count; ++h) {
    const HemicubeMeans& hemicube = scratch.means[h];
    for (std::size_t k = 0; k < hemicube.layers.size(); ++k)
      addMean(hemicube.means[k], pass.store.totals[hemicube.layers[k]]);
    misses.insert(misses.end(), hemicube.misses.begin(), hemicube.misses.end());
    stats.droppedSamples += hemicube.dropped;
    stats.splatRecords += hemicube.splats;
  }
  pass.placeMisses(misses, 0);
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
  const int bandRows = bandRowsFor(res);
  const InsertionPass pass{m_frame,
                           *m_layers,
                           hemicubes,
                           res,
                           bandRows,
                           (res + bandRows - 1) / bandRows,
                           ((std::uint64_t(1) << 32) + std::uint64_t(bandRows) - 1) / std::uint64_t(bandRows),
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
  if (usesHemicubePass())
    insertIntoSmallStore(pass, *m_scratch, m_stats);
  else
    insertAfterSeeds(pass, *m_scratch, m_stats);
}

bool LdcBuilder::usesHemicubePass() const {
  if (m_kernel != SplatKernel::Box || m_layers->seedOffsets.empty()) return false;
  switch (m_parallelPass) {
    case ParallelPass::Bands:
      return false;
    case ParallelPass::Hemicubes:
      return true;
    case ParallelPass::Auto:
      break;
  }
  return m_layers->seedOffsets.back() <= kHemicubePassLayers;
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
        const glm::vec3 total(t.sum());
        layers.push_back(PackedLayer{octEncode(b.n), b.d, total.x, total.y, total.z, t.count()});
      });
  offsets.back() = static_cast<std::uint32_t>(layers.size());
  return LayeredDepthCube(m_params, m_stats.hemicubes, std::move(offsets), std::move(layers));
}

LayerSums LdcBuilder::layerSums() const {
  LayeredDepthCube store = finalize();
  std::vector<glm::dvec3> sums;
  sums.reserve(store.layers().size());
  forEachLayerInStoreOrder(
      *m_layers, [](std::uint32_t) {}, [&](std::size_t idx) { sums.push_back(m_layers->totals[idx].sum()); });
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
      const glm::vec3 total(openedTotals[l].sum());
      layers.push_back(
          PackedLayer{octEncode(opened[l].n), opened[l].d, total.x, total.y, total.z, openedTotals[l].count()});
      sums.push_back(openedTotals[l].sum());
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
