#pragma once
// Shared set-up and measures of the lightmap solver tests: a scene's atlas and patch list, a
// lightmap's deviation from a constant radiance, and relative RMS differences.
#include "lightmap/atlas.hpp"
#include "lightmap/quadtree.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <span>

namespace ibrr::test {

struct AtlasAndPatches {
  lightmap::LightmapAtlas atlas;
  lightmap::PatchList patches;
};

// The atlas at `targetSize` (AtlasOptions::targetSize) and its patch list; makes the test GL
// context current first, as the solvers that follow need it.
inline AtlasAndPatches makeAtlasAndPatches(const scene::Scene& scene, int targetSize) {
  glContext();
  AtlasAndPatches out;
  lightmap::AtlasOptions options;
  options.targetSize = targetSize;
  out.atlas = lightmap::buildAtlas(scene, options);
  out.patches = lightmap::rasterizePatches(scene, out.atlas);
  return out;
}

// The atlas of `scene` at 2^depth times the density of a `rootSize`² atlas (the finest level of
// the adaptive quadtree) and its patch list; makes the test GL context current first.
inline AtlasAndPatches makeFinestAtlasAndPatches(const scene::Scene& scene, int rootSize, int depth) {
  glContext();
  lightmap::AtlasOptions root;
  root.targetSize = rootSize;
  AtlasAndPatches out;
  out.atlas = lightmap::buildAtlas(scene, lightmap::finestAtlasOptions(scene, root, depth));
  out.patches = lightmap::rasterizePatches(scene, out.atlas);
  return out;
}

// A lightmap against a constant radiance L* (the furnace's E / (1 − a)) over the valid texels,
// by the relative deviation δ = L / L* − 1 of each texel and channel (A: the texel's area).
struct ConstantDeviation {
  std::size_t texels = 0;       // valid texels
  double worst = 0.0;           // max |δ| over texels and channels
  double rms = 0.0;             // √(Σ A δ² / 3 / Σ A), over texels and channels
  double mean = 0.0;            // Σ A (L_r + L_g + L_b) / 3 / Σ A: the area-weighted mean radiance
  double texelMeanGreen = 0.0;  // Σ L_g / texels: the green channel's mean over texels, unweighted
};

inline ConstantDeviation deviationFrom(const lightmap::PatchList& patches, std::span<const glm::vec3> radiance,
                                       double expected) {
  ConstantDeviation d;
  double area = 0.0, squared = 0.0, sum = 0.0, green = 0.0;
  for (std::size_t t = 0; t < patches.texelCount(); ++t) {
    if (!patches.valid[t]) continue;
    ++d.texels;
    const double w = patches.area[t];
    area += w;
    green += radiance[t].g;
    for (int c = 0; c < 3; ++c) {
      const double deviation = double(radiance[t][c]) / expected - 1.0;
      d.worst = std::max(d.worst, std::abs(deviation));
      squared += w * deviation * deviation / 3.0;
      sum += w * double(radiance[t][c]) / 3.0;
    }
  }
  d.rms = std::sqrt(squared / area);
  d.mean = sum / area;
  d.texelMeanGreen = green / double(d.texels);
  return d;
}

// The relative RMS difference √(Σ w |x − y|² / Σ w |y|²) over the entries i that `use` accepts,
// each weighted by w = weight(i), 1 unless given; |·| sums the three channels.
template <typename Use, typename Weight = double (*)(std::size_t)>
double relativeRms(
    std::span<const glm::vec3> x, std::span<const glm::vec3> y, Use use,
    Weight weight = [](std::size_t) { return 1.0; }) {
  double squared = 0.0, reference = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!use(i)) continue;
    const glm::dvec3 d = glm::dvec3(x[i]) - glm::dvec3(y[i]);
    squared += weight(i) * glm::dot(d, d);
    reference += weight(i) * glm::dot(glm::dvec3(y[i]), glm::dvec3(y[i]));
  }
  return std::sqrt(squared / reference);
}

// Area-weighted over the valid texels: √(Σ A |x − y|² / Σ A |y|²).
inline double relativeRms(const lightmap::PatchList& patches, std::span<const glm::vec3> x,
                          std::span<const glm::vec3> y) {
  return relativeRms(
      x, y, [&](std::size_t t) { return patches.valid[t] != 0; },
      [&](std::size_t t) { return double(patches.area[t]); });
}

}  // namespace ibrr::test
