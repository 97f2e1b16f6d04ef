// The closed-form projected solid angle of a triangle (rays/projected_solid_angle.hpp) against the point-to-
// rectangle form factor of Howell's catalogue and against numerical integration where the tangent plane clips it.
#include "rays/projected_solid_angle.hpp"
#include "test_scenes.hpp"

#include <catch2/catch.hpp>

#include <glm/gtc/constants.hpp>

using namespace ibrr::rays;

namespace {

// ∫_T max(0, cosθx) cosθy / r² dA by the midpoint rule on an n × n subdivision of the triangle (n² small
// triangles of equal area), in double: the definition the closed form must meet.
double integrated(const glm::dvec3& x, const glm::dvec3& n, const glm::dvec3& a, const glm::dvec3& b,
                  const glm::dvec3& c, int steps) {
  const glm::dvec3 e1 = (b - a) / double(steps), e2 = (c - a) / double(steps);
  const glm::dvec3 crossed = glm::cross(e1, e2);
  const double smallArea = 0.5 * glm::length(crossed);
  const glm::dvec3 emitterNormal = glm::normalize(crossed);
  double sum = 0.0;
  auto add = [&](const glm::dvec3& y) {
    const glm::dvec3 d = y - x;
    const double r2 = glm::dot(d, d), r = std::sqrt(r2);
    const double cosX = std::max(0.0, glm::dot(n, d) / r), cosY = std::fabs(glm::dot(emitterNormal, d) / r);
    sum += cosX * cosY / r2 * smallArea;
  };
  for (int j = 0; j < steps; ++j)
    for (int i = 0; i + j < steps; ++i) {
      const glm::dvec3 corner = a + double(i) * e1 + double(j) * e2;
      add(corner + (e1 + e2) / 3.0);  // the upright small triangle's centroid
      if (i + j + 1 < steps) add(corner + 2.0 * (e1 + e2) / 3.0);  // the inverted one beside it
    }
  return sum;
}

}  // namespace

TEST_CASE("projected solid angle: a rectangle's two triangles give π times Howell's form factor",
          "[rays][direct]") {
  const test::PlaneUnderLight setup;
  const glm::vec3 v00(setup.x0, setup.y0, setup.height), v10(setup.x1, setup.y0, setup.height);
  const glm::vec3 v11(setup.x1, setup.y1, setup.height), v01(setup.x0, setup.y1, setup.height);
  const glm::vec3 up(0.0f, 0.0f, 1.0f);
  for (float y : {0.0f, 0.1f, -0.35f, 1.5f})
    for (float x : {0.0f, 0.2f, 0.6f, -3.0f, 12.0f}) {
      const glm::vec3 p(x, y, 0.0f);
      const double expected = glm::pi<double>() * test::formFactor(setup, x, y);
      const double closedForm =
          double(projectedSolidAngle(p, up, v00, v10, v11)) + double(projectedSolidAngle(p, up, v00, v11, v01));
      INFO("at " << x << ", " << y);
      CHECK(closedForm == Approx(expected).epsilon(1e-5));
    }
}

TEST_CASE("projected solid angle: clipped by the tangent plane, the closed form meets the integral", "[rays][direct]") {
  const glm::vec3 a(-1.0f, 0.5f, 1.0f), b(1.5f, 0.2f, -0.8f), c(0.3f, 1.4f, 0.4f);  // tilted, crossing z = 0
  const glm::vec3 x(0.1f, -0.2f, 0.0f);
  for (const glm::vec3& n : {glm::vec3(0, 0, 1), glm::normalize(glm::vec3(0.3f, 0.5f, 1.0f)), glm::vec3(0, 0, -1)}) {
    const double expected = integrated(x, n, a, b, c, 1200);
    INFO("normal " << n.x << " " << n.y << " " << n.z << ": integral " << expected);
    CHECK(expected > 1e-3);  // each normal sees part of the triangle
    CHECK(double(projectedSolidAngle(x, n, a, b, c)) == Approx(expected).epsilon(2e-4));
    CHECK(double(projectedSolidAngle(x, n, c, b, a)) == Approx(double(projectedSolidAngle(x, n, a, b, c))).epsilon(1e-6));
  }
  // Wholly behind the tangent plane: nothing.
  CHECK(projectedSolidAngle(x, glm::vec3(0, -1, 0), a + glm::vec3(0, 3, 0), b + glm::vec3(0, 3, 0),
                            c + glm::vec3(0, 3, 0)) == 0.0f);
}
