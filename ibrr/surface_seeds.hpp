#pragma once
// Seeding the store's layers from the geometry, before any VPL is warped in.
//
// Without seeds a layer exists only where some hemicube saw the surface, so the store of a few VPLs lacks the
// surfaces none of them lit (a block's side face that 2 of 10,000 VPLs see): the display finds no layer there
// (a hole, not the black it should be), and the store's layers, hence the display's cost per pixel, grow with
// the VPL count. Seeds fix both: every LDI pixel a surface crosses gets its layer up front, with zero
// radiosity, and the VPL samples then match those layers. The layer structure depends on the geometry and R
// only, so a frame costs the same for 100 or 10,000 VPLs (the view-independence claim of the paper), and a
// surface no VPL reached displays as black, which is what those VPLs give it.
//
// One seed per (triangle, LDI pixel it touches) in the LDI its shading normal selects (dominantAxis, as a
// sample of that normal would be routed): the triangle is rasterised conservatively in that LDI's image plane
// (every pixel its projection overlaps, not only those whose centre it covers), and the seed is the point of
// the triangle nearest the pixel centre in the image plane, lifted onto the triangle, with the interpolated
// normal there. Normals are taken on the triangle's front side (counter-clockwise winding), which is the side
// the camera's G-buffer reports for a front-facing surface.

#include "ibrr/hemicube_samples.hpp"
#include "ibrr/ldc_frame.hpp"

#include <glm/glm.hpp>

#include <span>

namespace ibrr {

// A world-space triangle with its corner shading normals (any length; renormalised).
struct SeedTriangle {
  glm::vec3 positions[3];
  glm::vec3 normals[3];
};

// Appends the seeds of `triangles` to `out` (values and footprints zero; out.centre untouched). Deterministic:
// seeds come in triangle order, then LDI, then pixel row and column.
void appendSurfaceSeeds(const LdcFrame& frame, std::span<const SeedTriangle> triangles, HemicubeSamples& out);

}  // namespace ibrr
