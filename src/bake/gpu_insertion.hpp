#pragma once
// The IBRR warp on the GPU: hemicubes are inserted into the store where they were rendered, by compute passes
// over their atlas slots (shaders/ldc_insert.comp), a batch of hemicubes at a time; nothing is read back until
// the store is.
//
// It needs the geometry seeds (ibrr/surface_seeds.hpp): their layers are uploaded once. Per batch:
//   1. one miss dispatch over every hemicube of the batch (a z each) lists the samples whose splat covers the
//      pixel they lie in and find no layer there (a surface the seeds lack: the back of an open surface, which the
//      seeds take from the front), each pixel's misses as a list;
//   2. ldc_open.comp opens their layers, a pixel an invocation, in sample order (hemicube, then atlas texel), with
//      the planes the CPU builder gives them (ibrr::sampleUnitNormal): a listed sample on a layer an earlier one
//      opened joins it, as if the hemicubes had been warped one by one. Each layer keeps its birth, so that a
//      sample sees only the layers opened before it;
//   3. the accumulating dispatch matches and adds, each hemicube into its own sums, and a flush adds each
//      hemicube's means to the totals, in hemicube order; a dispatch takes as many hemicubes as their sums fit in
//      an eighth of the GPU's free memory and one storage block (a set holds every layer the buffers have room
//      for: see below).
// No step waits for the host. The layer buffers must hold every layer step 2 opens, which the host does not
// know: it keeps room for every texel of the batches in flight to open one, learning the true count without
// waiting from the batches the GPU has finished (a fence each), and keeps at most two batches in flight.
// The matching rule is the CPU builder's (ibrr/ldc_builder.hpp): every share a sample gives a pixel is matched
// by the sample's own plane, so the two warps give the same layers and, within the float rounding of the CPU's
// sums, the same radiosity.
//
// Each hemicube's sums are 64-bit fixed point, added with integer atomics, and its means are added to the totals
// in hemicube order (shaders/ldc_insertion.glsl), so a bake gives the same store run after run, and the same bytes
// however many hemicubes a batch or a dispatch takes.
#include "gpu/hemicube.hpp"
#include "gpu/resources.hpp"
#include "ibrr/ldc.hpp"
#include "ibrr/ldc_builder.hpp"
#include "ibrr/splat.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace ibrr::bake {

struct GpuInsertionStats {
  std::uint64_t hemicubes = 0;
  std::uint64_t samples = 0;         // covered, lit atlas texels inserted
  std::uint64_t pixelWrites = 0;     // (sample, LDI pixel) pairs its splats covered
  std::uint64_t droppedSamples = 0;  // non-finite, or outside the cube
  std::uint64_t openedLayers = 0;    // layers opened after the seeds
  std::uint64_t batchWaits = 0;      // batches the host waited for, to keep at most two in flight
  std::uint64_t dispatches = 0;      // accumulating dispatches (each with its flush)
};

class GpuInsertion {
public:
  // A hemicube drawn into a slot of the atlas (gpu::HemicubeRenderer::draw, which filled `layout`) and its VPL's
  // power Φ.
  struct Hemicube {
    const gpu::HemicubeCapture* layout = nullptr;
    glm::vec3 power{0.0f};
  };

  // Uploads the layers of `seeded` (a builder given its seeds and no hemicube yet). maxHemicubeResolution:
  // the largest H to be inserted; slots: the most hemicubes a batch holds. A GL 4.5 context must be current.
  // Throws ibrr::Error when the layers do not fit in GPU buffers.
  GpuInsertion(const LdcBuilder& seeded, SplatKernel kernel, int maxHemicubeResolution, int slots = 1);

  // Adds the hemicubes of `batch`, in their order, drawn into `atlas`, with the bound on g (0 = none).
  void insert(const gpu::HemicubeRenderer& atlas, std::span<const Hemicube> batch, float clamp);
  // The list of missed samples of a batch of `slots` slots: 48 bytes an atlas texel (within one storage block).
  [[nodiscard]] static std::uint64_t missListBytes(int maxHemicubeResolution, int slots);
  // The GPU memory a slot needs besides the atlas and the seeds' layers: its share of the miss list and the
  // room for layers its texels could open, in each batch in flight.
  [[nodiscard]] static std::uint64_t slotBytes(int maxHemicubeResolution);

  // The store of everything inserted so far (reads the totals back).
  LayeredDepthCube finalize() const;
  GpuInsertionStats stats() const;

private:
  // A batch the GPU may still be warping: the fence after it, the most layers it may open, and its slot of
  // the ring its opened-layer count is copied into.
  struct BatchInFlight {
    gpu::Fence done;
    std::uint64_t layerRoom = 0;
    std::uint32_t ringSlot = 0;
  };

  void bindBuffers() const;
  void setControlWord(std::uint32_t word, std::uint32_t value) const;
  void uploadRecords(std::span<const Hemicube> batch);
  void dispatchInsert(std::span<const Hemicube> batch, std::size_t first, std::size_t count, bool missPass) const;
  void dispatchOpen() const;
  void flushDispatch(std::size_t first, std::size_t count) const;
  // Makes room in the layer buffers for `layerRoom` more layers than the batches in flight may open, reading
  // the counts of those the GPU has finished and waiting for the oldest when two are in flight.
  void makeLayerRoom(std::uint64_t layerRoom);
  void retireOldestBatch();
  void reserveLayers(std::size_t layers);
  // Refuses (ibrr::Error) before any buffer is made when the driver tells the GPU's free memory and
  // the warp's buffers for `layers` layers exceed it (gpu/memory.hpp).
  void checkVideoMemory(std::size_t layers, int maxHemicubeResolution, int slots) const;

  LdcParams m_params;
  LdcFrame m_frame;
  std::vector<std::uint32_t> m_offsets;  // the seeds' layers of each pixel: [m_offsets[g], m_offsets[g + 1])
  std::size_t m_capacity = 0;            // layers the per-layer buffers hold
  std::uint32_t m_missCapacity = 0;      // entries of the miss list
  gpu::Buffer m_offsetBuffer, m_planeBuffer, m_sumBuffer, m_stampBuffer, m_touchedBuffer, m_totalBuffer,
      m_controlBuffer, m_extraHeadBuffer, m_extraNextBuffer, m_birthBuffer, m_missBuffer, m_recordBuffer,
      m_missHeadBuffer, m_missedPixelBuffer;
  // The batch's hemicubes as ldc_insertion.glsl reads them (WarpHemicube), a slot each.
  struct HemicubeRecord {
    glm::vec4 centreCoverage;
    glm::vec4 power;
    glm::ivec4 atlasLayout;
    glm::uvec4 stamps;
  };
  std::vector<HemicubeRecord> m_records;
  std::uint64_t m_sumBudget = 0;   // bytes the sums of a dispatch's hemicubes may take
  int m_dispatchHemicubes = 1;     // hemicubes a dispatch takes: sets of sums (each m_capacity layers) the budget holds
  std::vector<std::size_t> m_dispatchFirsts;  // the batch's dispatches: the first hemicube of each, then the end
  std::uint32_t m_dispatches = 0;  // the stamp of the last accumulating dispatch
  gpu::Program m_insert, m_open, m_flush;
  std::uint64_t m_hemicubes = 0;
  std::size_t m_seedLayers = 0;
  // The layer count of each batch, copied on the GPU after its layers are opened into a persistently mapped ring,
  // read once the batch's fence has passed.
  gpu::Buffer m_layerCountRing;
  const volatile std::uint32_t* m_layerCounts = nullptr;
  std::deque<BatchInFlight> m_inFlight;
  std::uint32_t m_batches = 0;
  std::uint64_t m_knownLayers = 0;  // the layers after the last batch retired
  std::uint64_t m_batchWaits = 0;
};

}  // namespace ibrr::bake
