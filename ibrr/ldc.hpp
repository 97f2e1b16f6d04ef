#pragma once
// The compact layered depth cube (LDC) radiosity store: what a bake produces, the store file holds, and the
// display reads (Mertens & Van Reeth 2002, §3 and §5).
//
// Layout (flat arrays, meant to be uploaded unchanged as two GPU storage buffers):
//   offsets: uint32[3·R² + 1]. The layers of global pixel g = a·R² + j·R + i (LDI a, column i, row j; see
//            LdcFrame) are layers[offsets[g] .. offsets[g+1]). offsets[0] = 0, offsets[3R²] = layer count.
//   layers:  PackedLayer[layer count], 24 bytes each, pixel by pixel, LDI 0 (x) then 1 (y) then 2 (z); within a
//            pixel in the order they were created.
// A layer is a plane (n, d = p·n) with the radiosity accumulated on it. Its normal's dominant axis is always the
// LDI's axis.
//
// Radiosity semantics: the value is B = Σ_h B_h, summed over the hemicubes h (one per VPL) that saw the layer,
// where B_h is the area-weighted mean of that hemicube's samples over the part of the pixel they cover (see
// ldc_builder.hpp; so a hemicube counts once, whatever its resolution, and its power is conserved). Units are
// those of the inserted values (W/m² for I·g); it is radiosity *before* the reflectivity ρ, which the display
// multiplies in and then adds emission: B_display = E + ρ·B.

#include "ibrr/ldc_frame.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ibrr {

struct PackedLayer {
  std::uint32_t normal = 0;  // plane normal n, octahedral 2×snorm16 (octDecode)
  float d = 0.0f;            // plane offset p·n, world units
  float r = 0.0f;            // accumulated radiosity per channel, units of the inserted values (W/m²)
  float g = 0.0f;
  float b = 0.0f;
  std::uint32_t count = 0;  // number of hemicubes that contributed; 0 for a geometry seed no hemicube reached
};
static_assert(sizeof(PackedLayer) == 24, "PackedLayer is the 24-byte GPU layout");

// Bounds of the bias compensation recorded with a store (it is packed into 24 bits of the file's header).
inline constexpr std::uint32_t kMaxBiasCompensationRays = 65535;
inline constexpr std::uint32_t kMaxBiasCompensationPasses = 255;

enum class RetrievalFilter {
  Nearest,   // the matching layer of the pixel containing the point
  Average,   // paper §5: mean over the matching layers of the (2k+1)² pixels around it
  Bilinear,  // bilinear weights over the 2×2 pixels around it, non-matching layers skipped and weights renormalised
};

// The filters by their command-line and script names, in the order menus list them: "none" (Nearest), "box"
// (Average, the paper's kernel) and "bilinear".
struct NamedRetrievalFilter {
  const char* name;
  RetrievalFilter filter;
};
inline constexpr NamedRetrievalFilter kRetrievalFilters[] = {
    {"none", RetrievalFilter::Nearest}, {"box", RetrievalFilter::Average}, {"bilinear", RetrievalFilter::Bilinear}};
// The filter called `name`, or nullopt.
std::optional<RetrievalFilter> retrievalFilterNamed(std::string_view name);
// The filter called `name`; throws ibrr::Error "WHAT 'NAME': choose none, box or bilinear" for another name.
RetrievalFilter parseRetrievalFilter(std::string_view name, std::string_view what);

struct StoreStats {
  std::uint64_t layerCount = 0;
  std::uint64_t pixelCount = 0;      // 3·R²
  std::uint64_t occupiedPixels = 0;  // pixels with at least one layer
  std::uint32_t maxLayersPerPixel = 0;
  double layersPerOccupiedPixel = 0;  // mean depth complexity where there is anything
  std::uint64_t layerBytes = 0;       // layerCount · sizeof(PackedLayer)
  std::uint64_t offsetBytes = 0;      // (3R² + 1) · 4
  std::uint64_t totalBytes = 0;       // layerBytes + offsetBytes
  double bytesPerLayer = 0;           // sizeof(PackedLayer) = 24
  double bytesPerLayerAll = 0;        // totalBytes / layerCount, offsets amortised
};

class LayeredDepthCube {
public:
  LayeredDepthCube() = default;
  // Takes resolved params (resolveParams) and the two arrays; throws ibrr::Error if they are inconsistent
  // (wrong offset count, offsets not monotonic or not ending at the layer count, non-finite values).
  LayeredDepthCube(const LdcParams& resolved, std::uint64_t vplCount, std::vector<std::uint32_t> offsets,
                   std::vector<PackedLayer> layers);

  const LdcParams& params() const { return m_params; }
  const LdcFrame& frame() const { return m_frame; }
  std::uint64_t vplCount() const { return m_vplCount; }  // hemicubes accumulated
  std::span<const std::uint32_t> offsets() const { return m_offsets; }
  std::span<const PackedLayer> layers() const { return m_layers; }
  std::span<const PackedLayer> pixelLayers(std::uint32_t globalPixel) const;

  // Radiosity at surface point p (world units) with unit normal n, or nullopt when no stored layer matches
  // (|p·n_l − d_l| < ε_d and n·n_l > 1 − ε_n). The LDI chosen by n is searched first, then the other two in
  // order of |n| component, which only matters for normals near a 45° boundary.
  // filterRadius: k for RetrievalFilter::Average, pixels, [0, 8].
  std::optional<glm::vec3> radiosity(const glm::vec3& p, const glm::vec3& n,
                                     RetrievalFilter filter = RetrievalFilter::Nearest, int filterRadius = 1) const;

  StoreStats stats() const;

  // Bias compensation (src/bake/bias_compensation.hpp): the rays per layer and passes that added the
  // clamp's missing energy to every layer, or 0 and 0 for a store without it. Saved in the store file.
  std::uint32_t biasCompensationRays() const { return m_biasCompensationRays; }
  std::uint32_t biasCompensationPasses() const { return m_biasCompensationPasses; }
  // Throws ibrr::Error unless rays ≤ kMaxBiasCompensationRays and passes ≤ kMaxBiasCompensationPasses, both
  // zero or both positive.
  void setBiasCompensation(std::uint32_t raysPerLayer, std::uint32_t passes);

private:
  std::optional<glm::vec3> lookupInLdi(int ldi, const glm::vec3& p, const glm::vec3& n, RetrievalFilter filter,
                                       int filterRadius) const;
  const PackedLayer* matchLayer(std::uint32_t globalPixel, const glm::vec3& p, const glm::vec3& n) const;

  LdcParams m_params;
  LdcFrame m_frame;
  std::uint64_t m_vplCount = 0;
  std::uint32_t m_biasCompensationRays = 0;
  std::uint32_t m_biasCompensationPasses = 0;
  std::vector<std::uint32_t> m_offsets;
  std::vector<PackedLayer> m_layers;
  std::vector<glm::vec3> m_normals;  // each layer's octDecode(normal), decoded once for matchLayer
};

// The store holding both contributions: layers of b that match a layer of a in the same pixel (b's plane,
// evaluated at the pixel centre, within ε of a's plane) add to it, the others are appended after a's.
// Counts and VPL counts add. Throws ibrr::Error unless both have the same bounds, R, ε and scene fingerprint.
// For disjoint sets of hemicubes A and B, merge(store(A), store(B)) equals store(A ∪ B) up to float rounding.
// Stores with bias compensation are refused: their emitted part would count twice (merge before compensating).
LayeredDepthCube merge(const LayeredDepthCube& a, const LayeredDepthCube& b);

// A store baked from a share of the light paths, with each layer's radiosity sum kept in double precision: the
// shares of a distributed bake (src/cluster/) add with addLayerSums in a fixed order, and the sum of the shares
// rounds to the same floats as the whole bake's sums (the two differ only in the order of double additions,
// about 1e-16 relative, far below a float's 6e-8). `layers` holds the planes, counts and VPL count; its float
// radiosity is not read.
struct LayerSums {
  LayerSums() = default;
  // Throws ibrr::Error unless there is one sum per layer.
  LayerSums(LayeredDepthCube layers, std::vector<glm::dvec3> sums);
  // A store whose float radiosity is all there is (the GPU warp's).
  static LayerSums fromStore(LayeredDepthCube store);
  // The store with each sum rounded to float.
  LayeredDepthCube rounded() const;

  LayeredDepthCube layers;
  std::vector<glm::dvec3> sums;  // per layer, in store order
};

// merge() for layer sums: the same layers, the sums added in double precision.
LayerSums addLayerSums(const LayerSums& a, const LayerSums& b);

// The same store with every layer's radiosity multiplied by `factor` (> 0, finite): a store baked from the
// first P of N light paths, whose VPL powers were Φ/N, estimates the full radiosity when scaled by N/P.
// Refused for a store with bias compensation (its emitted part does not scale with the paths).
LayeredDepthCube scaleRadiosity(const LayeredDepthCube& store, float factor);

// The store `fine` with the light of a coarser level of the same cube added to every layer (the bounces' level
// of a bake with --indirect-ldc R2 < R): each fine layer takes `coarse`'s radiosity at its pixel's centre on its
// own plane, read with the plane match and the bilinear filter over the coarse pixels around it (RetrievalFilter
// ::Bilinear), so only coarse layers of the same surface contribute (0 where none matches). The fine layers and
// counts stay; the VPL count is both levels'.
LayeredDepthCube withIndirectLevel(const LayeredDepthCube& fine, const LayeredDepthCube& coarse);

// The same addition for light that is not a level's hemicubes (the bias compensation estimated on the bounces'
// level, bake/bias_compensation.hpp): the VPL count stays `fine`'s.
LayeredDepthCube withCoarseRadiosity(const LayeredDepthCube& fine, const LayeredDepthCube& coarse);

}  // namespace ibrr
