#pragma once
// Building an LDC radiosity store from hemicube samples: the mutable side of the store (paper §4).
//
// insert() warps a batch of hemicubes into the three LDIs in parallel with TBB and is deterministic: the same
// sequence of hemicubes gives the same store, byte for byte, whatever the thread count and however the
// hemicubes are grouped into insert() calls.
//
// The matching rule, one for this builder and the GPU warp (src/bake/gpu_insertion.hpp): every share a sample
// gives a pixel is matched by that sample's own plane (p, n). It goes to the nearest seeded layer of the pixel
// with |p·n_l − d_l| < ε_d and n·n_l > 1 − ε_n; failing one, a share of the sample's own pixel goes to the
// nearest layer an earlier sample opened there (sample order: hemicube, then atlas texel) or opens one, and
// spill into the pixels around is dropped. How, once the geometry has seeded the layers, for each group of
// hemicubes (about half a million samples):
//   1. In parallel over hemicubes, one thread a hemicube: its samples are warped, ordered by the band of LDI rows
//      (R/16 rows) their own pixel lies in, and their splats rasterised once, into runs of pixels.
//   2. In parallel over bands, one thread a band: every hemicube of the group in order, the shares of its samples
//      in the band's rows (the band's own samples in sample order, then those of other bands whose splats reach
//      into it) matched against each pixel's seeded planes, four at a time, and added to the band's sums of that
//      layer, Σ a·E and Σ a. When the hemicube is done, each layer it reached adds its mean to its total. One
//      thread holds a band's planes, sums and totals (under a MiB) for the whole group, in the core's cache.
//      Own-pixel shares that matched no seeded layer are listed.
//   3. In sample order, the listed own-pixel shares open or join layers.
// Every sum is formed in one fixed order (band, then sample) and every total in hemicube order, whatever thread
// forms it. Without seeds (and while seeding) a share's layer depends on the shares before it, so every share goes
// through step 3's ordered matching.
//
// Accumulation: the area-weighted mean of each hemicube. A hemicube pixel s carries E_s, the radiosity its VPL
// gives the surface point it sees, and A_s = dω·r²/cos θ, the surface area it covers (footprintArea). Its
// splat covers LDI pixels p with kernel weights w_sp (box: 1 on every covered pixel; Gaussian: exp(−m²/2)),
// W_s = Σ_p w_sp. Pixel p receives the share  a_sp = A_s·w_sp / W_s  of the sample's area, so Σ_p a_sp = A_s
// exactly. Within one hemicube a layer gathers Σ_s a_sp·E_s and Σ_s a_sp; when the hemicube is done the layer
// adds the mean
//     B_h(p) = Σ_s a_sp·E_s / Σ_s a_sp
// to its total and counts one more hemicube. When the splats tile the surface (Σ_s a_sp = the area of the
// surface in p, which the 1.25× enlarged footprints of splat.hpp give up to aliasing), B_h(p) is the mean of E
// over the surface in p, and Σ_p B_h(p)·area(p) = Σ_s E_s·A_s: the store holds the power the hemicube
// deposited, for any number of VPLs. (Weighting every sample alike, as this builder once did, counts a pixel's
// dense part — near the VPL, near corners — as often as it has samples there, and overstates the power by up
// to 15 % for a VPL within a pixel of a wall.) The mean is over the part of the pixel the hemicube saw: where
// a pixel straddles the VPL's horizon or a shadow edge, its unseen part does not dilute it.
// So overlapping splats of one hemicube are averaged, never summed (paper §4.3), and a hemicube rendered at
// twice the resolution (a quarter the area per sample, four times the samples) contributes the same radiosity;
// different hemicubes add. A sample with a zero footprint weighs 1e-9 of a pixel's area, so it counts only
// where nothing else does.

#include "ibrr/hemicube_samples.hpp"
#include "ibrr/ldc.hpp"
#include "ibrr/ldc_frame.hpp"
#include "ibrr/splat.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace ibrr {

struct BuilderStats {
  std::uint64_t hemicubes = 0;       // hemicubes inserted (the VPL count)
  std::uint64_t samples = 0;         // samples handed in
  std::uint64_t droppedSamples = 0;  // non-finite, zero normal, or outside the cube
  std::uint64_t splatRecords = 0;    // (pixel, sample) pairs covered: pixels per sample = splatRecords/samples
  std::uint64_t layers = 0;          // layers created so far
  std::uint64_t seedSamples = 0;     // geometry seeds handed to seedLayers (surface_seeds.hpp)
};

// A sample's share of its own pixel that matched no seeded layer, kept aside by a builder that defers opened
// layers (LdcBuilder::deferOpenedLayers): which layer it opens or joins depends on the shares of earlier
// hemicubes in that pixel, which a share of a distributed bake does not have. openDeferredLayers replays them all
// in the whole bake's order, exactly as one builder would have taken them.
struct DeferredOpening {
  std::uint32_t pixel = 0;     // global LDI pixel
  std::uint32_t hemicube = 0;  // the hemicube's index in the whole bake
  std::uint32_t sample = 0;    // the sample's index within the hemicube
  glm::vec3 position{0.0f};    // the sample's plane: its point and normal
  glm::vec3 normal{0.0f};
  glm::vec3 areaValue{0.0f};  // a·E
  float area = 0.0f;          // a
};

class LdcBuilder {
public:
  // params: resolved here (ε defaults filled in); throws ibrr::Error on bad parameters.
  explicit LdcBuilder(const LdcParams& params, SplatKernel kernel = SplatKernel::Box);
  ~LdcBuilder();
  LdcBuilder(LdcBuilder&&) noexcept;
  LdcBuilder& operator=(LdcBuilder&&) noexcept;
  LdcBuilder(const LdcBuilder&) = delete;
  LdcBuilder& operator=(const LdcBuilder&) = delete;

  // Inserts one hemicube's samples (one VPL).
  void insert(const HemicubeSampleView& hemicube);
  // Inserts several hemicubes at once, in order; more parallel work per call, identical result.
  // Throws ibrr::Error if a hemicube's arrays differ in length.
  void insert(std::span<const HemicubeSampleView> hemicubes);
  // Creates the layers these samples match, exactly as insert() would, but adds nothing to them and counts no
  // hemicube; every seedLayers() call comes before the first insert() (an InternalError otherwise): the geometry seeds
  // of surface_seeds.hpp, given before the VPLs. A seeded layer that no hemicube reaches stays in the store with zero
  // radiosity and a count of 0. After seeding, a hemicube sample's splat opens a layer only in the sample's own pixel
  // (the surface is there): its spill into the pixels around matches the seeded layers or is dropped, so the layers
  // follow the geometry and not the VPLs.
  void seedLayers(const HemicubeSampleView& seeds);

  // From now on (after seeding), a record in its own pixel that matches no seeded layer is kept aside instead of
  // opening or joining a layer, numbered as hemicube firstHemicube + k for the k-th hemicube inserted from here:
  // the builder of one share of a distributed bake, whose layers are then the seeds' alone.
  void deferOpenedLayers(std::uint32_t firstHemicube);
  std::vector<DeferredOpening> deferredOpenings() const;

  // The parallel pass that inserts hemicubes after the seeds (the file's comment above has the band pass):
  // Auto takes the hemicube pass, one thread a hemicube summing into its own sums over the whole store, where the
  // box kernel splats into a store of at most kHemicubePassLayers seeded layers, and the band pass otherwise. Both
  // give the same store, byte for byte; Bands and Hemicubes force one (where the hemicube pass applies), for tests
  // and measurements.
  enum class ParallelPass { Auto, Bands, Hemicubes };
  void setParallelPass(ParallelPass pass) { m_parallelPass = pass; }
  // The seeded layers whose sums (17 bytes a layer) a thread of the hemicube pass holds in its cache at most.
  static constexpr std::uint32_t kHemicubePassLayers = 1u << 15;

  // The compact store of everything inserted so far (the builder stays usable).
  LayeredDepthCube finalize() const;
  // The same store with each layer's radiosity sum in double precision, for adding to other shares of a bake.
  LayerSums layerSums() const;

  // The layers' planes in store order (the order finalize() writes them), with the planes as matched, before
  // their normals are quantised: what a GPU insertion needs to match exactly as insert() does.
  struct Planes {
    std::vector<std::uint32_t> offsets;  // 3R² + 1, as LayeredDepthCube::offsets()
    std::vector<glm::vec4> planes;       // (n unit, d = p·n world units) per layer
  };
  Planes planes() const;

  const LdcParams& params() const { return m_params; }
  const LdcFrame& frame() const { return m_frame; }
  SplatKernel kernel() const { return m_kernel; }
  BuilderStats stats() const;

  struct Layers;   // internal: every pixel's layers, and the index of the seeded ones
  struct Scratch;  // internal: per-thread sums and per-call buffers, kept from call to call

private:
  void checkLengths(std::span<const HemicubeSampleView> hemicubes) const;
  void insertSamples(std::span<const HemicubeSampleView> hemicubes, bool seedOnly);
  void indexSeededLayers();
  bool usesHemicubePass() const;  // for the hemicubes inserted now (setParallelPass)

  LdcParams m_params;
  LdcFrame m_frame;
  SplatKernel m_kernel;
  std::unique_ptr<Layers> m_layers;
  std::unique_ptr<Scratch> m_scratch;
  BuilderStats m_stats;
  bool m_seeded = false;  // seedLayers() was called: spill opens no layers
  bool m_deferOpenings = false;
  ParallelPass m_parallelPass = ParallelPass::Auto;
  std::uint64_t m_firstHemicube = 0;  // added to the hemicube count for deferred records
};

// The layers of `seeded` (the shares' seeded layer sums, added) with the deferred records of every share
// replayed in the whole bake's order (pixel by pixel: hemicube, sample): each joins the nearest layer an
// earlier one opened in its pixel or opens one, and each layer adds the area-weighted mean of every hemicube, as
// LdcBuilder does. The opened layers follow their pixel's seeded ones, in the order they were opened.
LayerSums openDeferredLayers(const LayerSums& seeded, std::vector<DeferredOpening> openings);

}  // namespace ibrr
