#version 450 core
// Progressive refinement, visibility pass: the (tessellated) scene seen from the shooter by
// hemispherical projection (GPU Gems 2 ch. 39, listing 39-2). In the shooter's frame (x, y
// tangent, z = its normal) a point q projects to the (x, y) of q/|q| on the unit hemisphere, so
// the whole hemisphere fits in one square viewport (the disc x² + y² ≤ 1); depth is projected
// separately (here linearly in z for clipping, and exactly as |q| in the fragment shader).
#include "interface.glsl"

layout(location = 0) in vec3 a_position;  // world space
layout(location = 1) in uint a_chart;     // the chart of the source triangle

layout(location = IBRR_U_HEMISPHERE_SHOOTER) uniform vec3 u_shooter;     // world position of the shooter (scene units)
layout(location = IBRR_U_HEMISPHERE_TO_SHOOTER) uniform mat3 u_toShooter;   // rows: tangent, bitangent, normal
layout(location = IBRR_U_HEMISPHERE_NEAR_FAR) uniform vec2 u_nearFar;     // clip range along the normal (scene units)

layout(location = 0) out vec3 v_local;       // the point in the shooter's frame
layout(location = 1) flat out uint v_chart;

void main() {
  vec3 local = u_toShooter * (a_position - u_shooter);
  vec3 onHemisphere = local / max(length(local), 1e-30);
  float zClip = 2.0 * (local.z - u_nearFar.x) / (u_nearFar.y - u_nearFar.x) - 1.0;  // points behind: clipped
  gl_Position = vec4(onHemisphere.xy, zClip, 1.0);
  v_local = local;
  v_chart = a_chart;
}
