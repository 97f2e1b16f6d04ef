// The form-factor matrix's direct light, ray traced per patch against the static scene (matrix_internal.hpp).
#include "lightmap/matrix_internal.hpp"

#include "rays/light_set.hpp"
#include "rays/sampler.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ibrr::lightmap {

// The scene without its emissive triangles: what shadow rays to the (movable) lights test.
std::unique_ptr<scene::Scene> staticScene(const scene::Scene& scene) {
  auto result = std::make_unique<scene::Scene>();
  result->materials = scene.materials;
  result->textures = scene.textures;
  std::vector<std::int64_t> newMesh(scene.meshes.size(), -1);
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    const scene::TriangleMesh& mesh = scene.meshes[m];
    scene::TriangleMesh kept = mesh;
    kept.triangles.clear();
    kept.triangleMaterials.clear();
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
      if (scene.materials[mesh.triangleMaterials[t]].isEmissive()) continue;
      kept.triangles.push_back(mesh.triangles[t]);
      kept.triangleMaterials.push_back(mesh.triangleMaterials[t]);
    }
    if (kept.triangles.empty()) continue;
    newMesh[m] = std::int64_t(result->meshes.size());
    result->meshes.push_back(std::move(kept));
  }
  for (const scene::MeshInstance& instance : scene.instances) {
    if (newMesh[instance.mesh] < 0) continue;
    result->instances.push_back({std::uint32_t(newMesh[instance.mesh]), instance.objectToWorld});
  }
  result->cameras = scene.cameras;
  result->finalize();
  return result;
}


// D_i = ρ_i/π · E_i per patch (see the header), with shadow rays against the static scene.
std::vector<glm::vec3> directLight(const scene::Scene& scene, const rays::EmbreeScene& shadows,
                                   const MatrixSolution& solution, const std::vector<MatrixLight>& lights,
                                   std::span<const glm::vec3> offsets, int samples, std::uint32_t seed) {
  const std::size_t n = solution.size();
  const std::vector<scene::EmissiveTriangle>& emitters = scene.emitters();
  // Samples per emissive triangle of each surface light, in proportion to area (at least 1).
  std::vector<std::vector<int>> perTriangle(lights.size());
  for (std::size_t l = 0; l < lights.size(); ++l) {
    if (lights[l].kind != MatrixLight::Kind::Surface) continue;
    double area = 0.0;
    for (const std::uint32_t e : lights[l].emitters) area += emitters[e].area;
    for (const std::uint32_t e : lights[l].emitters)
      perTriangle[l].push_back(
          std::max(1, int(std::lround(double(samples) * emitters[e].area / std::max(area, 1e-30)))));
  }
  const float eps = shadows.epsilon();
  constexpr float kInvPi = std::numbers::inv_pi_v<float>;
  std::vector<glm::vec3> d(n, glm::vec3(0.0f));
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 16), [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      const glm::vec3 nrm = solution.normal[i];
      const glm::vec3 origin = solution.position[i] + 4.0f * eps * nrm;
      glm::vec3 irradiance(0.0f);
      const auto visible = [&](const glm::vec3& target) {
        rays::Ray ray;
        ray.origin = origin;
        ray.direction = target - origin;
        ray.tNear = 0.0f;
        ray.tFar = 1.0f - 1e-4f;
        return !shadows.occluded(ray);
      };
      for (std::size_t l = 0; l < lights.size(); ++l) {
        const glm::vec3 offset = l < offsets.size() ? offsets[l] : glm::vec3(0.0f);
        const MatrixLight& light = lights[l];
        if (light.kind == MatrixLight::Kind::Surface) {
          const std::uint32_t stream = rays::hashCombine(rays::hashCombine(seed, std::uint32_t(l)), std::uint32_t(i));
          for (std::size_t k = 0; k < light.emitters.size(); ++k) {
            const scene::EmissiveTriangle& t = emitters[light.emitters[k]];
            const int count = perTriangle[l][k];
            const float weight = t.area / float(count);
            const std::uint32_t triangleStream = rays::hashCombine(stream, std::uint32_t(k));
            for (int s = 0; s < count; ++s) {
              const glm::vec2 u = rays::sobolPair(std::uint32_t(s), triangleStream, 0);
              const float su = std::sqrt(u.x);
              // Uniform on the triangle: (1 − √u₁, √u₁(1 − u₂), √u₁u₂) barycentrics; pdf 1/A.
              const glm::vec3 q = t.v0 + offset + su * (1.0f - u.y) * (t.v1 - t.v0) + su * u.y * (t.v2 - t.v0);
              const glm::vec3 toLight = q - origin;
              const float r2 = glm::dot(toLight, toLight);
              if (!(r2 > 0.0f)) continue;
              const float cosReceiver = glm::dot(nrm, toLight);
              const float cosLight = -glm::dot(t.normal, toLight);
              if (cosReceiver <= 0.0f || cosLight <= 0.0f) continue;
              if (!visible(q)) continue;
              irradiance += t.radiance * (weight * cosReceiver * cosLight / (r2 * r2));
            }
          }
        } else {
          glm::vec3 position, intensity;
          float profile = 1.0f;
          if (light.kind == MatrixLight::Kind::Point) {
            position = scene.pointLights[light.index].position + offset;
            intensity = scene.pointLights[light.index].intensity;
          } else {
            const scene::SpotLight& spot = scene.spotLights[light.index];
            position = spot.position + offset;
            intensity = spot.intensity;
            const glm::vec3 away = glm::normalize(origin - position);
            profile = rays::spotProfile(spot, glm::dot(spot.direction, away));
          }
          const glm::vec3 toLight = position - origin;
          const float r2 = glm::dot(toLight, toLight);
          const float cosReceiver = glm::dot(nrm, toLight);
          if (profile <= 0.0f || cosReceiver <= 0.0f || !(r2 > 0.0f) || !visible(position)) continue;
          irradiance += intensity * (profile * cosReceiver / (r2 * std::sqrt(r2)));
        }
      }
      d[i] = solution.albedo[i] * irradiance * kInvPi;
    }
  });
  return d;
}


}  // namespace ibrr::lightmap
