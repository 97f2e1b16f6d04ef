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

float footprintArea(float solidAngle, float distance, float cosTheta) {
  const float c = std::max(std::fabs(cosTheta), kMinFootprintCos);
  return solidAngle * distance * distance / c;
}

float hemicubePixelSolidAngle(float a, float b, float pixelSide) {
  const float rho2 = 1.0f + a * a + b * b;
  return pixelSide * pixelSide / (rho2 * std::sqrt(rho2));
}

}  // namespace ibrr
