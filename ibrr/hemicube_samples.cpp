#include "ibrr/hemicube_samples.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace ibrr {

void HemicubeSamples::reserve(std::size_t n) {
  positions.reserve(n);
  normals.reserve(n);
  values.reserve(n);
  footprints.reserve(n);
}

void HemicubeSamples::clear() {
  positions.clear();
  normals.clear();
  values.clear();
  footprints.clear();
  edgeReaches.clear();
}

void HemicubeSamples::add(const glm::vec3& position, const glm::vec3& normal, const glm::vec3& value, float footprint) {
  positions.push_back(position);
  normals.push_back(normal);
  values.push_back(value);
  footprints.push_back(footprint);
}

void HemicubeSamples::add(const glm::vec3& position, const glm::vec3& normal, const glm::vec3& value, float footprint,
                          const glm::vec3& edgeReach) {
  add(position, normal, value, footprint);
  edgeReaches.push_back(edgeReach);
}

bool mergeableBlock(const PixelSample (&block)[4]) {
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

PixelSample mergedSample(const PixelSample (&block)[4]) {
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

float footprintArea(float solidAngle, float distance, float cosTheta) {
  const float c = std::max(std::fabs(cosTheta), kMinFootprintCos);
  return solidAngle * distance * distance / c;
}

float hemicubePixelSolidAngle(float a, float b, float pixelSide) {
  const float rho2 = 1.0f + a * a + b * b;
  return pixelSide * pixelSide / (rho2 * std::sqrt(rho2));
}

}  // namespace ibrr
