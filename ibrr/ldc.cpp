#include "ibrr/ldc.hpp"

#include "ibrr/error.hpp"
#include "ibrr/octahedral.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace ibrr {

namespace {

bool finite(const PackedLayer& l) {
  return std::isfinite(l.d) && std::isfinite(l.r) && std::isfinite(l.g) && std::isfinite(l.b);
}

glm::vec3 value(const PackedLayer& l) { return {l.r, l.g, l.b}; }

// The point where the plane (n, d) crosses the line of pixel centre (cu, cv) along LDI axis `ldi`.
// |n[ldi]| ≥ 1/√3 for every stored layer, so the division is safe.
glm::vec3 planePointAtPixel(int ldi, const glm::vec2& centreUV, const glm::vec3& n, float d) {
  const int u = ldiAxisU(ldi);
  const int v = ldiAxisV(ldi);
  glm::vec3 q(0.0f);
  q[u] = centreUV.x;
  q[v] = centreUV.y;
  q[ldi] = (d - n[u] * centreUV.x - n[v] * centreUV.y) / n[ldi];
  return q;
}

}  // namespace

LayeredDepthCube::LayeredDepthCube(const LdcParams& resolved, std::uint64_t vplCount,
                                   std::vector<std::uint32_t> offsets, std::vector<PackedLayer> layers)
    : m_params(resolved),
      m_frame(resolved),
      m_vplCount(vplCount),
      m_offsets(std::move(offsets)),
      m_layers(std::move(layers)) {
  const std::size_t expected = static_cast<std::size_t>(m_frame.pixelCount()) + 1;
  if (m_offsets.size() != expected)
    throw Error("LDC offset array has " + std::to_string(m_offsets.size()) +
                " entries, expected 3*R*R+1 = " + std::to_string(expected));
  if (m_offsets.front() != 0 || m_offsets.back() != m_layers.size())
    throw Error("LDC offsets must start at 0 and end at the layer count " + std::to_string(m_layers.size()));
  for (std::size_t k = 1; k < m_offsets.size(); ++k)
    if (m_offsets[k] < m_offsets[k - 1]) throw Error("LDC offsets decrease at pixel " + std::to_string(k - 1));
  for (std::size_t k = 0; k < m_layers.size(); ++k)
    if (!finite(m_layers[k])) throw Error("LDC layer " + std::to_string(k) + " holds a non-finite value");
  m_normals.resize(m_layers.size());
  for (std::size_t k = 0; k < m_layers.size(); ++k) m_normals[k] = octDecode(m_layers[k].normal);
}

void LayeredDepthCube::setBiasCompensation(std::uint32_t raysPerLayer, std::uint32_t passes) {
  if (raysPerLayer > kMaxBiasCompensationRays || passes > kMaxBiasCompensationPasses ||
      (raysPerLayer == 0) != (passes == 0))
    throw Error("bias compensation of " + std::to_string(raysPerLayer) + " rays per layer in " +
                std::to_string(passes) + " passes is out of range (rays 1.." +
                std::to_string(kMaxBiasCompensationRays) + ", passes 1.." + std::to_string(kMaxBiasCompensationPasses) +
                ", or both 0)");
  m_biasCompensationRays = raysPerLayer;
  m_biasCompensationPasses = passes;
}

std::span<const PackedLayer> LayeredDepthCube::pixelLayers(std::uint32_t globalPixel) const {
  IBRR_CHECK(globalPixel < m_frame.pixelCount(), "a store lookup outside the LDC's pixels");
  return std::span<const PackedLayer>(m_layers).subspan(m_offsets[globalPixel],
                                                        m_offsets[globalPixel + 1] - m_offsets[globalPixel]);
}

// Best match: the layer whose plane is nearest p among those passing both ε tests.
const PackedLayer* LayeredDepthCube::matchLayer(std::uint32_t globalPixel, const glm::vec3& p,
                                                const glm::vec3& n) const {
  const PackedLayer* best = nullptr;
  float bestDist = m_params.epsDistance;
  const float minCos = 1.0f - m_params.epsNormal;
  for (std::uint32_t k = m_offsets[globalPixel]; k < m_offsets[globalPixel + 1]; ++k) {
    const PackedLayer& layer = m_layers[k];
    const glm::vec3& ln = m_normals[k];
    const float dist = std::fabs(glm::dot(p, ln) - layer.d);
    if (dist < bestDist && glm::dot(n, ln) > minCos) {
      best = &layer;
      bestDist = dist;
    }
  }
  return best;
}

std::optional<glm::vec3> LayeredDepthCube::lookupInLdi(int ldi, const glm::vec3& p, const glm::vec3& n,
                                                       RetrievalFilter filter, int filterRadius) const {
  const int res = m_frame.resolution();
  const glm::vec2 pix = m_frame.toPixel(ldi, p);
  if (!(pix.x >= 0.0f && pix.y >= 0.0f && pix.x < static_cast<float>(res) && pix.y < static_cast<float>(res)))
    return std::nullopt;
  const int ci = std::min(static_cast<int>(pix.x), res - 1);
  const int cj = std::min(static_cast<int>(pix.y), res - 1);
  switch (filter) {
    case RetrievalFilter::Nearest: {
      const PackedLayer* layer = matchLayer(m_frame.globalPixel(ldi, ci, cj), p, n);
      if (!layer) return std::nullopt;
      return value(*layer);
    }
    case RetrievalFilter::Average: {
      const int k = std::clamp(filterRadius, 0, 8);
      glm::vec3 sum(0.0f);
      int matched = 0;
      for (int j = std::max(0, cj - k); j <= std::min(res - 1, cj + k); ++j)
        for (int i = std::max(0, ci - k); i <= std::min(res - 1, ci + k); ++i)
          if (const PackedLayer* layer = matchLayer(m_frame.globalPixel(ldi, i, j), p, n)) {
            sum += value(*layer);
            ++matched;
          }
      if (matched == 0) return std::nullopt;
      return sum / static_cast<float>(matched);
    }
    case RetrievalFilter::Bilinear: {
      // Pixel centres sit at integer + 0.5: interpolate between the four around p.
      const float x = pix.x - 0.5f;
      const float y = pix.y - 0.5f;
      const int i0 = static_cast<int>(std::floor(x));
      const int j0 = static_cast<int>(std::floor(y));
      const float fx = x - static_cast<float>(i0);
      const float fy = y - static_cast<float>(j0);
      glm::vec3 sum(0.0f);
      float weightSum = 0.0f;
      bool any = false;
      for (int dj = 0; dj < 2; ++dj)
        for (int di = 0; di < 2; ++di) {
          const int i = i0 + di;
          const int j = j0 + dj;
          if (i < 0 || j < 0 || i >= res || j >= res) continue;
          const PackedLayer* layer = matchLayer(m_frame.globalPixel(ldi, i, j), p, n);
          if (!layer) continue;
          const float w = (di ? fx : 1.0f - fx) * (dj ? fy : 1.0f - fy);
          sum += w * value(*layer);
          weightSum += w;
          any = true;
        }
      if (!any) return std::nullopt;
      // Only zero-weight neighbours matched (p exactly on a pixel centre line): use the nearest pixel.
      if (weightSum < 1e-6f) return lookupInLdi(ldi, p, n, RetrievalFilter::Nearest, 0);
      return sum / weightSum;
    }
  }
  return std::nullopt;
}

std::optional<glm::vec3> LayeredDepthCube::radiosity(const glm::vec3& p, const glm::vec3& n, RetrievalFilter filter,
                                                     int filterRadius) const {
  if (m_offsets.empty()) return std::nullopt;
  const float len2 = glm::dot(n, n);
  if (!(len2 > 0.0f) || !std::isfinite(len2) || !std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
    return std::nullopt;
  const glm::vec3 nn = n / std::sqrt(len2);
  const int first = dominantAxis(nn);
  if (auto r = lookupInLdi(first, p, nn, filter, filterRadius)) return r;
  // Remaining axes by decreasing |n| component (a stored normal within ε_n may have had another dominant axis).
  int second = (first + 1) % 3;
  int third = (first + 2) % 3;
  if (std::fabs(nn[third]) > std::fabs(nn[second])) std::swap(second, third);
  if (auto r = lookupInLdi(second, p, nn, filter, filterRadius)) return r;
  return lookupInLdi(third, p, nn, filter, filterRadius);
}

StoreStats LayeredDepthCube::stats() const {
  StoreStats s;
  s.layerCount = m_layers.size();
  s.pixelCount = m_frame.pixelCount();
  for (std::size_t g = 0; g + 1 < m_offsets.size(); ++g) {
    const std::uint32_t n = m_offsets[g + 1] - m_offsets[g];
    if (n > 0) ++s.occupiedPixels;
    s.maxLayersPerPixel = std::max(s.maxLayersPerPixel, n);
  }
  s.layersPerOccupiedPixel =
      s.occupiedPixels ? static_cast<double>(s.layerCount) / static_cast<double>(s.occupiedPixels) : 0.0;
  s.layerBytes = s.layerCount * sizeof(PackedLayer);
  s.offsetBytes = m_offsets.size() * sizeof(std::uint32_t);
  s.totalBytes = s.layerBytes + s.offsetBytes;
  s.bytesPerLayer = sizeof(PackedLayer);
  s.bytesPerLayerAll = s.layerCount ? static_cast<double>(s.totalBytes) / static_cast<double>(s.layerCount) : 0.0;
  return s;
}

namespace {

// Where merge() puts every layer: the merged store's offsets and, per merged layer, the layer of `a` it continues
// (kFromNowhere for one appended from `b`), and per layer of `b` the merged layer it adds to. A pixel keeps a's
// layers in a's order; a layer of b whose plane, evaluated at the pixel centre, lies within ε of one of them (the
// closest, normals within ε_n) adds to it, the others are appended in b's order.
constexpr std::uint32_t kFromNowhere = std::numeric_limits<std::uint32_t>::max();
struct MergedLayout {
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> fromA;  // per merged layer
  std::vector<std::uint32_t> intoB;  // per layer of b: its merged layer
};

MergedLayout mergedLayout(const LayeredDepthCube& a, const LayeredDepthCube& b) {
  if (a.biasCompensationRays() != 0 || b.biasCompensationRays() != 0)
    throw Error("cannot merge stores baked with bias compensation (their emitted part would count twice); merge "
                "stores baked with --bias-compensation off");
  if (!sameLayout(a.params(), b.params()))
    throw Error(
        "cannot merge LDC stores built with different bounds, resolution, epsilon or scene fingerprint; "
        "bake every part with the same parameters");
  const LdcFrame& frame = a.frame();
  const float minCos = 1.0f - a.params().epsNormal;
  const int res = frame.resolution();
  MergedLayout layout;
  layout.offsets.resize(a.offsets().size());
  layout.fromA.reserve(a.layers().size() + b.layers().size());
  layout.intoB.resize(b.layers().size());
  std::vector<std::uint32_t> appended;  // layers of b appended to the current pixel
  std::uint32_t g = 0;
  for (int ldi = 0; ldi < 3; ++ldi)
    for (int j = 0; j < res; ++j)
      for (int i = 0; i < res; ++i, ++g) {
        const auto first = static_cast<std::uint32_t>(layout.fromA.size());
        layout.offsets[g] = first;
        for (std::uint32_t k = a.offsets()[g]; k < a.offsets()[g + 1]; ++k) layout.fromA.push_back(k);
        appended.clear();
        const glm::vec2 centre = frame.pixelCentre(ldi, i, j);
        for (std::uint32_t kb = b.offsets()[g]; kb < b.offsets()[g + 1]; ++kb) {
          const PackedLayer& lb = b.layers()[kb];
          const glm::vec3 nb = octDecode(lb.normal);
          const glm::vec3 q = planePointAtPixel(ldi, centre, nb, lb.d);
          std::uint32_t best = kFromNowhere;
          float bestDist = a.params().epsDistance;
          for (std::uint32_t k = a.offsets()[g]; k < a.offsets()[g + 1]; ++k) {
            const PackedLayer& la = a.layers()[k];
            const glm::vec3 na = octDecode(la.normal);
            const float dist = std::fabs(glm::dot(q, na) - la.d);
            if (dist < bestDist && glm::dot(nb, na) > minCos) {
              best = first + (k - a.offsets()[g]);
              bestDist = dist;
            }
          }
          if (best != kFromNowhere) {
            layout.intoB[kb] = best;
          } else {
            appended.push_back(kb);
          }
        }
        for (std::uint32_t kb : appended) {
          layout.intoB[kb] = static_cast<std::uint32_t>(layout.fromA.size());
          layout.fromA.push_back(kFromNowhere);
        }
      }
  layout.offsets[g] = static_cast<std::uint32_t>(layout.fromA.size());
  return layout;
}

// The merged layers of `layout` with planes from a (or b for appended ones) and counts added; radiosity as a's
// and b's floats added.
std::vector<PackedLayer> mergedLayers(const LayeredDepthCube& a, const LayeredDepthCube& b, const MergedLayout& layout) {
  std::vector<PackedLayer> layers(layout.fromA.size());
  for (std::size_t k = 0; k < layers.size(); ++k)
    if (layout.fromA[k] != kFromNowhere) layers[k] = a.layers()[layout.fromA[k]];
  for (std::size_t kb = 0; kb < layout.intoB.size(); ++kb) {
    PackedLayer& merged = layers[layout.intoB[kb]];
    const PackedLayer& lb = b.layers()[kb];
    if (layout.fromA[layout.intoB[kb]] == kFromNowhere) {
      merged = lb;
      continue;
    }
    merged.r += lb.r;
    merged.g += lb.g;
    merged.b += lb.b;
    merged.count += lb.count;
  }
  return layers;
}

}  // namespace

std::optional<RetrievalFilter> retrievalFilterNamed(std::string_view name) {
  for (const NamedRetrievalFilter& named : kRetrievalFilters)
    if (name == named.name) return named.filter;
  return std::nullopt;
}

RetrievalFilter parseRetrievalFilter(std::string_view name, std::string_view what) {
  if (const std::optional<RetrievalFilter> filter = retrievalFilterNamed(name)) return *filter;
  throw OptionError(std::string(what) + " '" + std::string(name) + "': choose none, box or bilinear");
}

LayeredDepthCube merge(const LayeredDepthCube& a, const LayeredDepthCube& b) {
  MergedLayout layout = mergedLayout(a, b);
  std::vector<PackedLayer> layers = mergedLayers(a, b, layout);
  return LayeredDepthCube(a.params(), a.vplCount() + b.vplCount(), std::move(layout.offsets), std::move(layers));
}

LayerSums::LayerSums(LayeredDepthCube layersIn, std::vector<glm::dvec3> sumsIn)
    : layers(std::move(layersIn)), sums(std::move(sumsIn)) {
  IBRR_CHECK(sums.size() == layers.layers().size(), "layer sums: one sum per layer");
}

LayerSums LayerSums::fromStore(LayeredDepthCube store) {
  std::vector<glm::dvec3> sums(store.layers().size());
  for (std::size_t k = 0; k < sums.size(); ++k) {
    const PackedLayer& l = store.layers()[k];
    sums[k] = glm::dvec3(l.r, l.g, l.b);
  }
  return LayerSums(std::move(store), std::move(sums));
}

LayerSums addLayerSums(const LayerSums& a, const LayerSums& b) {
  MergedLayout layout = mergedLayout(a.layers, b.layers);
  std::vector<glm::dvec3> sums(layout.fromA.size(), glm::dvec3(0.0));
  for (std::size_t k = 0; k < sums.size(); ++k)
    if (layout.fromA[k] != kFromNowhere) sums[k] = a.sums[layout.fromA[k]];
  for (std::size_t kb = 0; kb < layout.intoB.size(); ++kb) sums[layout.intoB[kb]] += b.sums[kb];
  std::vector<PackedLayer> layers = mergedLayers(a.layers, b.layers, layout);
  return LayerSums(LayeredDepthCube(a.layers.params(), a.layers.vplCount() + b.layers.vplCount(),
                                    std::move(layout.offsets), std::move(layers)),
                   std::move(sums));
}

LayeredDepthCube LayerSums::rounded() const {
  std::vector<PackedLayer> rounded(layers.layers().begin(), layers.layers().end());
  for (std::size_t k = 0; k < rounded.size(); ++k) {
    rounded[k].r = static_cast<float>(sums[k].r);
    rounded[k].g = static_cast<float>(sums[k].g);
    rounded[k].b = static_cast<float>(sums[k].b);
  }
  return LayeredDepthCube(layers.params(), layers.vplCount(),
                          std::vector<std::uint32_t>(layers.offsets().begin(), layers.offsets().end()),
                          std::move(rounded));
}

LayeredDepthCube scaleRadiosity(const LayeredDepthCube& store, float factor) {
  if (!(factor > 0.0f) || !std::isfinite(factor))
    throw Error("radiosity scale factor must be positive and finite, got " + std::to_string(factor));
  if (store.biasCompensationRays() != 0)
    throw Error("cannot scale a store baked with bias compensation (its emitted part does not scale with the paths)");
  std::vector<PackedLayer> layers(store.layers().begin(), store.layers().end());
  for (PackedLayer& layer : layers) {
    layer.r *= factor;
    layer.g *= factor;
    layer.b *= factor;
  }
  return LayeredDepthCube(store.params(), store.vplCount(),
                          std::vector<std::uint32_t>(store.offsets().begin(), store.offsets().end()), std::move(layers));
}

namespace {

// `fine` with `coarse`'s radiosity added to every layer (withIndirectLevel), recording `vplCount` hemicubes.
LayeredDepthCube withCoarseLevelAdded(const LayeredDepthCube& fine, const LayeredDepthCube& coarse,
                                      std::uint64_t vplCount) {
  if (fine.frame().origin() != coarse.frame().origin() || fine.frame().side() != coarse.frame().side())
    throw Error("the bounces' level must share the store's cube (the same bounds)");
  const LdcFrame& frame = fine.frame();
  std::vector<PackedLayer> layers(fine.layers().begin(), fine.layers().end());
  const std::span<const std::uint32_t> offsets = fine.offsets();
  for (std::uint32_t pixel = 0; pixel < frame.pixelCount(); ++pixel) {
    const int ldi = static_cast<int>(pixel / frame.pixelsPerLdi());
    const std::uint32_t inLdi = pixel % frame.pixelsPerLdi();
    const int i = static_cast<int>(inLdi % static_cast<std::uint32_t>(frame.resolution()));
    const int j = static_cast<int>(inLdi / static_cast<std::uint32_t>(frame.resolution()));
    const glm::vec2 centre = frame.pixelCentre(ldi, i, j);
    const int u = ldiAxisU(ldi), v = ldiAxisV(ldi);
    for (std::uint32_t k = offsets[pixel]; k < offsets[pixel + 1]; ++k) {
      PackedLayer& layer = layers[k];
      const glm::vec3 n = octDecode(layer.normal);
      glm::vec3 p(0.0f);  // the pixel's centre on the layer's plane n·p = d
      p[u] = centre.x;
      p[v] = centre.y;
      p[ldi] = (layer.d - n[u] * p[u] - n[v] * p[v]) / n[ldi];
      const glm::vec3 added = coarse.radiosity(p, n, RetrievalFilter::Bilinear).value_or(glm::vec3(0.0f));
      layer.r += added.r;
      layer.g += added.g;
      layer.b += added.b;
    }
  }
  return LayeredDepthCube(fine.params(), vplCount, std::vector<std::uint32_t>(offsets.begin(), offsets.end()),
                          std::move(layers));
}

}  // namespace

LayeredDepthCube withIndirectLevel(const LayeredDepthCube& fine, const LayeredDepthCube& coarse) {
  return withCoarseLevelAdded(fine, coarse, fine.vplCount() + coarse.vplCount());
}

LayeredDepthCube withCoarseRadiosity(const LayeredDepthCube& fine, const LayeredDepthCube& coarse) {
  return withCoarseLevelAdded(fine, coarse, fine.vplCount());
}

}  // namespace ibrr
