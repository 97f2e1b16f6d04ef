#include "lightmap/atlas.hpp"

#include "ibrr/checksum.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/stopwatch.hpp"

#include <algorithm>
#include <utility>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace ibrr::lightmap {
namespace {

// A scene triangle in world space (positions as the GPU sees them: float, transformed in float).
struct WorldTriangle {
  glm::vec3 corner[3];
  glm::vec2 texcoord[3] = {};  // the mesh's texture coordinates (albedo textures); 0 when it has none
  glm::dvec3 normal{0.0};  // unit front normal; zero when degenerate
  double area = 0.0;       // world units²
  std::uint32_t material = 0;
  glm::vec3 vertexNormalSum{0.0f};  // for a usable normal on degenerate triangles
};

bool isFinite(const glm::vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

std::vector<WorldTriangle> worldTriangles(const scene::Scene& scene) {
  std::vector<WorldTriangle> triangles;
  triangles.reserve(scene.triangleCount());
  for (const scene::MeshInstance& instance : scene.instances) {
    const scene::TriangleMesh& mesh = scene.meshes[instance.mesh];
    const glm::mat3 normalToWorld = glm::transpose(glm::inverse(glm::mat3(instance.objectToWorld)));
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
      WorldTriangle triangle;
      for (int k = 0; k < 3; ++k) {
        const std::uint32_t v = mesh.triangles[t][k];
        triangle.corner[k] = glm::vec3(instance.objectToWorld * glm::vec4(mesh.positions[v], 1.0f));
        if (v < mesh.texcoords.size()) triangle.texcoord[k] = mesh.texcoords[v];
        if (v < mesh.normals.size()) triangle.vertexNormalSum += normalToWorld * mesh.normals[v];
      }
      triangle.material = mesh.triangleMaterials[t];
      const glm::dvec3 cross = glm::cross(glm::dvec3(triangle.corner[1]) - glm::dvec3(triangle.corner[0]),
                                          glm::dvec3(triangle.corner[2]) - glm::dvec3(triangle.corner[0]));
      const double twiceArea = glm::length(cross);
      if (twiceArea > 0.0 && std::isfinite(twiceArea)) {
        triangle.area = 0.5 * twiceArea;
        triangle.normal = cross / twiceArea;
      }
      triangles.push_back(triangle);
    }
  }
  return triangles;
}

// Triangle adjacency over shared edges, vertices welded by exact world position. Compressed rows:
// the neighbours of triangle t are neighbours[first[t] .. first[t+1]).
struct Adjacency {
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> neighbours;
};

Adjacency buildAdjacency(const std::vector<WorldTriangle>& triangles) {
  const std::size_t cornerCount = triangles.size() * 3;
  // Weld: sort corners by their position's bit pattern; equal positions get one id.
  struct CornerKey {
    std::uint32_t bits[3];
    std::uint32_t corner;
  };
  std::vector<CornerKey> keys(cornerCount);
  for (std::size_t c = 0; c < cornerCount; ++c) {
    glm::vec3 p = triangles[c / 3].corner[c % 3];
    p += glm::vec3(0.0f);  // -0 and +0 weld together
    std::memcpy(keys[c].bits, &p, sizeof(keys[c].bits));
    keys[c].corner = std::uint32_t(c);
  }
  std::sort(keys.begin(), keys.end(), [](const CornerKey& a, const CornerKey& b) {
    if (a.bits[0] != b.bits[0]) return a.bits[0] < b.bits[0];
    if (a.bits[1] != b.bits[1]) return a.bits[1] < b.bits[1];
    if (a.bits[2] != b.bits[2]) return a.bits[2] < b.bits[2];
    return a.corner < b.corner;
  });
  std::vector<std::uint32_t> vertexOf(cornerCount);
  std::uint32_t vertex = 0;
  for (std::size_t i = 0; i < cornerCount; ++i) {
    if (i > 0 && std::memcmp(keys[i].bits, keys[i - 1].bits, sizeof(keys[i].bits)) != 0) ++vertex;
    vertexOf[keys[i].corner] = vertex;
  }
  // Edges keyed by their welded end points; triangles sharing a key are neighbours.
  struct EdgeRecord {
    std::uint64_t key;
    std::uint32_t triangle;
  };
  std::vector<EdgeRecord> edges;
  edges.reserve(cornerCount);
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (int k = 0; k < 3; ++k) {
      const std::uint32_t a = vertexOf[3 * t + k], b = vertexOf[3 * t + (k + 1) % 3];
      if (a == b) continue;
      edges.push_back({(std::uint64_t(std::min(a, b)) << 32) | std::max(a, b), std::uint32_t(t)});
    }
  std::sort(edges.begin(), edges.end(), [](const EdgeRecord& x, const EdgeRecord& y) {
    return x.key != y.key ? x.key < y.key : x.triangle < y.triangle;
  });
  // Pairs of neighbours: every pair within a group of up to 8 triangles on one edge (non-manifold
  // edges), only consecutive ones beyond that.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::size_t begin = 0; begin < edges.size();) {
    std::size_t end = begin + 1;
    while (end < edges.size() && edges[end].key == edges[begin].key) ++end;
    const std::size_t count = end - begin;
    for (std::size_t i = begin; i < end; ++i)
      for (std::size_t j = i + 1; j < end && (count <= 8 || j == i + 1); ++j)
        if (edges[i].triangle != edges[j].triangle) {
          pairs.emplace_back(edges[i].triangle, edges[j].triangle);
          pairs.emplace_back(edges[j].triangle, edges[i].triangle);
        }
    begin = end;
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  Adjacency adjacency;
  adjacency.first.assign(triangles.size() + 1, 0);
  for (const auto& pair : pairs) ++adjacency.first[pair.first + 1];
  std::partial_sum(adjacency.first.begin(), adjacency.first.end(), adjacency.first.begin());
  adjacency.neighbours.resize(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) adjacency.neighbours[i] = pairs[i].second;  // already grouped
  return adjacency;
}

// Charts by flood fill from the first unassigned triangle (in scene order): a neighbour joins when
// its normal n satisfies n·n_seed ≥ chartNormalCosine. Degenerate (zero-area) triangles join any
// neighbouring chart without the normal test; isolated ones become charts of their own.
std::vector<std::uint32_t> growCharts(const std::vector<WorldTriangle>& triangles, const Adjacency& adjacency,
                                      double normalCosine, std::vector<glm::dvec3>& chartNormals) {
  constexpr std::uint32_t kUnassigned = 0xffffffffu;
  std::vector<std::uint32_t> chartOf(triangles.size(), kUnassigned);
  std::vector<std::uint32_t> queue;
  for (int round = 0; round < 2; ++round)
    for (std::size_t seed = 0; seed < triangles.size(); ++seed) {
      if (chartOf[seed] != kUnassigned) continue;
      const bool degenerate = triangles[seed].area <= 0.0;
      if (round == 0 && degenerate) continue;
      const std::uint32_t chart = std::uint32_t(chartNormals.size());
      glm::dvec3 normal = triangles[seed].normal;
      if (degenerate) {
        const glm::dvec3 sum(triangles[seed].vertexNormalSum);
        normal = glm::length(sum) > 0.0 && std::isfinite(glm::length(sum)) ? glm::normalize(sum) : glm::dvec3(0, 0, 1);
      }
      chartNormals.push_back(normal);
      chartOf[seed] = chart;
      queue.assign(1, std::uint32_t(seed));
      for (std::size_t head = 0; head < queue.size(); ++head) {
        const std::uint32_t t = queue[head];
        for (std::uint32_t i = adjacency.first[t]; i < adjacency.first[t + 1]; ++i) {
          const std::uint32_t n = adjacency.neighbours[i];
          if (chartOf[n] != kUnassigned) continue;
          if (triangles[n].area > 0.0 && glm::dot(triangles[n].normal, normal) < normalCosine) continue;
          chartOf[n] = chart;
          queue.push_back(n);
        }
      }
    }
  return chartOf;
}

// An orthonormal basis (tangent, bitangent) of the plane with unit normal n, with the tangent along
// the world axis least aligned with n (so that walls and floors map to axis-aligned rectangles) and
// tangent × bitangent = n (counter-clockwise triangles stay counter-clockwise in UV).
void planeBasis(const glm::dvec3& n, glm::dvec3& tangent, glm::dvec3& bitangent) {
  const glm::dvec3 a = glm::abs(n);
  const glm::dvec3 axis = (a.x <= a.y && a.x <= a.z) ? glm::dvec3(1, 0, 0)
                          : (a.y <= a.z)             ? glm::dvec3(0, 1, 0)
                                                     : glm::dvec3(0, 0, 1);
  tangent = glm::normalize(axis - n * glm::dot(n, axis));
  bitangent = glm::cross(n, tangent);
}

// The convex hull of points (Andrew's monotone chain), counter-clockwise, without collinear points.
std::vector<glm::dvec2> convexHull(std::vector<glm::dvec2> points) {
  std::sort(points.begin(), points.end(),
            [](const glm::dvec2& a, const glm::dvec2& b) { return a.x != b.x ? a.x < b.x : a.y < b.y; });
  points.erase(std::unique(points.begin(), points.end()), points.end());
  if (points.size() < 3) return points;
  auto turn = [](const glm::dvec2& o, const glm::dvec2& a, const glm::dvec2& b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
  };
  std::vector<glm::dvec2> hull(2 * points.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    while (k >= 2 && turn(hull[k - 2], hull[k - 1], points[i]) <= 0.0) --k;
    hull[k++] = points[i];
  }
  for (std::size_t i = points.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && turn(hull[k - 2], hull[k - 1], points[i]) <= 0.0) --k;
    hull[k++] = points[i];
  }
  hull.resize(k - 1);
  return hull;
}

// The rotation (cos, sin) that gives the chart's points their smallest bounding rectangle (one of
// the hull's edges lies along an axis: rotating calipers), then turned by 90° if needed so that the
// rectangle is at least as wide as high (shelves stay low). Keeps the identity unless a rotation
// saves more than 0.1% of the area, so that axis-aligned walls stay as they are.
glm::dvec2 bestRotation(const std::vector<glm::dvec2>& points) {
  const std::vector<glm::dvec2> hull = convexHull(points);
  auto boundsFor = [&](const glm::dvec2& rotation) {
    glm::dvec2 lo(std::numeric_limits<double>::max()), hi(-std::numeric_limits<double>::max());
    for (const glm::dvec2& p : hull) {
      const glm::dvec2 q(rotation.x * p.x - rotation.y * p.y, rotation.y * p.x + rotation.x * p.y);
      lo = glm::min(lo, q);
      hi = glm::max(hi, q);
    }
    return hi - lo;
  };
  glm::dvec2 best(1.0, 0.0);
  glm::dvec2 bestSize = boundsFor(best);
  if (hull.size() >= 3) {
    for (std::size_t i = 0; i < hull.size(); ++i) {
      const glm::dvec2 edge = hull[(i + 1) % hull.size()] - hull[i];
      const double length = glm::length(edge);
      if (!(length > 0.0)) continue;
      const glm::dvec2 rotation(edge.x / length, -edge.y / length);  // turns the edge onto +x
      const glm::dvec2 size = boundsFor(rotation);
      if (size.x * size.y < 0.999 * bestSize.x * bestSize.y) {
        best = rotation;
        bestSize = size;
      }
    }
  }
  if (bestSize.y > bestSize.x) best = glm::dvec2(-best.y, best.x);  // a further 90°
  return best;
}

// The charts' projected UVs at a density of 1 texel per scene unit, and their bounds.
struct ChartLayout {
  std::vector<glm::dvec2> unitUv;                // per corner (3 per triangle)
  std::vector<glm::dvec2> boundsMin, boundsMax;  // per chart
  std::vector<double> projectedArea;             // per chart, scene units² (≤ chartArea: projection)
};

ChartLayout projectCharts(const std::vector<WorldTriangle>& triangles, const std::vector<std::uint32_t>& chartOf,
                          const std::vector<glm::dvec3>& chartNormals) {
  const std::size_t chartCount = chartNormals.size();
  ChartLayout layout;
  layout.unitUv.resize(triangles.size() * 3);
  layout.boundsMin.assign(chartCount, glm::dvec2(std::numeric_limits<double>::max()));
  layout.boundsMax.assign(chartCount, glm::dvec2(-std::numeric_limits<double>::max()));
  layout.projectedArea.assign(chartCount, 0.0);
  std::vector<glm::dvec3> tangents(chartCount), bitangents(chartCount);
  for (std::size_t c = 0; c < chartCount; ++c) planeBasis(chartNormals[c], tangents[c], bitangents[c]);
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const std::uint32_t c = chartOf[t];
    // A non-finite corner (only in scenes built in code: loading drops such triangles) takes the
    // UV of a finite corner, so that it cannot stretch its chart.
    int finite = -1;
    for (int k = 0; k < 3 && finite < 0; ++k)
      if (isFinite(triangles[t].corner[k])) finite = k;
    for (int k = 0; k < 3; ++k) {
      const int source = isFinite(triangles[t].corner[k]) ? k : finite;
      const glm::dvec3 p = source >= 0 ? glm::dvec3(triangles[t].corner[source]) : glm::dvec3(0.0);
      layout.unitUv[3 * t + k] = glm::dvec2(glm::dot(p, tangents[c]), glm::dot(p, bitangents[c]));
    }
  }
  // Each chart turned in its plane to its smallest bounding rectangle (charts in order, their
  // triangles in scene order: deterministic).
  std::vector<std::uint32_t> firstTriangle(chartCount + 1, 0), trianglesByChart(triangles.size());
  for (std::uint32_t c : chartOf) ++firstTriangle[c + 1];
  std::partial_sum(firstTriangle.begin(), firstTriangle.end(), firstTriangle.begin());
  std::vector<std::uint32_t> cursor(firstTriangle.begin(), firstTriangle.end() - 1);
  for (std::size_t t = 0; t < triangles.size(); ++t) trianglesByChart[cursor[chartOf[t]]++] = std::uint32_t(t);
  std::vector<glm::dvec2> points;
  for (std::size_t c = 0; c < chartCount; ++c) {
    points.clear();
    for (std::uint32_t i = firstTriangle[c]; i < firstTriangle[c + 1]; ++i)
      for (int k = 0; k < 3; ++k) points.push_back(layout.unitUv[3 * trianglesByChart[i] + k]);
    const glm::dvec2 rotation = bestRotation(points);
    for (std::uint32_t i = firstTriangle[c]; i < firstTriangle[c + 1]; ++i) {
      const std::uint32_t t = trianglesByChart[i];
      glm::dvec2* uv = &layout.unitUv[3 * t];
      for (int k = 0; k < 3; ++k) {
        uv[k] = glm::dvec2(rotation.x * uv[k].x - rotation.y * uv[k].y, rotation.y * uv[k].x + rotation.x * uv[k].y);
        layout.boundsMin[c] = glm::min(layout.boundsMin[c], uv[k]);
        layout.boundsMax[c] = glm::max(layout.boundsMax[c], uv[k]);
      }
      const glm::dvec2 e1 = uv[1] - uv[0], e2 = uv[2] - uv[0];
      layout.projectedArea[c] += 0.5 * std::abs(e1.x * e2.y - e1.y * e2.x);
    }
  }
  return layout;
}

// Each chart's world box over its triangles' finite corners; a chart with none has min > max.
struct ChartBoxes {
  std::vector<glm::dvec3> min, max;
  [[nodiscard]] bool empty(std::size_t chart) const { return min[chart].x > max[chart].x; }
};
ChartBoxes chartWorldBoxes(const std::vector<WorldTriangle>& triangles, const std::vector<std::uint32_t>& chartOf,
                           std::size_t chartCount) {
  ChartBoxes boxes{std::vector<glm::dvec3>(chartCount, glm::dvec3(std::numeric_limits<double>::max())),
                   std::vector<glm::dvec3>(chartCount, glm::dvec3(-std::numeric_limits<double>::max()))};
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (const glm::vec3& corner : triangles[t].corner)
      if (isFinite(corner)) {
        boxes.min[chartOf[t]] = glm::min(boxes.min[chartOf[t]], glm::dvec3(corner));
        boxes.max[chartOf[t]] = glm::max(boxes.max[chartOf[t]], glm::dvec3(corner));
      }
  return boxes;
}

// Charts near a light at `factor` times the density: their layout is scaled as if they were that
// much larger, so packing, footprints and UVs follow, and each texel's area (world area / UV area,
// patches.cpp) stays exact. Near = the chart's world box within `reach` scene units of the box of
// a chart with an emissive triangle (box-to-box distance); emitting charts themselves are left as
// they are. Returns the number of charts refined.
std::size_t refineChartsNearEmitters(const std::vector<WorldTriangle>& triangles, const std::vector<std::uint32_t>& chartOf,
                                     const std::vector<std::uint8_t>& materialEmits, double reach, double factor,
                                     ChartLayout& layout) {
  if (factor == 1.0) return 0;
  const std::size_t chartCount = layout.boundsMin.size();
  const ChartBoxes box = chartWorldBoxes(triangles, chartOf, chartCount);
  std::vector<std::uint8_t> emits(chartCount, 0);
  for (std::size_t t = 0; t < triangles.size(); ++t)
    if (triangles[t].material < materialEmits.size() && materialEmits[triangles[t].material]) emits[chartOf[t]] = 1;
  std::vector<std::uint32_t> emitterCharts;
  for (std::uint32_t c = 0; c < chartCount; ++c)
    if (emits[c] && !box.empty(c)) emitterCharts.push_back(c);
  std::vector<std::uint8_t> refined(chartCount, 0);
  std::size_t refinedCount = 0;
  for (std::uint32_t c = 0; c < chartCount; ++c) {
    if (emits[c] || box.empty(c)) continue;
    for (std::uint32_t e : emitterCharts) {
      const glm::dvec3 gap =
          glm::max(glm::dvec3(0.0), glm::max(box.min[e] - box.max[c], box.min[c] - box.max[e]));
      if (glm::length(gap) <= reach) {
        refined[c] = 1;
        ++refinedCount;
        break;
      }
    }
  }
  for (std::size_t t = 0; t < triangles.size(); ++t)
    if (refined[chartOf[t]])
      for (int k = 0; k < 3; ++k) layout.unitUv[3 * t + k] *= factor;
  for (std::size_t c = 0; c < chartCount; ++c)
    if (refined[c]) {
      layout.boundsMin[c] *= factor;
      layout.boundsMax[c] *= factor;
      layout.projectedArea[c] *= factor * factor;
    }
  return refinedCount;
}

// Charts smaller than a texel waste the atlas: each costs a whole texel plus padding on every side. At the
// expected density, a chart less than a texel across in both directions joins the edge-adjacent
// chart whose normal is closest, as long as every chart already in either keeps n·n_host > 0 (no
// triangle turns over); one less than a texel thin (a column facet) joins likewise if
// n·n_host ≥ cos 60° holds throughout. Smallest charts first, ties by id: deterministic. The
// merged triangles project onto the host's plane (they shrink by cos θ there; patches.cpp gives
// them their true area) and add less than a texel to its extent.
// A chart joins only a host whose plane it lies within half a texel of (every corner of every
// member): a projection forgets the distance along the normal, so a facet a metre in front of the
// host would share the host's texels, placed on the host, and show the host's light.
// Charts with an emissive triangle neither join nor host: a small light (a lamp smaller than a
// texel) keeps texels of its own, whose area is its own, so its power stays π·L·A; merged into a
// wall it would either lose its texels (no light) or lend its emission to the wall's (too much).
constexpr double kMergePlaneTexels = 0.5;  // how far off its host's plane a merged chart may lie, in texels

class ChartMerger {
public:
  ChartMerger(const std::vector<WorldTriangle>& triangles, const ChartLayout& layout, double density,
              const std::vector<std::uint8_t>& materialEmits, const std::vector<std::uint32_t>& chartOf,
              const std::vector<glm::dvec3>& chartNormals)
      : m_triangles(triangles), m_layout(layout), m_density(density), m_chartOf(chartOf), m_chartNormals(chartNormals),
        m_chartCount(chartNormals.size()), m_chartBox(chartWorldBoxes(triangles, chartOf, m_chartCount)) {
    m_area.assign(m_chartCount, 0.0);
    for (std::size_t t = 0; t < triangles.size(); ++t) m_area[chartOf[t]] += triangles[t].area;
    m_emits.assign(m_chartCount, 0);
    for (std::size_t t = 0; t < triangles.size(); ++t)
      if (triangles[t].material < materialEmits.size() && materialEmits[triangles[t].material])
        m_emits[chartOf[t]] = 1;
    m_root.resize(m_chartCount);
    std::iota(m_root.begin(), m_root.end(), 0u);
    m_members.resize(m_chartCount);
    for (std::uint32_t c = 0; c < m_chartCount; ++c) m_members[c] = {c};
    m_firstTriangle.assign(m_chartCount + 1, 0);
    m_trianglesByChart.resize(triangles.size());
    for (std::uint32_t c : chartOf) ++m_firstTriangle[c + 1];
    std::partial_sum(m_firstTriangle.begin(), m_firstTriangle.end(), m_firstTriangle.begin());
    std::vector<std::uint32_t> cursor(m_firstTriangle.begin(), m_firstTriangle.end() - 1);
    for (std::size_t t = 0; t < triangles.size(); ++t) m_trianglesByChart[cursor[chartOf[t]]++] = std::uint32_t(t);
    m_order.resize(m_chartCount);
    std::iota(m_order.begin(), m_order.end(), 0u);
    std::sort(m_order.begin(), m_order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return m_area[a] != m_area[b] ? m_area[a] < m_area[b] : a < b;
    });
    computePlaneOffsets();
  }

  // Small and thin charts join the edge neighbour whose normal is closest (see mergeSmallCharts).
  void joinEdgeNeighbours(const Adjacency& adjacency) {
    constexpr double kThinCosine = 0.5;
    for (std::uint32_t c : m_order) {
      const glm::dvec2 extent = (m_layout.boundsMax[c] - m_layout.boundsMin[c]) * m_density;
      const double minimumCosine = std::max(extent.x, extent.y) < 1.0   ? 1e-6
                                   : std::min(extent.x, extent.y) < 1.0 ? kThinCosine
                                                                        : 2.0;
      if (minimumCosine > 1.0 || m_emits[c]) continue;
      const std::uint32_t self = find(c);
      std::uint32_t best = self;
      double bestCosine = -2.0;
      for (std::uint32_t i = m_firstTriangle[c]; i < m_firstTriangle[c + 1]; ++i) {
        const std::uint32_t t = m_trianglesByChart[i];
        for (std::uint32_t j = adjacency.first[t]; j < adjacency.first[t + 1]; ++j) {
          const std::uint32_t host = find(m_chartOf[adjacency.neighbours[j]]);
          if (host == self || m_emits[host]) continue;
          const double cosine = glm::dot(m_chartNormals[host], m_chartNormals[c]);
          if (cosine > bestCosine || (cosine == bestCosine && host < best)) {
            bestCosine = cosine;
            best = host;
          }
        }
      }
      if (best == self || bestCosine < minimumCosine) continue;
      bool allAgree = true;
      for (std::uint32_t member : m_members[self])
        allAgree = allAgree && glm::dot(m_chartNormals[member], m_chartNormals[best]) >= minimumCosine;
      if (!allAgree || !liesOnPlaneOf(self, best)) continue;
      m_root[self] = best;
      m_members[best].insert(m_members[best].end(), m_members[self].begin(), m_members[self].end());
      m_members[self].clear();
    }
  }

  // Crumbs with no edge neighbour to join (small separate objects: screws, knobs) join the nearest
  // chart within two texels, with n·n_host > 0, found in a grid of one-texel cells (crumbGrid). A crumb is
  // looked up by its first triangle's centroid; distance = to the triangle's bounding box.
  void joinNearbyCharts() {
    const std::vector<GridEntry> grid = crumbGrid();
    const double reach = 2.0 / m_density;
    for (std::uint32_t c : m_order) {
      const glm::dvec2 extent = (m_layout.boundsMax[c] - m_layout.boundsMin[c]) * m_density;
      if (std::max(extent.x, extent.y) >= 1.0 || find(c) != c || m_members[c].size() != 1 || m_emits[c]) continue;
      const glm::dvec3 position = centroidOf(m_trianglesByChart[m_firstTriangle[c]]);
      const glm::dvec3 cell = cellOf(position);
      std::uint32_t best = c;
      double bestDistance = reach;
      for (int neighbour = 0; neighbour < 27; ++neighbour) {
        const std::uint64_t key =
            cellKey(cell + glm::dvec3(neighbour % 3 - 1, neighbour / 3 % 3 - 1, neighbour / 9 - 1));
        auto it = std::lower_bound(grid.begin(), grid.end(), key,
                                   [](const GridEntry& entry, std::uint64_t k) { return entry.key < k; });
        for (; it != grid.end() && it->key == key; ++it) {
          const std::uint32_t host = find(it->chart);
          if (host == c || m_emits[host] || !(glm::dot(m_chartNormals[host], m_chartNormals[c]) > 0.0)) continue;
          const double distance = glm::length(glm::max(
              glm::dvec3(0.0), glm::max(m_boxMin[it->triangle] - position, position - m_boxMax[it->triangle])));
          if ((distance < bestDistance || (distance == bestDistance && host < best)) && liesOnPlaneOf(c, host)) {
            bestDistance = distance;
            best = host;
          }
        }
      }
      if (best == c) continue;
      m_root[c] = best;
      m_members[best].push_back(c);
      m_members[c].clear();
    }
  }

  // New chart ids in order of each chart's first triangle; a merged chart takes its host's normal.
  void renumber(std::vector<std::uint32_t>& chartOf, std::vector<glm::dvec3>& chartNormals) {
    constexpr std::uint32_t kNone = 0xffffffffu;
    std::vector<std::uint32_t> renumbered(m_chartCount, kNone);
    std::vector<glm::dvec3> normals;
    for (std::uint32_t& chart : chartOf) {
      const std::uint32_t r = find(chart);
      if (renumbered[r] == kNone) {
        renumbered[r] = std::uint32_t(normals.size());
        normals.push_back(chartNormals[r]);
      }
      chart = renumbered[r];
    }
    chartNormals = std::move(normals);
  }

private:
  struct GridEntry {
    std::uint64_t key;
    std::uint32_t chart;
    std::uint32_t triangle;
  };

  std::uint32_t find(std::uint32_t c) {
    while (m_root[c] != c) c = m_root[c] = m_root[m_root[c]];
    return c;
  }

  // A triangle's centroid (the origin when a corner is not finite).
  glm::dvec3 centroidOf(std::size_t t) const {
    const WorldTriangle& triangle = m_triangles[t];
    const glm::dvec3 p =
        (glm::dvec3(triangle.corner[0]) + glm::dvec3(triangle.corner[1]) + glm::dvec3(triangle.corner[2])) / 3.0;
    return glm::all(glm::lessThan(glm::abs(p), glm::dvec3(1e30))) ? p : glm::dvec3(0.0);
  }

  // Each chart's plane n_c·x = offset_c: the area-weighted mean of n_c·centroid over its triangles
  // (its first triangle's centroid when none has an area).
  void computePlaneOffsets() {
    m_planeOffset.assign(m_chartCount, 0.0);
    for (std::uint32_t c = 0; c < m_chartCount; ++c) {
      if (m_firstTriangle[c] == m_firstTriangle[c + 1]) continue;
      double weighted = 0.0, weight = 0.0;
      for (std::uint32_t i = m_firstTriangle[c]; i < m_firstTriangle[c + 1]; ++i) {
        const std::uint32_t t = m_trianglesByChart[i];
        weighted += m_triangles[t].area * glm::dot(m_chartNormals[c], centroidOf(t));
        weight += m_triangles[t].area;
      }
      m_planeOffset[c] = weight > 0.0 ? weighted / weight
                                      : glm::dot(m_chartNormals[c], centroidOf(m_trianglesByChart[m_firstTriangle[c]]));
    }
  }

  // Every member of `joining` lies within kMergePlaneTexels of the host's plane. Each chart's world box gives
  // a quick bound: over a box of centre m and half-size h the distance to a plane n·x = offset is at most
  // |n·m − offset| + |n|·h (the corners are tested only when that bound is over the tolerance).
  bool liesOnPlaneOf(std::uint32_t joining, std::uint32_t host) const {
    const double planeTolerance = kMergePlaneTexels / m_density;
    const glm::dvec3& normal = m_chartNormals[host];
    for (std::uint32_t member : m_members[joining]) {
      if (m_chartBox.empty(member)) continue;  // no finite corner
      const glm::dvec3 centre = 0.5 * (m_chartBox.min[member] + m_chartBox.max[member]);
      const glm::dvec3 half = 0.5 * (m_chartBox.max[member] - m_chartBox.min[member]);
      if (std::abs(glm::dot(normal, centre) - m_planeOffset[host]) + glm::dot(glm::abs(normal), half) <=
          planeTolerance)
        continue;
      for (std::uint32_t i = m_firstTriangle[member]; i < m_firstTriangle[member + 1]; ++i)
        for (const glm::vec3& corner : m_triangles[m_trianglesByChart[i]].corner)
          if (isFinite(corner) &&
              std::abs(glm::dot(normal, glm::dvec3(corner)) - m_planeOffset[host]) > planeTolerance)
            return false;
    }
    return true;
  }

  glm::dvec3 cellOf(const glm::dvec3& p) const { return glm::floor(p * m_density); }
  static std::uint64_t cellKey(const glm::dvec3& cell) {
    std::uint64_t key = 0;
    for (int axis = 0; axis < 3; ++axis) key = (key << 21) | (std::uint64_t(std::int64_t(cell[axis])) & 0x1fffffu);
    return key;
  }

  // The grid of one-texel cells: per cell, each chart with a triangle whose bounding box meets the cell
  // (once, at its first such triangle; a triangle spanning more than 512 cells only at its centroid's cell, so
  // that big walls cost nothing: a crumb lying on one stays a chart of its own). Sets the triangles' boxes.
  std::vector<GridEntry> crumbGrid() {
    std::vector<GridEntry> grid;
    grid.reserve(m_triangles.size());
    m_boxMin.resize(m_triangles.size());
    m_boxMax.resize(m_triangles.size());
    for (std::size_t t = 0; t < m_triangles.size(); ++t) {
      m_boxMin[t] = m_boxMax[t] = centroidOf(t);
      for (int k = 0; k < 3; ++k)
        if (isFinite(m_triangles[t].corner[k])) {
          m_boxMin[t] = glm::min(m_boxMin[t], glm::dvec3(m_triangles[t].corner[k]));
          m_boxMax[t] = glm::max(m_boxMax[t], glm::dvec3(m_triangles[t].corner[k]));
        }
      const glm::dvec3 lo = cellOf(m_boxMin[t]), hi = cellOf(m_boxMax[t]);
      const glm::dvec3 cells = hi - lo + 1.0;
      if (cells.x * cells.y * cells.z > 512.0) {
        grid.push_back({cellKey(cellOf(centroidOf(t))), m_chartOf[t], std::uint32_t(t)});
        continue;
      }
      for (double z = lo.z; z <= hi.z; ++z)
        for (double y = lo.y; y <= hi.y; ++y)
          for (double x = lo.x; x <= hi.x; ++x) grid.push_back({cellKey({x, y, z}), m_chartOf[t], std::uint32_t(t)});
    }
    std::sort(grid.begin(), grid.end(), [](const GridEntry& a, const GridEntry& b) {
      if (a.key != b.key) return a.key < b.key;
      return a.chart != b.chart ? a.chart < b.chart : a.triangle < b.triangle;
    });
    grid.erase(std::unique(grid.begin(), grid.end(),
                           [](const GridEntry& a, const GridEntry& b) { return a.key == b.key && a.chart == b.chart; }),
               grid.end());
    return grid;
  }

  const std::vector<WorldTriangle>& m_triangles;
  const ChartLayout& m_layout;
  double m_density;
  const std::vector<std::uint32_t>& m_chartOf;
  const std::vector<glm::dvec3>& m_chartNormals;
  std::size_t m_chartCount;
  ChartBoxes m_chartBox;
  std::vector<double> m_area;
  std::vector<std::uint8_t> m_emits;
  std::vector<std::uint32_t> m_root;                  // union-find of the merged charts
  std::vector<std::vector<std::uint32_t>> m_members;  // the charts each root holds
  std::vector<std::uint32_t> m_firstTriangle, m_trianglesByChart;
  std::vector<std::uint32_t> m_order;  // smallest first, ties by id
  std::vector<double> m_planeOffset;
  std::vector<glm::dvec3> m_boxMin, m_boxMax;  // per triangle (crumbGrid)
};

void mergeSmallCharts(const std::vector<WorldTriangle>& triangles, const Adjacency& adjacency,
                      const ChartLayout& layout, double density, const std::vector<std::uint8_t>& materialEmits,
                      std::vector<std::uint32_t>& chartOf, std::vector<glm::dvec3>& chartNormals) {
  ChartMerger merger(triangles, layout, density, materialEmits, chartOf, chartNormals);
  merger.joinEdgeNeighbours(adjacency);
  merger.joinNearbyCharts();
  merger.renumber(chartOf, chartNormals);
}

// Whole-texel footprint of a chart of extent `size` (scene units) at `density` texels per unit: at
// least one texel, and the smallest count that holds it.
glm::ivec2 footprintSize(const glm::dvec2& size, double density) {
  const glm::dvec2 texels = size * density;
  // A chart exactly k texels wide needs k texels; 1e-9 absorbs the rounding of size·density.
  return glm::max(glm::ivec2(1), glm::ivec2(glm::ceil(texels - 1e-9)));
}

struct Packing {
  int width = 0;
  int height = 0;
  std::vector<glm::ivec2> origin;  // per chart: first texel of its footprint
  bool fits = true;                // within the size limit asked for
};

// Shelf packing: footprints sorted by height (then width, then chart id), placed left to right on
// shelves of width `shelfWidth`, with `padding` texels between footprints and around the atlas.
Packing shelfPack(const std::vector<glm::ivec2>& sizes, const std::vector<std::uint32_t>& order, int padding,
                  int shelfWidth) {
  Packing packing;
  packing.origin.resize(sizes.size());
  int x = padding, y = padding, shelfHeight = 0, right = 0;
  for (std::uint32_t c : order) {
    const glm::ivec2 size = sizes[c];
    if (x > padding && x + size.x + padding > shelfWidth) {
      y += shelfHeight + padding;
      x = padding;
      shelfHeight = 0;
    }
    packing.origin[c] = {x, y};
    x += size.x + padding;
    right = std::max(right, x);
    shelfHeight = std::max(shelfHeight, size.y);
  }
  packing.width = std::max(right, 1);
  packing.height = std::max(y + shelfHeight + padding, 1);
  return packing;
}

struct PackResult {
  std::vector<glm::ivec2> sizes;
  Packing packing;
};

PackResult packAtDensity(const ChartLayout& layout, double density, int padding, int shelfWidth) {
  PackResult result;
  const std::size_t chartCount = layout.boundsMin.size();
  result.sizes.resize(chartCount);
  for (std::size_t c = 0; c < chartCount; ++c)
    result.sizes[c] = footprintSize(layout.boundsMax[c] - layout.boundsMin[c], density);
  std::vector<std::uint32_t> order(chartCount);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const glm::ivec2 &sa = result.sizes[a], &sb = result.sizes[b];
    if (sa.y != sb.y) return sa.y > sb.y;
    if (sa.x != sb.x) return sa.x > sb.x;
    return a < b;
  });
  if (shelfWidth <= 0) {
    // Free size: shelves about as wide as the square root of the padded footprints' total area.
    double paddedArea = 0.0;
    int widest = 0;
    for (const glm::ivec2& size : result.sizes) {
      paddedArea += double(size.x + padding) * double(size.y + padding);
      widest = std::max(widest, size.x);
    }
    shelfWidth = std::max(widest + 2 * padding, int(std::ceil(std::sqrt(paddedArea))) + padding);
  }
  result.packing = shelfPack(result.sizes, order, padding, shelfWidth);
  return result;
}

// The largest density at which the charts fit size² (bisection on the shelf packing; not strictly
// monotonic, so the best density seen that fits is kept). An atlas too small for the charts'
// one-texel minimum footprints grows by doubling: `size` returns the size used. Throws
// ibrr::Error beyond 16384².
PackResult packToTarget(const ChartLayout& layout, int padding, int targetSize, double& density, int& size) {
  double projected = 0.0;
  for (double a : layout.projectedArea) projected += a;
  for (size = targetSize;; size *= 2) {
    double high = double(size) / std::sqrt(std::max(projected, 1e-300));  // the area bound
    double low = high * 1e-6;
    PackResult packed, trial;
    auto fits = [&](double d, PackResult& result) {
      result = packAtDensity(layout, d, padding, size);
      return result.packing.width <= size && result.packing.height <= size;
    };
    if (fits(low, trial)) {
      packed = std::move(trial);
      density = low;
      for (int iteration = 0; iteration < 40 && high / low > 1.0 + 1e-4; ++iteration) {
        const double middle = std::sqrt(low * high);
        if (fits(middle, trial)) {
          low = middle;
          packed = std::move(trial);
          density = middle;
        } else {
          high = middle;
        }
      }
      return packed;
    }
    if (size >= 16384)
      throw Error("atlas: " + std::to_string(layout.boundsMin.size()) +
                  " charts do not fit a 16384² atlas; lower the chart normal cosine or the padding");
  }
}

std::string formatted(const char* format, double a, double b = 0.0) {
  char text[128];
  std::snprintf(text, sizeof(text), format, a, b);
  return text;
}

}  // namespace

Lightmap solvedLightmap(const scene::Scene& scene, const LightmapAtlas& atlas, std::vector<glm::vec3> radiance,
                        std::string method, std::string settingsJson) {
  Lightmap lightmap;
  lightmap.atlasOptions.texelsPerUnit = atlas.texelsPerUnit;
  lightmap.width = atlas.width;
  lightmap.height = atlas.height;
  lightmap.radiance = std::move(radiance);
  lightmap.method = std::move(method);
  lightmap.settingsJson = std::move(settingsJson);
  lightmap.sceneFingerprint = scene.fingerprint();
  lightmap.atlasFingerprint = atlasFingerprint(atlas);
  return lightmap;
}

std::uint64_t atlasFingerprint(const LightmapAtlas& atlas) {
  const auto bytesOf = [](const auto& value) { return std::as_bytes(std::span(&value, 1)); };
  std::uint64_t hash = fnv1a64(bytesOf(atlas.width));
  hash = fnv1a64(bytesOf(atlas.height), hash);
  for (const LightmapVertex& vertex : atlas.vertices) hash = fnv1a64(bytesOf(vertex.lightmapUv), hash);
  return fnv1a64(std::as_bytes(std::span(atlas.triangleChart)), hash);
}

namespace {
// Throws ibrr::Error naming the option that lies out of its range.
void checkAtlasOptions(const AtlasOptions& options) {
  if (!(options.texelsPerUnit >= 0.0f) || !std::isfinite(options.texelsPerUnit))
    throw Error("atlas: texels per unit must be ≥ 0 (0 = fit the target size), got " +
                std::to_string(options.texelsPerUnit));
  if (options.texelsPerUnit == 0.0f &&
      (options.targetSize < kMinAtlasTargetSize || options.targetSize > kMaxAtlasTargetSize))
    throw Error("atlas: target size must be in [" + std::to_string(kMinAtlasTargetSize) + ", " +
                std::to_string(kMaxAtlasTargetSize) + "] texels, got " + std::to_string(options.targetSize));
  if (options.paddingTexels < 1 || options.paddingTexels > 64)
    throw Error("atlas: padding must be in [1, 64] texels, got " + std::to_string(options.paddingTexels));
  if (options.emitterRefinement < 1 || options.emitterRefinement > kMaxEmitterRefinement)
    throw Error("atlas: the refinement near lights must be in [1, " + std::to_string(kMaxEmitterRefinement) +
                "], got " + std::to_string(options.emitterRefinement));
  if (!(options.chartNormalCosine > -1.0f && options.chartNormalCosine <= 1.0f))
    throw Error("atlas: chart normal cosine must be in (-1, 1], got " + std::to_string(options.chartNormalCosine));
}
}  // namespace

LightmapAtlas buildAtlas(const scene::Scene& scene, const AtlasOptions& options) {
  checkAtlasOptions(options);
  const Stopwatch stopwatch;

  const std::vector<WorldTriangle> triangles = worldTriangles(scene);
  std::vector<std::uint8_t> materialEmits;
  for (const scene::Material& material : scene.materials) materialEmits.push_back(material.isEmissive() ? 1 : 0);
  if (triangles.empty()) throw Error("atlas: the scene has no triangles");
  const Adjacency adjacency = buildAdjacency(triangles);
  std::vector<glm::dvec3> chartNormals;
  std::vector<std::uint32_t> chartOf = growCharts(triangles, adjacency, options.chartNormalCosine, chartNormals);
  ChartLayout layout = projectCharts(triangles, chartOf, chartNormals);
  // The density small charts are judged at: the one given, or the largest that could fill
  // targetSize² (the actual one is lower, so no chart that will hold a texel is merged).
  double projectedTotal = 0.0;
  for (double a : layout.projectedArea) projectedTotal += a;
  double judgedDensity = options.texelsPerUnit > 0.0f
                             ? double(options.texelsPerUnit)
                             : double(options.targetSize) / std::sqrt(std::max(projectedTotal, 1e-300));
  // Charts near the lights are refined after the merge (which judges every chart at the base
  // density) and before the packing, in every round.
  std::size_t refinedCharts = 0;
  const auto projectAndRefine = [&] {
    layout = projectCharts(triangles, chartOf, chartNormals);
    refinedCharts = refineChartsNearEmitters(triangles, chartOf, materialEmits, kEmitterReachTexels / judgedDensity,
                                             double(options.emitterRefinement), layout);
  };
  mergeSmallCharts(triangles, adjacency, layout, judgedDensity, materialEmits, chartOf, chartNormals);
  projectAndRefine();
  double totalArea = 0.0;
  for (const WorldTriangle& triangle : triangles) totalArea += triangle.area;
  const int padding = options.paddingTexels;

  // The density: given, or the largest that fits targetSize². Small charts are judged at it, so
  // with a target size the merge and the packing repeat (at most 4 rounds).
  double density = options.texelsPerUnit;
  int atlasSize = options.targetSize;
  PackResult packed;
  for (int round = 0;; ++round) {
    if (options.texelsPerUnit > 0.0f) {
      packed = packAtDensity(layout, density, padding, 0);
    } else {
      packed = packToTarget(layout, padding, options.targetSize, density, atlasSize);
    }
    // Charts judged at the density the target size would give (when the atlas had to grow, about
    // density·target/size): re-merge while that is well below the density they were judged at.
    const double densityAtTarget = density * double(options.targetSize) / double(atlasSize);
    if (options.texelsPerUnit > 0.0f || round == 3 || densityAtTarget > 0.8 * judgedDensity) break;
    judgedDensity = densityAtTarget;
    mergeSmallCharts(triangles, adjacency, layout, judgedDensity, materialEmits, chartOf, chartNormals);
    projectAndRefine();
  }
  const std::size_t chartCount = chartNormals.size();
  if (atlasSize > options.targetSize)
    warn("atlas: " + std::to_string(chartCount) + " charts (each at least one texel plus " + std::to_string(padding) +
         " of padding) do not fit " + std::to_string(options.targetSize) + "²; the atlas grew to " +
         std::to_string(atlasSize) + "²");
  if (packed.packing.width > 16384 || packed.packing.height > 16384)
    throw Error("atlas: " + std::to_string(packed.packing.width) + "×" + std::to_string(packed.packing.height) +
                " texels at " + formatted("%.6g", density) +
                " texels per unit exceeds 16384; lower the density or use a target size");

  LightmapAtlas atlas;
  atlas.width = packed.packing.width;
  atlas.height = packed.packing.height;
  atlas.texelsPerUnit = float(density);
  atlas.chartCount = std::uint32_t(chartCount);
  atlas.paddingTexels = padding;
  atlas.triangleChart = chartOf;
  atlas.chartFootprints.resize(chartCount);
  atlas.chartArea.assign(chartCount, 0.0);
  atlas.chartNormals.assign(chartNormals.begin(), chartNormals.end());
  for (std::size_t c = 0; c < chartCount; ++c)
    atlas.chartFootprints[c] = {packed.packing.origin[c].x, packed.packing.origin[c].y, packed.sizes[c].x,
                                packed.sizes[c].y};
  // Each chart centred in its footprint: uv = origin + ((size − extent·d)/2) + (unitUv − min)·d.
  // Texel centres inside the chart's triangles are its texels; the footprint holds every texel
  // the chart touches, so charts never share a texel.
  atlas.vertices.resize(triangles.size() * 3);
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const std::uint32_t c = chartOf[t];
    atlas.chartArea[c] += triangles[t].area;
    const glm::dvec2 extent = (layout.boundsMax[c] - layout.boundsMin[c]) * density;
    const glm::dvec2 offset = glm::dvec2(packed.packing.origin[c]) + 0.5 * (glm::dvec2(packed.sizes[c]) - extent);
    const glm::vec3 normal(triangles[t].area > 0.0 ? triangles[t].normal : chartNormals[c]);
    for (int k = 0; k < 3; ++k) {
      LightmapVertex& vertex = atlas.vertices[3 * t + k];
      vertex.position = triangles[t].corner[k];
      vertex.normal = normal;
      vertex.lightmapUv = glm::vec2(offset + (layout.unitUv[3 * t + k] - layout.boundsMin[c]) * density);
      vertex.material = triangles[t].material;
      vertex.texcoord = triangles[t].texcoord[k];
    }
  }
  double projectedTexels = 0.0;
  for (double a : layout.projectedArea) projectedTexels += a * density * density;
  atlas.wastedFraction = std::clamp(1.0 - projectedTexels / (double(atlas.width) * double(atlas.height)), 0.0, 1.0);
  info("atlas: " + std::to_string(triangles.size()) + " triangles in " + std::to_string(chartCount) + " charts, " +
       std::to_string(atlas.width) + "×" + std::to_string(atlas.height) + " texels at " +
       formatted("%.4g texels per unit (1 texel = %.4g units)", density, 1.0 / density) + ", " +
       formatted("%.1f%% wasted, surface %.6g units², ", 100.0 * atlas.wastedFraction, totalArea) +
       (refinedCharts > 0 ? std::to_string(refinedCharts) + " charts near lights at " +
                                std::to_string(options.emitterRefinement) + "× the density, "
                          : std::string()) +
       formatted("%.2f s", stopwatch.seconds()));
  return atlas;
}

}  // namespace ibrr::lightmap
