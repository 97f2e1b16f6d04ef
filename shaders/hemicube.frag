#version 450 core
// One hemicube face seen from a virtual point light (VPL) at u_centre: per pixel the surface point,
// its normal on the side facing the VPL, and the geometry term
//   g = I(ω)/Φ · cosθx / r²
// so that the VPL's power Φ times g is the irradiance it gives the point (W/m² for Φ in W and
// lengths in m; no visibility term: the depth test is the visibility). I(ω)/Φ is the VPL's
// emission profile (vpl_emission.glsl). No clamp here:
// the bake may bound g (--clamp) on the CPU.
//
// The colour targets are not cleared between hemicubes (a clear of two RGBA32F targets cost llvmpipe more
// than drawing them): a covered pixel's position carries this draw's coverage mark u_coverage in w, and a
// pixel whose w holds another mark is one this draw did not cover (gpu/hemicube.hpp).
#include "scene_uniforms.glsl"
#include "vpl_emission.glsl"

in VertexData {
  vec3 worldPosition;
  vec3 worldNormal;
  vec2 texcoord;
} v_in;

layout(location = IBRR_U_HEMICUBE_CENTRE) uniform vec3 u_centre;    // VPL position, world units
layout(location = IBRR_U_HEMICUBE_AXIS) uniform vec3 u_axis;      // surface normal / spot axis, unit
layout(location = IBRR_U_HEMICUBE_PROFILE) uniform int u_profile;    // 0 Lambertian surface, 1 isotropic point, 2 spot
layout(location = IBRR_U_HEMICUBE_SPOT_COS) uniform vec2 u_spotCos;   // cos of the inner and outer cone half-angles
layout(location = IBRR_U_HEMICUBE_COVERAGE) uniform float u_coverage; // this draw's coverage mark, an integer ≥ 1

layout(location = 0) out vec4 o_position;        // xyz world position, w = u_coverage (covered)
layout(location = 1) out vec4 o_normalGeometry;  // xyz normal facing the VPL, w = g

void main() {
  vec3 toCentre = u_centre - v_in.worldPosition;
  float r2 = max(dot(toCentre, toCentre), 1e-30);
  vec3 towardsCentre = toCentre * inversesqrt(r2);
  // The normal on the side the VPL sees (the same rule as the camera G-buffer uses for the eye).
  vec3 normal = normalize(v_in.worldNormal);
  if (!gl_FrontFacing) normal = -normal;
  if (dot(normal, towardsCentre) < 0.0) normal = -normal;
  float cosX = max(dot(normal, towardsCentre), 0.0);
  float cosI = dot(u_axis, -towardsCentre);
  float profile = vplEmissionProfile(u_profile, cosI, u_spotCos);
  o_position = vec4(v_in.worldPosition, u_coverage);
  o_normalGeometry = vec4(normal, profile * cosX / r2);
}
