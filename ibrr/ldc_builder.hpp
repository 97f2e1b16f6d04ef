#pragma once
// Building an LDC radiosity store from hemicube samples: the mutable side of the store (paper §4).
//
// insert() warps a batch of hemicubes into the three LDIs in parallel with TBB and is deterministic: the same
// sequence of hemicubes gives the same store, byte for byte, whatever the thread count and however the
// hemicubes are grouped into insert() calls. How:
//   1. Samples are cut into fixed-size chunks (independent of the thread count). In parallel, each chunk
//      computes every sample's LDI, plane and splat (its pixel bounds and kernel), and lists the sample under
//      each LDI tile (a square of 16–32 pixels) its splat touches, counting-sorted by tile in sample order.
//   2. In parallel over tiles, each tile walks the chunks in order, so it sees its samples in global sample
//      order, rasterises each splat clipped to the tile, and for each covered pixel matches or creates a layer
//      and accumulates. A tile owns its pixels and their layers, so no two threads touch the same layer, and
//      every sum is formed in sample order.
// Accumulation: within one hemicube a layer gathers Σ w·value and Σ w of that hemicube's splats; when the
// hemicube is done the layer adds the average Σ w·value / Σ w to its total and counts one more hemicube.
// So overlapping splats of one hemicube are averaged, never summed (paper §4.3), and a hemicube rendered at
// twice the resolution contributes the same radiosity; different hemicubes add.

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
  std::uint64_t splatRecords = 0;    // (pixel, sample) pairs accumulated: pixels per sample = splatRecords/samples
  std::uint64_t layers = 0;          // layers created so far
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

  // The compact store of everything inserted so far (the builder stays usable).
  LayeredDepthCube finalize() const;

  const LdcParams& params() const { return m_params; }
  const LdcFrame& frame() const { return m_frame; }
  SplatKernel kernel() const { return m_kernel; }
  BuilderStats stats() const;

  struct Tile;     // internal: one square of pixels of one LDI with its layers
  struct Scratch;  // internal: per-call buffers, kept to avoid reallocating them for every hemicube

private:
  LdcParams m_params;
  LdcFrame m_frame;
  SplatKernel m_kernel;
  int m_tileSize = 0;      // pixels per tile side
  int m_tilesPerSide = 0;  // tiles per LDI side
  std::vector<std::unique_ptr<Tile>> m_tiles;
  std::unique_ptr<Scratch> m_scratch;
  BuilderStats m_stats;
};

}  // namespace ibrr
