#pragma once
// Warping unit-square samples to the domains light transport needs, each with its density.
#include <glm/glm.hpp>
#include <glm/gtc/constants.hpp>

#include <algorithm>
#include <cmath>

namespace ibrr::rays {

// An orthonormal frame around a unit normal (Duff et al., "Building an Orthonormal Basis,
// Revisited", JCGT 2017).
struct Frame {
  glm::vec3 tangent, bitangent, normal;

  explicit Frame(const glm::vec3& n) : normal(n) {
    const float sign = std::copysign(1.0f, n.z);
    const float a = -1.0f / (sign + n.z);
    const float b = n.x * n.y * a;
    tangent = glm::vec3(1.0f + sign * n.x * n.x * a, sign * b, -sign * n.x);
    bitangent = glm::vec3(b, sign + n.y * n.y * a, -n.y);
  }
  [[nodiscard]] glm::vec3 toWorld(const glm::vec3& local) const {
    return local.x * tangent + local.y * bitangent + local.z * normal;
  }
};

// Shirley-Chiu concentric map from [0,1)² to the unit disc (area preserving).
inline glm::vec2 squareToConcentricDisc(const glm::vec2& u) {
  const glm::vec2 p = 2.0f * u - 1.0f;
  if (p.x == 0.0f && p.y == 0.0f) return glm::vec2(0.0f);
  float r, phi;
  if (std::abs(p.x) > std::abs(p.y)) {
    r = p.x;
    phi = glm::quarter_pi<float>() * (p.y / p.x);
  } else {
    r = p.y;
    phi = glm::half_pi<float>() - glm::quarter_pi<float>() * (p.x / p.y);
  }
  return r * glm::vec2(std::cos(phi), std::sin(phi));
}

// Cosine-weighted direction on the hemisphere around +z (Malley's method): pdf = cosθ/π per sr.
inline glm::vec3 squareToCosineHemisphere(const glm::vec2& u) {
  const glm::vec2 d = squareToConcentricDisc(u);
  const float z = std::sqrt(std::max(0.0f, 1.0f - d.x * d.x - d.y * d.y));
  return {d.x, d.y, z};
}
inline float cosineHemispherePdf(float cosTheta) { return std::max(cosTheta, 0.0f) * glm::one_over_pi<float>(); }

// Uniform direction on the sphere: pdf = 1/(4π).
inline glm::vec3 squareToUniformSphere(const glm::vec2& u) {
  const float z = 1.0f - 2.0f * u.x;
  const float r = std::sqrt(std::max(0.0f, 1.0f - z * z));
  const float phi = glm::two_pi<float>() * u.y;
  return {r * std::cos(phi), r * std::sin(phi), z};
}

// Uniform direction in the cone cosθ ∈ [cosMax, 1] around +z: pdf = 1/(2π(1 − cosMax)).
inline glm::vec3 squareToUniformCone(const glm::vec2& u, float cosMax) {
  const float z = 1.0f - u.x * (1.0f - cosMax);
  const float r = std::sqrt(std::max(0.0f, 1.0f - z * z));
  const float phi = glm::two_pi<float>() * u.y;
  return {r * std::cos(phi), r * std::sin(phi), z};
}

// Uniform barycentrics (b0, b1) on a triangle (area density 1/A), with b2 = 1 − b0 − b1.
inline glm::vec2 squareToTriangleBarycentrics(const glm::vec2& u) {
  const float s = std::sqrt(u.x);
  return {1.0f - s, u.y * s};
}

// Power heuristic (β = 2) weight of the strategy with density `pdfA` against `pdfB`.
inline float powerHeuristic(float pdfA, float pdfB) {
  const float a = pdfA * pdfA;
  const float b = pdfB * pdfB;
  return a + b > 0.0f ? a / (a + b) : 0.0f;
}

}  // namespace ibrr::rays
