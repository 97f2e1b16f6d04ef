#pragma once
// Adaptive subdivision of the lightmap for progressive refinement (GPU Gems 2 ch. 39, §39.3, after
// Vedel & Puech 1991): every chart is the root of quadtrees whose leaves hold k×k radiosity
// elements ("texels"), split into four where the radiosity's second difference (the gradient's
// discontinuity, which linear interpolation cannot follow) is large.
//
// Layout. The atlas it works on is the *finest* level: built at 2^D times the roots' density
// (D = the deepest split), so an element of level m is an aligned block of 2^m × 2^m atlas texels
// of one chart (m = D at the roots, 0 at the deepest leaves), aligned to the chart's footprint. A
// leaf of level m covers k·2^m × k·2^m atlas texels; splitting it gives four leaves of level m − 1
// over the same texels, each again with k×k elements. An element's area, position, normal,
// albedo and emission are the area-weighted ones of its valid atlas texels, so a split keeps every
// area sum exactly (up to float rounding).
//
// No OpenGL: the solver (progressive.cpp) uploads the elements and reads their radiance back.
#include "lightmap/atlas.hpp"

#include <glm/glm.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ibrr::lightmap {

// The defaults: measured on the Cornell box against the uniform default (docs/adaptive_subdivision.md).
struct QuadtreeOptions {
  int depth = 3;                // D: splits below the roots, [1, 6]; the atlas must be 2^D times the roots' density
  int leafElements = 2;         // k: a leaf holds k×k elements, [1, 32] (the chapter uses 16)
  double splitThreshold = 1.0;  // split a leaf where an element's relative second difference exceeds this
  std::size_t maxElements = 0;   // stop splitting before the elements would exceed this; 0 = no limit
};

// Throws ibrr::Error naming the flag (--max-depth, --leaf-texels, --split-gradient) when out of range.
void validateQuadtreeOptions(const QuadtreeOptions& options);

// The atlas options for an adaptive solve whose roots have the density `base` gives: the same
// options at 2^depth times that density (buildAtlas() of `base` first tells the density when base
// gives a target size). Deterministic, so the lightmap's loader rebuilds the same atlas from them.
AtlasOptions finestAtlasOptions(const scene::Scene& scene, AtlasOptions base, int depth);

struct QuadtreeElement {
  std::uint32_t leaf = 0;        // index into leaves()
  int x = 0, y = 0;              // first atlas texel of its block
  int side = 1;                  // block side in atlas texels (2^level)
  std::uint32_t firstTexel = 0;  // its first valid atlas texel in row-major order (orders the elements)
  double area = 0.0;             // Σ area of its valid texels (scene units²)
  glm::vec3 position{0.0f};      // area-weighted mean position (on the chart's plane)
  glm::vec3 normal{0.0f};        // unit
  glm::vec3 albedo{0.0f};        // area-weighted ρ
  glm::vec3 emission{0.0f};      // area-weighted L_e
};

struct QuadtreeLeaf {
  std::uint32_t chart = 0;
  int x = 0, y = 0;  // first atlas texel of its k·side × k·side block
  int side = 1;      // its elements' side in atlas texels
};

// What split() did: for every element of the new list, the element of the old list it lies in
// (itself when its leaf was not split), and which are new (children of a split leaf).
struct QuadtreeSplit {
  std::size_t splitLeaves = 0;
  std::vector<std::uint32_t> source;
  std::vector<std::uint8_t> isNew;
  std::vector<std::uint32_t> newElements;  // indices of the new list's new elements
};

class LightmapQuadtree {
public:
  // The roots: every chart's footprint tiled by leaves of level D from its first texel. `atlas`
  // and `patches` must stay alive as long as the quadtree.
  LightmapQuadtree(const LightmapAtlas& atlas, const PatchList& patches, const QuadtreeOptions& options);

  [[nodiscard]] const std::vector<QuadtreeElement>& elements() const { return m_elements; }
  [[nodiscard]] const std::vector<QuadtreeLeaf>& leaves() const { return m_leaves; }
  [[nodiscard]] const QuadtreeOptions& options() const { return m_options; }
  // The element holding an atlas texel; kNone on padding.
  static constexpr std::uint32_t kNone = 0xffffffffu;
  [[nodiscard]] std::uint32_t elementOf(std::size_t texel) const { return m_elementOfTexel[texel]; }

  // Per element, its relative second difference: the largest over the atlas axes of
  // |l₋ − 2l + l₊| / max(l₋, l, l₊, floor) for the luminances (mean RGB) of the element and the
  // elements one block side away (one-sided, l − 2l₁ + l₂, at a chart's border), floor = 1% of the
  // area-weighted mean. A linear ramp gives 0; a shadow edge across the element about 1.
  [[nodiscard]] std::vector<float> secondDifferences(std::span<const glm::vec3> radiance) const;

  // Splits the leaves (not yet at level 0) holding an element above the threshold, worst first,
  // while the element count stays within maxElements. `radiance` is per current element.
  QuadtreeSplit split(std::span<const glm::vec3> radiance);

  // The atlas-sized radiance (0 on padding) of per-element radiance: an atlas texel in an element
  // of side s > 1 takes the bilinear interpolation, at its position, of its chart's grid of s-sided
  // cells, each cell the area-weighted mean of the elements over it (renormalised over the cells
  // that hold surface); a texel of a level-0 element its element's value.
  [[nodiscard]] std::vector<glm::vec3> atlasRadiance(std::span<const glm::vec3> radiance) const;

  // Darkens (× 0.2) the atlas texels along every leaf's first row and column: the leaf borders
  // for a picture of the subdivision.
  void drawLeafBorders(std::vector<glm::vec3>& atlasRadiance) const;

private:
  // The elements of `leaf` (its k×k blocks that hold a valid texel of its chart), marked as leaf `leafIndex`.
  std::vector<QuadtreeElement> leafElements(const QuadtreeLeaf& leaf, std::uint32_t leafIndex) const;
  void rebuild(std::vector<std::vector<QuadtreeElement>> perLeaf);

  const LightmapAtlas& m_atlas;
  const PatchList& m_patches;
  QuadtreeOptions m_options;
  std::vector<QuadtreeLeaf> m_leaves;
  std::vector<QuadtreeElement> m_elements;  // ordered by firstTexel
  std::vector<std::uint32_t> m_elementOfTexel;
};

}  // namespace ibrr::lightmap
