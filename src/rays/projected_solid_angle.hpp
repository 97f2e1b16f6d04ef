#pragma once
// The projected solid angle of a triangle seen from a surface point, in closed form: what an unshadowed
// Lambertian emitter of radiance L sends to the point is E = L·Ω⊥ (W/m²), with
//
//     Ω⊥ = ∫_T cosθx⁺ dω = ∫_T cosθx⁺ cosθy / r² dA(y)          (sr; θx at the point, θy at the emitter)
//
// Lambert's formula (Arvo, "Analytic methods for simulated light transport", 1995, §3.2): for a polygon p_0 ..
// p_(k−1) (vertices relative to the point), wholly above the point's tangent plane,
//
//     Ω⊥ = ½ |Σ_i Θ_i · n·γ_i|,   Θ_i = ∠(p_i, p_(i+1)),   γ_i = (p_i × p_(i+1)) / |p_i × p_(i+1)|,
//
// each edge's arc weighted by how much its great circle's plane faces the normal n. The part of the triangle
// below the tangent plane (cosθx < 0) sends nothing; it is clipped off first, leaving at most four vertices.
#include <glm/glm.hpp>

#include <array>
#include <cmath>

namespace ibrr::rays {

// In double inside: far from the triangle the edges' terms nearly cancel, and float kept only 3–4 digits there.
inline float projectedSolidAngle(const glm::vec3& x, const glm::vec3& n, const glm::vec3& a, const glm::vec3& b,
                                 const glm::vec3& c) {
  // Sutherland–Hodgman against the tangent plane n·p ≥ 0: a triangle keeps 0, 3 or 4 vertices.
  const glm::dvec3 origin(x), normal(n);
  const std::array<glm::dvec3, 3> triangle{glm::dvec3(a) - origin, glm::dvec3(b) - origin, glm::dvec3(c) - origin};
  std::array<glm::dvec3, 4> polygon;
  int count = 0;
  for (int i = 0; i < 3; ++i) {
    const glm::dvec3& p = triangle[std::size_t(i)];
    const glm::dvec3& q = triangle[std::size_t((i + 1) % 3)];
    const double hp = glm::dot(normal, p), hq = glm::dot(normal, q);
    if (hp >= 0.0) polygon[std::size_t(count++)] = p;
    if ((hp >= 0.0) != (hq >= 0.0)) polygon[std::size_t(count++)] = p + (hp / (hp - hq)) * (q - p);
  }
  double sum = 0.0;
  for (int i = 0; i < count; ++i) {
    const glm::dvec3& p = polygon[std::size_t(i)];
    const glm::dvec3& q = polygon[std::size_t((i + 1) % count)];
    const glm::dvec3 edgePlane = glm::cross(p, q);  // |p × q| = |p||q| sin Θ, p·q = |p||q| cos Θ
    const double sine = glm::length(edgePlane);
    if (!(sine > 0.0)) continue;  // a degenerate edge (or one through the point) subtends no arc
    sum += std::atan2(sine, glm::dot(p, q)) * (glm::dot(normal, edgePlane) / sine);
  }
  return static_cast<float>(0.5 * std::fabs(sum));
}

}  // namespace ibrr::rays
