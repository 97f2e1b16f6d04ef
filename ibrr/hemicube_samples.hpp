#pragma once
// One hemicube's worth of surface samples, the unit of insertion into the LDC, and the footprint helpers the
// bake uses to fill it.
//
// The bake renders the five faces of a hemicube around a virtual point light (VPL) at `centre`; every covered
// hemicube pixel becomes one sample: the surface point it sees, that surface's normal, the radiosity the VPL
// gives there, and the surface area the pixel covers.

#include <glm/glm.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

namespace ibrr {

// Smallest |cos θ| used in footprint formulas: at more grazing angles a single hemicube pixel would cover an
// unbounded strip of surface (area ∝ 1/cos θ); 0.01 corresponds to 89.4°.
inline constexpr float kMinFootprintCos = 0.01f;

// A sample's unit normal as the warps match it, n·(1/√(n·n)) in float: the CPU warp's, and the GPU warp's for the
// layers it opens (src/bake/gpu_insertion.cpp), so that a layer a sample opens has one plane on either warp.
inline glm::vec3 sampleUnitNormal(const glm::vec3& n) { return n * (1.0f / std::sqrt(glm::dot(n, n))); }

// Non-owning view of one hemicube's samples, structure-of-arrays; all spans have the same length.
// The bake can point it straight at its read-back buffers.
struct HemicubeSampleView {
  glm::vec3 centre{0.0f};                // hemicube (VPL) position, world units
  std::span<const glm::vec3> positions;  // surface point seen by each pixel, world units
  std::span<const glm::vec3> normals;    // surface normal there, unit length (renormalised anyway),
                                         // on the side facing the centre
  std::span<const glm::vec3> values;     // radiosity contribution I·g(x) per channel, W/m² (≥ 0, finite)
  std::span<const float> footprints;     // surface area the pixel covers, m² (see footprintArea), ≥ 0
  // Per sample, or empty for none: the displacement in the sample's plane towards where its surface meets
  // another one at an edge (edgeReach), world units; its splat is extended to cover it (splat.hpp).
  std::span<const glm::vec3> edgeReaches;

  std::size_t size() const { return positions.size(); }
};

// Owning container with the same layout, for CPU producers and tests.
struct HemicubeSamples {
  glm::vec3 centre{0.0f};
  std::vector<glm::vec3> positions;
  std::vector<glm::vec3> normals;
  std::vector<glm::vec3> values;
  std::vector<float> footprints;
  std::vector<glm::vec3> edgeReaches;  // empty, or one per sample

  std::size_t size() const { return positions.size(); }
  void reserve(std::size_t n);
  void clear();
  void add(const glm::vec3& position, const glm::vec3& normal, const glm::vec3& value, float footprint) {
    positions.push_back(position);
    normals.push_back(normal);
    values.push_back(value);
    footprints.push_back(footprint);
  }
  // The same with an edge reach (then every sample must have one).
  void add(const glm::vec3& position, const glm::vec3& normal, const glm::vec3& value, float footprint,
           const glm::vec3& edgeReach) {
    add(position, normal, value, footprint);
    edgeReaches.push_back(edgeReach);
  }
  HemicubeSampleView view() const { return {centre, positions, normals, values, footprints, edgeReaches}; }
};

// Surface area covered by one hemicube pixel, m².
//   solidAngle: the pixel's solid angle seen from the hemicube centre, sr (hemicubePixelSolidAngle), > 0
//   distance:   r, from the centre to the surface point, world units (m), ≥ 0
//   cosTheta:   cosine between the surface normal and the direction back to the centre, [0, 1]
// The pixel's cone cuts a patch of area dω·r² perpendicular to the ray; on a surface tilted by θ that patch is
// stretched by 1/cos θ along the tilt:  A = dω·r² / cos θ.  cos θ is clamped to kMinFootprintCos.
inline float footprintArea(float solidAngle, float distance, float cosTheta) {
  const float c = std::max(std::fabs(cosTheta), kMinFootprintCos);
  return solidAngle * distance * distance / c;
}

// Splats reach to the edge where their surface meets another one. A hemicube pixel straddling the edge between two
// surfaces (a wall and the floor, a box's side and its top) shows one of them, and the other surface's last
// samples' splats (kSplatCoverage × their footprint) need not reach the LDI pixels along the edge, which then
// miss this VPL altogether: dark lines along every edge (the furnace's edge pixels measured 10–21% dark;
// docs/bias_compensation.md). A sample at p (normal n, footprint A) whose hemicube 4-neighbour sees a surface of
// another orientation, n·n' < kEdgeNormalCos, within kEdgeMeetFootprints·√A (the two surfaces meet there; a
// farther neighbour is an occluder whose shadow keeps its edge) reaches towards the neighbour's point p' projected
// onto its own plane: reach = Σ over such neighbours of (p' − p) − n·((p' − p)·n). Its splat is extended on that
// side only (splat.hpp), so it does not spill sideways into a contact shadow. Beyond the end of its plane no layer
// matches, so the extension adds nothing there.
inline constexpr float kEdgeNormalCos = 0.9f;
inline constexpr float kEdgeMeetFootprints = 3.0f;

// The in-plane displacement from a sample (p, n, area) towards a neighbour's surface point (p', n') when the two
// meet at an edge, else 0.
inline glm::vec3 edgeReachTowards(const glm::vec3& p, const glm::vec3& n, float area,
                                  const glm::vec3& neighbourPosition, const glm::vec3& neighbourNormal) {
  const glm::vec3 apart = neighbourPosition - p;
  if (!(glm::dot(n, neighbourNormal) < kEdgeNormalCos &&
        glm::dot(apart, apart) < kEdgeMeetFootprints * kEdgeMeetFootprints * area))
    return glm::vec3(0.0f);
  return apart - n * glm::dot(apart, n);
}

// Hemicube pixels that see one plane are merged two by two. Where a bounce hemicube's pixels are smaller than the
// store's (h = 64 against R2 = 128 covers a Cornell wall with about 3 samples an LDI pixel), four neighbouring
// samples of one surface splat over nearly the same LDI pixels, and each pays the warp's whole set-up. An aligned
// 2×2 block of a face whose four pixels all see one plane becomes one sample: its footprint the sum of theirs,
// its point their area-weighted centroid, its g their area-weighted mean (so it carries their power, Σ A·g), its
// normal the first's. A layer's mean over the hemicube (ldc_builder.hpp) then averages the same surface with the
// same weights, a quarter of the samples later. Blocks are not merged where the four differ: an occluder's edge,
// two surfaces meeting (a sample with an edge reach), a surface narrower than the block, so that shadows,
// edges and thin geometry keep the hemicube's full resolution.
// The rule, one for the CPU (src/bake/bake.cpp) and the GPU warp (shaders/ldc_insert.comp): the block is
// merged when all four are samples without an edge reach and, for k = 1..3 against the first,
//   n_k·n_0 ≥ kMergeNormalCos,   ((p_k − p_0)·n_0)² ≤ kMergeOffPlane2·A_max,   |p_k − p_0|² ≤ kMergeApart2·A_max,
// A_max the largest footprint of the four (m²): off the plane by at most 0.1% of a footprint's side, and no
// farther apart than neighbours (two footprints' sides along each axis, with room).
inline constexpr float kMergeNormalCos = 0.9999f;
inline constexpr float kMergeOffPlane2 = 1e-6f;
inline constexpr float kMergeApart2 = 16.0f;

// One hemicube pixel's sample before it joins the hemicube's samples: the radiosity it carries is Φ·g.
struct PixelSample {
  glm::vec3 position{0.0f};  // world units
  glm::vec3 normal{0.0f};    // facing the VPL, as rendered (unit up to rounding)
  glm::vec3 edgeReach{0.0f};
  float g = 0.0f;     // the VPL's geometry term there (clamped), 1/m²
  float area = 0.0f;  // footprint, m²
  bool valid = false;  // the pixel sees a surface the VPL lights
};

// True when the aligned 2×2 block (k = 2·row + column) merges into one sample (the rule above).
inline bool mergeableBlock(const PixelSample (&block)[4]) {
  float maxArea = 0.0f;
  for (const PixelSample& s : block) {
    if (!s.valid || s.edgeReach != glm::vec3(0.0f)) return false;
    maxArea = std::max(maxArea, s.area);
  }
  const glm::vec3& p0 = block[0].position;
  const glm::vec3& n0 = block[0].normal;
  for (int k = 1; k < 4; ++k) {
    const glm::vec3 apart = block[k].position - p0;
    const float offPlane = glm::dot(apart, n0);
    if (!(glm::dot(block[k].normal, n0) >= kMergeNormalCos && offPlane * offPlane <= kMergeOffPlane2 * maxArea &&
          glm::dot(apart, apart) <= kMergeApart2 * maxArea))
      return false;
  }
  return true;
}

// The block's merged sample: sums in the order k = 0..3, the centroid and g divided by the summed footprint.
inline PixelSample mergedSample(const PixelSample (&block)[4]) {
  PixelSample merged = block[0];
  float area = 0.0f, areaG = 0.0f;
  glm::vec3 areaPosition(0.0f);
  for (const PixelSample& s : block) {
    area += s.area;
    areaG += s.area * s.g;
    areaPosition += s.area * s.position;
  }
  merged.position = areaPosition / area;
  merged.g = areaG / area;
  merged.area = area;
  return merged;
}

// Solid angle (sr) of a hemicube pixel centred at (a, b) on a face at unit distance from the centre, with pixel
// side `pixelSide` in the same face units (2/H for a full face of H pixels spanning [-1, 1]):
//   dω = pixelSide² · cos α / ρ² = pixelSide² / (1 + a² + b²)^{3/2},   ρ² = 1 + a² + b², cos α = 1/ρ.
// Over all five faces of a hemicube these sum to 2π.
float hemicubePixelSolidAngle(float a, float b, float pixelSide);

}  // namespace ibrr
