#pragma once
// IBRR display (paper §5): the camera's G-buffer warped into the layered depth cube. Each covered
// pixel fetches the radiosity B of its matching layer (nearest, averaged or bilinear) and gets the
// radiance L = L_e + ρ·B/π. Two paths give the same picture: the GPU path (the store in SSBOs,
// shaders/ibrr_reconstruct.comp; the viewer's) and the CPU path (TBB over pixels; for checking
// and for machines without GL compute). Pixels with no matching layer are holes: counted, shown
// with their emission only, and returned as a mask.
#include "display/gbuffer.hpp"
#include "gpu/resources.hpp"
#include "ibrr/ldc.hpp"
#include "util/image.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ibrr::display {

struct ReconstructionOptions {
  RetrievalFilter filter = RetrievalFilter::Bilinear;
  int filterRadius = 1;  // k of the averaging filter, pixels (a (2k+1)² window)
};

struct Reconstruction {
  Image radiance;                   // row 0 at the top
  std::vector<std::uint8_t> holes;  // 1 where a covered pixel found no layer, row 0 at the top
  std::size_t coveredPixels = 0;
  std::size_t holePixels = 0;
  double seconds = 0.0;  // the reconstruction itself, without the G-buffer
};

// CPU path from a rendered G-buffer.
Reconstruction reconstructOnCpu(const GBuffer& gbuffer, const LayeredDepthCube& store,
                                const ReconstructionOptions& options);

// GPU path: the store is uploaded once; reconstruct() runs the compute shader on a G-buffer.
class GpuReconstructor {
public:
  explicit GpuReconstructor(const LayeredDepthCube& store);
  // Leaves the result in outputTexture() (RGBA32F; alpha 1 matched, 0.5 hole, 0 background).
  void run(const GBuffer& gbuffer, const ReconstructionOptions& options);
  // run() and read the result back.
  Reconstruction reconstruct(const GBuffer& gbuffer, const ReconstructionOptions& options);
  // The last run's result read back (seconds left 0).
  [[nodiscard]] Reconstruction readBack() const;
  [[nodiscard]] GLuint outputTexture() const { return m_output.id(); }
  // The bytes a store takes in the GPU's buffers: its pixel offsets, and a plane and a radiosity vec4 a layer.
  [[nodiscard]] static std::size_t uploadedBytes(const LayeredDepthCube& store) {
    return store.offsets().size_bytes() + 2 * std::max<std::size_t>(store.layers().size(), 1) * sizeof(glm::vec4);
  }

private:
  const LayeredDepthCube& m_store;
  gpu::Buffer m_offsets;
  gpu::Buffer m_planes;     // vec4 per layer: the decoded unit normal and d
  gpu::Buffer m_radiosity;  // vec4 per layer: B (r, g, b) and the hemicube count
  gpu::Texture m_output;
  gpu::Program m_program;
};

}  // namespace ibrr::display
