#include "ibrr/hemicube_samples.hpp"

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

float hemicubePixelSolidAngle(float a, float b, float pixelSide) {
  const float rho2 = 1.0f + a * a + b * b;
  return pixelSide * pixelSide / (rho2 * std::sqrt(rho2));
}

}  // namespace ibrr
