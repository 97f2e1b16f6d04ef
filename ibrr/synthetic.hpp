#pragma once
// Analytic scenes and a CPU hemicube renderer, so the store can be tested and benchmarked without a GPU
// against answers known in closed form.
//
// Scenes are rectangles ("quads"), one-sided: a quad's front faces along cross(edgeU, edgeV). A ray stops at the
// nearest quad either way (back faces occlude) but only a front-face hit yields a sample, as a rasteriser with
// back-face culling over closed geometry would.
// A VPL is a cosine-lobe point light: intensity I·cos θi in direction θi from its normal, so a surface point x
// receives  B(x) = I · cos θx · cos θi / (π r²)  (paper §4.2, g without clamping), zero when hidden.

#include "ibrr/hemicube_samples.hpp"
#include "ibrr/ldc_frame.hpp"

#include <glm/glm.hpp>

#include <optional>
#include <span>
#include <vector>

namespace ibrr::synthetic {

// The rectangle origin + a·edgeU + b·edgeV, a, b ∈ [0, 1]; edgeU ⟂ edgeV; world units.
struct Quad {
  glm::vec3 origin{0.0f};
  glm::vec3 edgeU{1.0f, 0.0f, 0.0f};
  glm::vec3 edgeV{0.0f, 1.0f, 0.0f};
  glm::vec3 normal() const { return glm::normalize(glm::cross(edgeU, edgeV)); }
};

struct Hit {
  float t = 0.0f;  // ray parameter = distance for a unit direction, world units
  glm::vec3 position{0.0f};
  glm::vec3 normal{0.0f};  // the quad's front normal
  int quad = -1;
  bool front = false;  // the ray met the front face
};

class AnalyticScene {
public:
  int addQuad(const Quad& quad);
  // The six walls of an axis-aligned room, facing inward.
  void addRoom(const glm::vec3& lo, const glm::vec3& hi);
  // The six faces of an axis-aligned box, facing outward.
  void addBox(const glm::vec3& lo, const glm::vec3& hi);

  // Nearest hit with t in (tMin, tMax); dir must be unit length.
  std::optional<Hit> intersect(const glm::vec3& origin, const glm::vec3& dir, float tMax = 1e30f,
                               float tMin = 1e-5f) const;
  Aabb bounds() const;
  std::span<const Quad> quads() const { return m_quads; }

private:
  std::vector<Quad> m_quads;
};

struct PointLight {
  glm::vec3 position{0.0f};
  glm::vec3 normal{0.0f, -1.0f, 0.0f};  // unit; the hemicube looks along it
  glm::vec3 intensity{1.0f};            // I along the normal, W/sr per channel
};

// Renders the five faces of the hemicube around the light: a full H×H face along the normal and four H×H/2 side
// faces. resolution: H, even, ≥ 2. Each front-facing hit becomes a sample with value I cos θx cos θi/(π r²) and
// footprint footprintArea(dω, r, cos θx).
HemicubeSamples renderHemicube(const AnalyticScene& scene, const PointLight& light, int resolution);

// The exact radiosity contribution of the light at surface point p with unit normal n (0 when hidden or facing
// away), W/m² per channel.
glm::vec3 analyticRadiosity(const AnalyticScene& scene, const PointLight& light, const glm::vec3& p,
                            const glm::vec3& n);

}  // namespace ibrr::synthetic
