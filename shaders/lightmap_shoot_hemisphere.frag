#version 450 core
// Progressive refinement, visibility pass: per pixel of the hemisphere the distance from the
// shooter to the nearest surface (scene units; its depth, as gl_FragDepth = |q| / far, orders the
// fragments exactly) and that surface's chart.
#include "interface.glsl"

layout(location = 0) in vec3 v_local;
layout(location = 1) flat in uint v_chart;

layout(location = IBRR_U_HEMISPHERE_NEAR_FAR) uniform vec2 u_nearFar;

layout(location = 0) out vec2 o_distanceChart;  // (distance, chart as float; exact below 2²⁴)

void main() {
  if (v_local.z <= 0.0) discard;  // the clipped edge of a triangle crossing the shooter's plane
  float distance = length(v_local);
  gl_FragDepth = clamp(distance / u_nearFar.y, 0.0, 1.0);
  o_distanceChart = vec2(distance, float(v_chart));
}
