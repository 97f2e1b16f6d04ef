#pragma once
// Analytic scenes and helpers shared by the store tests (all lengths in metres, intensities in W/sr).

#include "ibrr/ldc_builder.hpp"
#include "ibrr/surface_seeds.hpp"
#include "ibrr/synthetic.hpp"

#include <glm/glm.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace ibrr::test {

using synthetic::AnalyticScene;
using synthetic::PointLight;

inline glm::vec3 analyticSum(const AnalyticScene& scene, const std::vector<PointLight>& lights, const glm::vec3& p,
                             const glm::vec3& n) {
  glm::vec3 sum(0.0f);
  for (const PointLight& l : lights) sum += synthetic::analyticRadiosity(scene, l, p, n);
  return sum;
}

// The two triangles of a quad, corner normals = its front normal: a quad as the geometry seeds take it.
inline void addQuadTriangles(const synthetic::Quad& q, std::vector<SeedTriangle>& out) {
  const glm::vec3 n = q.normal();
  const glm::vec3 a = q.origin, b = q.origin + q.edgeU, c = q.origin + q.edgeU + q.edgeV, d = q.origin + q.edgeV;
  out.push_back(SeedTriangle{{a, b, c}, {n, n, n}});
  out.push_back(SeedTriangle{{a, c, d}, {n, n, n}});
}

inline std::vector<HemicubeSamples> renderAll(const AnalyticScene& scene, const std::vector<PointLight>& lights,
                                              int hemicubeResolution) {
  std::vector<HemicubeSamples> out;
  for (const PointLight& l : lights) out.push_back(synthetic::renderHemicube(scene, l, hemicubeResolution));
  return out;
}

inline std::vector<HemicubeSampleView> views(const std::vector<HemicubeSamples>& samples) {
  std::vector<HemicubeSampleView> v;
  for (const HemicubeSamples& s : samples) v.push_back(s.view());
  return v;
}

inline LayeredDepthCube build(const AnalyticScene& scene, const std::vector<PointLight>& lights, int resolution,
                              int hemicubeResolution, SplatKernel kernel = SplatKernel::Box,
                              std::uint64_t fingerprint = 0) {
  LdcParams params;
  params.bounds = scene.bounds();
  params.resolution = resolution;
  params.sceneFingerprint = fingerprint;
  LdcBuilder builder(params, kernel);
  const auto samples = renderAll(scene, lights, hemicubeResolution);
  builder.insert(views(samples));
  return builder.finalize();
}

// The 4 × 3 × 5 m box room with three VPLs: ceiling (down), left wall (+x), floor (up).
inline AnalyticScene boxRoom() {
  AnalyticScene scene;
  scene.addRoom({0, 0, 0}, {4, 3, 5});
  return scene;
}
inline std::vector<PointLight> boxRoomLights() {
  return {PointLight{{2.0f, 2.99f, 2.5f}, {0, -1, 0}, {20.0f, 20.0f, 20.0f}},
          PointLight{{0.01f, 1.5f, 2.5f}, {1, 0, 0}, {5.0f, 8.0f, 3.0f}},
          PointLight{{3.0f, 0.01f, 1.0f}, {0, 1, 0}, {4.0f, 4.0f, 6.0f}}};
}

// Grid of n×n points on quad q, inset by `inset` metres from its edges, with its normal.
struct SurfacePoint {
  glm::vec3 position;
  glm::vec3 normal;
};
inline std::vector<SurfacePoint> gridOnQuad(const synthetic::Quad& q, int n, float inset) {
  std::vector<SurfacePoint> out;
  const float lu = glm::length(q.edgeU), lv = glm::length(q.edgeV);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const float a = (inset + (lu - 2 * inset) * (static_cast<float>(i) + 0.5f) / static_cast<float>(n)) / lu;
      const float b = (inset + (lv - 2 * inset) * (static_cast<float>(j) + 0.5f) / static_cast<float>(n)) / lv;
      out.push_back({q.origin + a * q.edgeU + b * q.edgeV, q.normal()});
    }
  return out;
}

}  // namespace ibrr::test
