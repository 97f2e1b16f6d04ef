#include "lightmap/form_factors.hpp"

#include "lightmap/gather.hpp"
#include "lightmap/gather_hemicubes.hpp"

#include <algorithm>
#include <map>

namespace ibrr::lightmap {

TexelFormFactors computeTexelFormFactors(const scene::Scene& scene, const LightmapAtlas& atlas,
                                         const PatchList& patches, int resolution, std::uint32_t seed,
                                         bool randomRotation, int layers) {
  TexelFormFactors factors;
  factors.texels = validTexels(patches);
  const std::size_t n = factors.texels.size();
  // Atlas index → hemicube index.
  std::vector<std::uint32_t> hemicubeOf(patches.texelCount(), std::uint32_t(-1));
  for (std::size_t i = 0; i < n; ++i) hemicubeOf[factors.texels[i]] = std::uint32_t(i);

  const std::vector<std::int32_t> seenTexel = seenTexelMap(patches);
  gpu::Texture seen(GL_R32I, atlas.width, atlas.height);
  glTextureSubImage2D(seen.id(), 0, 0, 0, atlas.width, atlas.height, GL_RED_INTEGER, GL_INT, seenTexel.data());

  const GatherHemicubeSetup setup = defaultHemicubeSetup(scene, atlas, seed, randomRotation);
  GatherHemicubeRenderer renderer(atlas, patches, factors.texels, setup, resolution, layers, GatherTarget::TexelId);
  const std::vector<float> weights = gatherMultiplierMap(resolution);
  const std::size_t layerPixels = weights.size();
  factors.rowStart.assign(1, 0);
  for (std::size_t first = 0; first < n; first += std::size_t(layers)) {
    const int count = int(std::min<std::size_t>(std::size_t(layers), n - first));
    renderer.render(first, count, resolution, seen.id());
    const std::vector<std::uint32_t> ids = renderer.readIds(count, resolution);
    for (int layer = 0; layer < count; ++layer) {
      std::map<std::uint32_t, double> row;  // seen hemicube index → Σ w
      for (std::size_t k = 0; k < layerPixels; ++k) {
        const std::uint32_t id = ids[std::size_t(layer) * layerPixels + k];
        if (id == 0) continue;  // nothing, or a back face
        row[hemicubeOf[id - 1]] += double(weights[k]);
      }
      for (const auto& [j, f] : row) {
        factors.column.push_back(j);
        factors.factor.push_back(float(f));
      }
      factors.rowStart.push_back(factors.column.size());
    }
  }
  return factors;
}

TexelSystem::TexelSystem(const TexelFormFactors& f, const PatchList& patches) : factors(f) {
  for (const std::uint32_t t : f.texels) {
    emission.emplace_back(patches.emission[t]);
    albedo.emplace_back(patches.albedo[t]);
  }
}

namespace {
glm::dvec3 gathered(const TexelSystem& system, std::size_t i, const std::vector<glm::dvec3>& radiance) {
  const TexelFormFactors& f = system.factors;
  glm::dvec3 sum(0.0);
  for (std::size_t k = f.rowStart[i]; k < f.rowStart[i + 1]; ++k) sum += double(f.factor[k]) * radiance[f.column[k]];
  return system.emission[i] + system.albedo[i] * sum;
}
}  // namespace

void jacobiStep(const TexelSystem& system, const std::vector<glm::dvec3>& current, std::vector<glm::dvec3>& next) {
  next.resize(current.size());
  for (std::size_t i = 0; i < current.size(); ++i) next[i] = gathered(system, i, current);
}

void gaussSeidelSweep(const TexelSystem& system, std::vector<glm::dvec3>& radiance) {
  for (std::size_t i = 0; i < radiance.size(); ++i) radiance[i] = gathered(system, i, radiance);
}

}  // namespace ibrr::lightmap
