#include "lightmap/quadtree.hpp"

#include "util/error.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

namespace ibrr::lightmap {
namespace {

float luminance(const glm::vec3& c) { return (c.r + c.g + c.b) / 3.0f; }

// Per chart and element side s, the chart's footprint cut into s-sided cells: Σ A·L and Σ A of the
// texels in each cell (scene units², W·sr⁻¹·m⁻² · units²).
struct CellGrid {
  int x = 0, y = 0, columns = 0, rows = 0, side = 1;
  std::vector<glm::dvec3> weighted;
  std::vector<double> area;
  std::vector<int> coarsest;  // the largest element side over the cell
  [[nodiscard]] bool holds(int column, int row) const {
    return column >= 0 && row >= 0 && column < columns && row < rows && area[std::size_t(row * columns + column)] > 0.0;
  }
  [[nodiscard]] glm::dvec3 mean(int column, int row) const {
    const std::size_t i = std::size_t(row * columns + column);
    return weighted[i] / area[i];
  }
  // Bilinear between the centres of the cells that hold surface (renormalised) at `point` (atlas
  // texel units); none when no cell around it does.
  [[nodiscard]] std::optional<glm::dvec3> interpolate(const glm::dvec2& point) const {
    const double u = (point.x - x) / side - 0.5, v = (point.y - y) / side - 0.5;
    const int column = int(std::floor(u)), row = int(std::floor(v));
    const double fu = u - column, fv = v - row;
    glm::dvec3 sum(0.0);
    double weights = 0.0;
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) {
        if (!holds(column + i, row + j)) continue;
        const double w = (i ? fu : 1.0 - fu) * (j ? fv : 1.0 - fv);
        sum += w * mean(column + i, row + j);
        weights += w;
      }
    if (weights <= 1e-9) return std::nullopt;
    return sum / weights;
  }
};

}  // namespace

void validateQuadtreeOptions(const QuadtreeOptions& options) {
  if (options.depth < 1 || options.depth > 6)
    throw OptionError("--max-depth " + std::to_string(options.depth) + ": give 1 to 6 levels of splitting");
  if (options.leafElements < 1 || options.leafElements > 32)
    throw OptionError("--leaf-texels " + std::to_string(options.leafElements) + ": give a leaf side in [1, 32] texels");
  if (!(options.splitThreshold > 0.0) || !std::isfinite(options.splitThreshold))
    throw OptionError("--split-gradient " + std::to_string(options.splitThreshold) +
                ": give a relative second difference > 0 (e.g. 1)");
}

AtlasOptions finestAtlasOptions(const scene::Scene& scene, AtlasOptions base, int depth) {
  if (base.texelsPerUnit == 0.0f) base.texelsPerUnit = buildAtlas(scene, base).texelsPerUnit;
  base.texelsPerUnit *= float(1 << depth);
  return base;
}

LightmapQuadtree::LightmapQuadtree(const LightmapAtlas& atlas, const PatchList& patches,
                                   const QuadtreeOptions& options)
    : m_atlas(atlas), m_patches(patches), m_options(options) {
  validateQuadtreeOptions(options);
  IBRR_CHECK(atlas.chartFootprints.size() == atlas.chartCount,
             "adaptive subdivision is given an atlas with its chart footprints (one buildAtlas made)");
  const int rootSide = 1 << options.depth;
  const int extent = options.leafElements * rootSide;
  for (std::uint32_t chart = 0; chart < atlas.chartCount; ++chart) {
    const LightmapAtlas::Footprint& f = atlas.chartFootprints[chart];
    for (int y = f.y; y < f.y + f.height; y += extent)
      for (int x = f.x; x < f.x + f.width; x += extent) m_leaves.push_back({chart, x, y, rootSide});
  }
  std::vector<std::vector<QuadtreeElement>> perLeaf(m_leaves.size());
  for (std::uint32_t l = 0; l < m_leaves.size(); ++l) perLeaf[l] = leafElements(m_leaves[l], l);
  rebuild(std::move(perLeaf));
}

std::vector<QuadtreeElement> LightmapQuadtree::leafElements(const QuadtreeLeaf& leaf, std::uint32_t leafIndex) const {
  std::vector<QuadtreeElement> out;
  const int k = m_options.leafElements;
  for (int row = 0; row < k; ++row) {
    for (int column = 0; column < k; ++column) {
      QuadtreeElement e;
      e.leaf = leafIndex;
      e.x = leaf.x + column * leaf.side;
      e.y = leaf.y + row * leaf.side;
      e.side = leaf.side;
      glm::dvec3 position(0.0), normal(0.0), albedo(0.0), emission(0.0);
      std::size_t count = 0;
      for (int y = e.y; y < std::min(e.y + e.side, m_patches.height); ++y) {
        for (int x = e.x; x < std::min(e.x + e.side, m_patches.width); ++x) {
          const std::size_t t = std::size_t(y) * std::size_t(m_patches.width) + std::size_t(x);
          if (!m_patches.valid[t] || m_atlas.triangleChart[m_patches.triangle[t]] != leaf.chart) continue;
          if (count++ == 0) e.firstTexel = std::uint32_t(t);
          const double a = m_patches.area[t];
          e.area += a;
          position += a * glm::dvec3(m_patches.position[t]);
          normal += a * glm::dvec3(m_patches.normal[t]);
          albedo += a * glm::dvec3(m_patches.albedo[t]);
          emission += a * glm::dvec3(m_patches.emission[t]);
        }
      }
      if (count == 0) continue;
      const std::uint32_t t = e.firstTexel;
      if (count == 1 || !(e.area > 0.0)) {  // one texel (or no area): its own values, bit for bit
        e.position = m_patches.position[t], e.normal = m_patches.normal[t];
        e.albedo = m_patches.albedo[t], e.emission = m_patches.emission[t];
      } else {
        e.position = glm::vec3(position / e.area);
        e.normal = glm::length(normal) > 0.0 ? glm::vec3(glm::normalize(normal)) : m_patches.normal[t];
        e.albedo = glm::vec3(albedo / e.area);
        e.emission = glm::vec3(emission / e.area);
      }
      out.push_back(e);
    }
  }
  return out;
}

void LightmapQuadtree::rebuild(std::vector<std::vector<QuadtreeElement>> perLeaf) {
  m_elements.clear();
  for (std::vector<QuadtreeElement>& elements : perLeaf)
    m_elements.insert(m_elements.end(), elements.begin(), elements.end());
  std::sort(m_elements.begin(), m_elements.end(),
            [](const QuadtreeElement& a, const QuadtreeElement& b) { return a.firstTexel < b.firstTexel; });
  m_elementOfTexel.assign(m_patches.texelCount(), kNone);
  for (std::uint32_t i = 0; i < m_elements.size(); ++i) {
    const QuadtreeElement& e = m_elements[i];
    const std::uint32_t chart = m_leaves[e.leaf].chart;
    for (int y = e.y; y < std::min(e.y + e.side, m_patches.height); ++y)
      for (int x = e.x; x < std::min(e.x + e.side, m_patches.width); ++x) {
        const std::size_t t = std::size_t(y) * std::size_t(m_patches.width) + std::size_t(x);
        if (m_patches.valid[t] && m_atlas.triangleChart[m_patches.triangle[t]] == chart) m_elementOfTexel[t] = i;
      }
  }
}

std::vector<float> LightmapQuadtree::secondDifferences(std::span<const glm::vec3> radiance) const {
  double weighted = 0.0, area = 0.0;
  for (std::size_t i = 0; i < m_elements.size(); ++i) {
    weighted += m_elements[i].area * double(luminance(radiance[i]));
    area += m_elements[i].area;
  }
  const float floor = std::max(float(0.01 * weighted / std::max(area, 1e-300)), 1e-30f);
  std::vector<float> out(m_elements.size(), 0.0f);
  for (std::size_t i = 0; i < m_elements.size(); ++i) {
    const QuadtreeElement& e = m_elements[i];
    const std::uint32_t chart = m_leaves[e.leaf].chart;
    const int px = e.x + e.side / 2, py = e.y + e.side / 2;
    // The luminance of the element of this chart `steps` block sides away along (dx, dy), or −1.
    const auto at = [&](int dx, int dy, int steps) {
      const int x = px + dx * steps * e.side, y = py + dy * steps * e.side;
      if (x < 0 || y < 0 || x >= m_patches.width || y >= m_patches.height) return -1.0f;
      const std::uint32_t n = m_elementOfTexel[std::size_t(y) * std::size_t(m_patches.width) + std::size_t(x)];
      if (n == kNone || m_leaves[m_elements[n].leaf].chart != chart) return -1.0f;
      return luminance(radiance[n]);
    };
    const float l = luminance(radiance[i]);
    float worst = 0.0f;
    for (const glm::ivec2 axis : {glm::ivec2(1, 0), glm::ivec2(0, 1)}) {
      const float before = at(-axis.x, -axis.y, 1), after = at(axis.x, axis.y, 1);
      float difference = 0.0f, scale = std::max(l, floor);
      if (before >= 0.0f && after >= 0.0f) {
        difference = before - 2.0f * l + after;
        scale = std::max({scale, before, after});
      } else if (after >= 0.0f && at(axis.x, axis.y, 2) >= 0.0f) {  // at the chart's border: one-sided
        const float after2 = at(axis.x, axis.y, 2);
        difference = l - 2.0f * after + after2;
        scale = std::max({scale, after, after2});
      } else if (before >= 0.0f && at(-axis.x, -axis.y, 2) >= 0.0f) {
        const float before2 = at(-axis.x, -axis.y, 2);
        difference = l - 2.0f * before + before2;
        scale = std::max({scale, before, before2});
      }
      worst = std::max(worst, std::abs(difference) / scale);
    }
    out[i] = worst;
  }
  return out;
}

QuadtreeSplit LightmapQuadtree::split(std::span<const glm::vec3> radiance) {
  const std::vector<float> difference = secondDifferences(radiance);
  std::vector<float> leafWorst(m_leaves.size(), 0.0f);
  for (std::uint32_t i = 0; i < m_elements.size(); ++i)
    leafWorst[m_elements[i].leaf] = std::max(leafWorst[m_elements[i].leaf], difference[i]);
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t l = 0; l < m_leaves.size(); ++l)
    if (m_leaves[l].side > 1 && leafWorst[l] > float(m_options.splitThreshold)) candidates.push_back(l);
  QuadtreeSplit result;
  if (candidates.empty()) return result;  // the common case: called after every shot
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return leafWorst[a] > leafWorst[b]; });
  std::vector<std::vector<std::uint32_t>> membersOf(m_leaves.size());
  for (std::uint32_t i = 0; i < m_elements.size(); ++i) membersOf[m_elements[i].leaf].push_back(i);

  // Each candidate's four children and their elements, while the budget allows.
  std::vector<QuadtreeLeaf> leaves = m_leaves;
  std::vector<std::uint8_t> removed(m_leaves.size(), 0);
  std::vector<std::vector<QuadtreeElement>> childElements;  // per appended leaf
  std::size_t count = m_elements.size();
  for (const std::uint32_t l : candidates) {
    const QuadtreeLeaf parent = m_leaves[l];
    const int half = parent.side / 2, extent = m_options.leafElements * half;
    std::vector<std::pair<QuadtreeLeaf, std::vector<QuadtreeElement>>> children;
    std::size_t added = 0;
    for (int quadrant = 0; quadrant < 4; ++quadrant) {
      const QuadtreeLeaf child{parent.chart, parent.x + (quadrant & 1) * extent, parent.y + (quadrant >> 1) * extent,
                               half};
      std::vector<QuadtreeElement> elements = leafElements(child, 0);  // its index is set below
      added += elements.size();
      if (!elements.empty()) children.emplace_back(child, std::move(elements));
    }
    const std::size_t after = count - membersOf[l].size() + added;
    if (m_options.maxElements > 0 && after > m_options.maxElements) continue;
    count = after;
    removed[l] = 1;
    ++result.splitLeaves;
    for (auto& [child, elements] : children) {
      leaves.push_back(child);
      childElements.push_back(std::move(elements));
    }
  }
  if (result.splitLeaves == 0) return result;

  // The new leaf list (kept leaves in order, then the children) and every element's source.
  std::vector<std::uint32_t> newIndex(leaves.size());
  std::vector<QuadtreeLeaf> kept;
  std::vector<std::vector<QuadtreeElement>> perLeaf;
  std::vector<std::uint32_t> oldIndexOf;  // per element, in perLeaf order: old index or kNone (new)
  for (std::uint32_t l = 0; l < leaves.size(); ++l) {
    if (l < m_leaves.size() && removed[l]) continue;
    newIndex[l] = std::uint32_t(kept.size());
    kept.push_back(leaves[l]);
    std::vector<QuadtreeElement> elements;
    if (l < m_leaves.size()) {
      for (const std::uint32_t i : membersOf[l]) elements.push_back(m_elements[i]);
    } else {
      elements = std::move(childElements[l - m_leaves.size()]);
    }
    for (QuadtreeElement& e : elements) e.leaf = newIndex[l];
    perLeaf.push_back(std::move(elements));
  }
  const std::vector<std::uint32_t> oldElementOfTexel = m_elementOfTexel;
  const std::size_t oldLeafCount = m_leaves.size();
  m_leaves = std::move(kept);
  rebuild(std::move(perLeaf));
  result.source.resize(m_elements.size());
  result.isNew.resize(m_elements.size());
  for (std::uint32_t i = 0; i < m_elements.size(); ++i) {
    const QuadtreeElement& e = m_elements[i];
    result.source[i] = oldElementOfTexel[e.firstTexel];
    // A child's first texel lies in its parent: new when the leaf it belongs to was appended.
    result.isNew[i] = std::uint8_t(e.leaf >= oldLeafCount - result.splitLeaves);
    if (result.isNew[i]) result.newElements.push_back(i);
  }
  return result;
}

std::vector<glm::vec3> LightmapQuadtree::atlasRadiance(std::span<const glm::vec3> radiance) const {
  // Per chart and level m ≥ 1, the cells of side 2^m: the area-weighted mean of the elements over
  // each, or, for a cell inside a coarser element, the next coarser grid interpolated at its centre
  // (so a linear field stays linear across a change of level).
  std::vector<std::vector<CellGrid>> grids(m_atlas.chartCount, std::vector<CellGrid>(std::size_t(m_options.depth)));
  for (std::uint32_t chart = 0; chart < m_atlas.chartCount; ++chart) {
    const LightmapAtlas::Footprint& f = m_atlas.chartFootprints[chart];
    for (int m = 1; m <= m_options.depth; ++m) {
      CellGrid& g = grids[chart][std::size_t(m - 1)];
      g.side = 1 << m;
      g.x = f.x, g.y = f.y;
      g.columns = (f.width + g.side - 1) / g.side, g.rows = (f.height + g.side - 1) / g.side;
      g.weighted.assign(std::size_t(g.columns * g.rows), glm::dvec3(0.0));
      g.area.assign(std::size_t(g.columns * g.rows), 0.0);
      g.coarsest.assign(std::size_t(g.columns * g.rows), 0);
    }
  }
  for (std::size_t t = 0; t < m_patches.texelCount(); ++t) {
    const std::uint32_t e = m_elementOfTexel[t];
    if (e == kNone) continue;
    const int x = int(t % std::size_t(m_patches.width)), y = int(t / std::size_t(m_patches.width));
    for (CellGrid& g : grids[m_leaves[m_elements[e].leaf].chart]) {
      const std::size_t cell = std::size_t((y - g.y) / g.side * g.columns + (x - g.x) / g.side);
      g.weighted[cell] += double(m_patches.area[t]) * glm::dvec3(radiance[e]);
      g.area[cell] += double(m_patches.area[t]);
      g.coarsest[cell] = std::max(g.coarsest[cell], m_elements[e].side);
    }
  }
  for (std::vector<CellGrid>& chartGrids : grids)
    for (int m = m_options.depth - 1; m >= 1; --m) {
      CellGrid& g = chartGrids[std::size_t(m - 1)];
      const CellGrid& coarser = chartGrids[std::size_t(m)];
      for (int row = 0; row < g.rows; ++row)
        for (int column = 0; column < g.columns; ++column) {
          const std::size_t cell = std::size_t(row * g.columns + column);
          if (g.area[cell] <= 0.0 || g.coarsest[cell] <= g.side) continue;
          const glm::dvec2 centre(g.x + (column + 0.5) * g.side, g.y + (row + 0.5) * g.side);
          if (const std::optional<glm::dvec3> value = coarser.interpolate(centre))
            g.weighted[cell] = *value * g.area[cell];
        }
    }
  std::vector<glm::vec3> out(m_patches.texelCount(), glm::vec3(0.0f));
  for (std::size_t t = 0; t < m_patches.texelCount(); ++t) {
    const std::uint32_t e = m_elementOfTexel[t];
    if (e == kNone) continue;
    const QuadtreeElement& element = m_elements[e];
    out[t] = radiance[e];
    if (element.side == 1) continue;
    const int level = int(std::lround(std::log2(double(element.side))));
    const CellGrid& g = grids[m_leaves[element.leaf].chart][std::size_t(level - 1)];
    const glm::dvec2 centre(double(t % std::size_t(m_patches.width)) + 0.5, double(t / std::size_t(m_patches.width)) + 0.5);
    if (const std::optional<glm::dvec3> value = g.interpolate(centre)) out[t] = glm::vec3(*value);
  }
  return out;
}

void LightmapQuadtree::drawLeafBorders(std::vector<glm::vec3>& atlasRadiance) const {
  const int k = m_options.leafElements;
  for (const QuadtreeLeaf& leaf : m_leaves) {
    const int extent = k * leaf.side;
    for (int i = 0; i < extent; ++i) {
      for (const glm::ivec2 p : {glm::ivec2(leaf.x + i, leaf.y), glm::ivec2(leaf.x, leaf.y + i)}) {
        if (p.x >= m_patches.width || p.y >= m_patches.height || (i == 0 && p.y != leaf.y)) continue;
        const std::size_t t = std::size_t(p.y) * std::size_t(m_patches.width) + std::size_t(p.x);
        if (m_elementOfTexel[t] != kNone && m_leaves[m_elements[m_elementOfTexel[t]].leaf].chart == leaf.chart)
          atlasRadiance[t] *= 0.2f;
      }
    }
  }
}

}  // namespace ibrr::lightmap
