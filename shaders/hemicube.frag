#version 450 core
// One hemicube face seen from a virtual point light (VPL) at its centre: per pixel the surface point,
// its normal on the side facing the VPL, and the geometry term
//   g = I(ω)/Φ · cosθx / r²
// so that the VPL's power Φ times g is the irradiance it gives the point (W/m² for Φ in W and
// lengths in m; no visibility term: the depth test is the visibility). I(ω)/Φ is the VPL's
// emission profile (vpl_emission.glsl). No clamp here:
// the bake may bound g (--clamp) on the CPU.
//
// The colour targets are not cleared between hemicubes (a clear of two RGBA32F targets cost llvmpipe more
// than drawing them): a covered pixel's position carries its hemicube's coverage mark in w, and a pixel whose
// w holds another mark is one this hemicube did not cover (gpu/hemicube.hpp). A batch of hemicubes is drawn
// in one pass (hemicube.vert), which hands each fragment its own hemicube's VPL.
#include "vpl_emission.glsl"

in VertexData {
  vec3 worldPosition;
  vec3 worldNormal;
  flat vec4 centreCoverage;  // xyz: the VPL's position (the render centre), world units; w: the coverage mark, ≥ 1
  flat vec3 axis;            // surface normal / spot axis, unit
  flat vec2 spotCos;         // cos of the inner and outer cone half-angles
  flat int profile;          // 0 Lambertian surface, 1 isotropic point, 2 spot
} v_in;

layout(location = 0) out vec4 o_position;        // xyz world position, w = the coverage mark (covered)
layout(location = 1) out vec4 o_normalGeometry;  // xyz normal facing the VPL, w = g

void main() {
  vec3 toCentre = v_in.centreCoverage.xyz - v_in.worldPosition;
  float r2 = max(dot(toCentre, toCentre), 1e-30);
  vec3 towardsCentre = toCentre * inversesqrt(r2);
  // The normal on the side the VPL sees (the same rule as the camera G-buffer uses for the eye).
  vec3 normal = normalize(v_in.worldNormal);
  if (!gl_FrontFacing) normal = -normal;
  if (dot(normal, towardsCentre) < 0.0) normal = -normal;
  float cosX = max(dot(normal, towardsCentre), 0.0);
  float cosI = dot(v_in.axis, -towardsCentre);
  float profile = vplEmissionProfile(v_in.profile, cosI, v_in.spotCos);
  o_position = vec4(v_in.worldPosition, v_in.centreCoverage.w);
  o_normalGeometry = vec4(normal, profile * cosX / r2);
}
