#pragma once
// Scenes built in code for the rays tests, each with a known answer.
#include "scene/scene.hpp"

#include <glm/glm.hpp>

namespace ibrr::rays::test {

// Adds a quad (two triangles v0 v1 v2, v0 v2 v3; front = counter-clockwise) as its own mesh and
// instance, with a new material.
void addQuad(scene::Scene& scene, glm::vec3 v0, glm::vec3 v1, glm::vec3 v2, glm::vec3 v3, glm::vec3 albedo,
             glm::vec3 emission = glm::vec3(0.0f), const char* name = "quad");

// addQuad with the winding reversed if the quad's normal does not point along `towards`.
void addOrientedQuad(scene::Scene& scene, glm::vec3 v0, glm::vec3 v1, glm::vec3 v2, glm::vec3 v3, glm::vec3 towards,
                     glm::vec3 albedo, glm::vec3 emission = glm::vec3(0.0f), const char* name = "quad");

// The closed furnace box [−1,1]³, every face facing in, albedo a and emission E (a radiance)
// everywhere; a 90° camera "inside" at the centre. Every pixel's radiance is E/(1 − a).
scene::Scene makeFurnace(float albedo, glm::vec3 emission);

// A plane z = 0 (40×40, facing +z, albedo ρ) under a rectangle light [x0,x1]×[y0,y1] at height c
// facing down with radiance L and albedo 0. With nothing else to bounce off, the radiance leaving
// a plane point p is ρ·L·F(p), F = the point-to-parallel-rectangle form factor (formFactor()).
struct PlaneUnderLight {
  float x0 = -0.25f, x1 = 0.25f, y0 = -0.2f, y1 = 0.2f, height = 1.0f;
  glm::vec3 radiance{10.0f, 8.0f, 6.0f};
  glm::vec3 albedo{0.5f};
};
scene::Scene makePlaneUnderLight(const PlaneUnderLight& setup);
// Form factor from a differential area at (x, y, 0) facing +z to the rectangle light (closed form
// of Howell's catalogue, C-11, summed over the four corners with signs).
double formFactor(const PlaneUnderLight& setup, double x, double y);

// The plane z = 0 (40×40, facing +z, albedo 0.5) under a point light of I = 3 at (0, 0, 1), or a spot light
// there pointing down (full intensity for cosθ ≥ 0.6, none below 0.5): E = I·profile·h/r³ on the plane.
scene::Scene makePlaneUnderDeltaLight(bool spot);

// The measured Cornell box (CORNELL_FACTS.md, set-1 RGB, light at y = 548.7, 32 triangles) with its
// camera, independent of the scene files.
scene::Scene makeCornellBox();

}  // namespace ibrr::rays::test
