#version 450 core
// IBRR reconstruction (paper §5): every camera pixel of the G-buffer is warped into the layered
// depth cube, its radiosity B fetched, and the pixel's radiance is L = L_e + ρ·B/π (a Lambertian
// surface of radiosity ρ·B has radiance ρ·B/π). Alpha: 1 covered and matched, 0.5 covered but
// no layer matched (a hole: radiance shows emission only), 0 background.
#include "ldc_lookup.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

layout(binding = IBRR_T_GBUFFER_POSITION) uniform sampler2D u_position;   // xyz world, w coverage
layout(binding = IBRR_T_GBUFFER_NORMAL) uniform sampler2D u_normal;     // xyz shading normal facing the camera
layout(binding = IBRR_T_GBUFFER_ALBEDO) uniform sampler2D u_albedo;
layout(binding = IBRR_T_GBUFFER_EMISSION) uniform sampler2D u_emission;
layout(binding = IBRR_I_RECONSTRUCT_OUTPUT, rgba32f) uniform writeonly image2D u_output;

const float kInvPi = 0.318309886183791;

void main() {
  ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
  ivec2 size = imageSize(u_output);
  if (pixel.x >= size.x || pixel.y >= size.y) return;
  vec4 position = texelFetch(u_position, pixel, 0);
  if (position.w < 0.5) {
    imageStore(u_output, pixel, vec4(0.0));
    return;
  }
  vec3 normal = texelFetch(u_normal, pixel, 0).xyz;
  vec3 albedo = texelFetch(u_albedo, pixel, 0).rgb;
  vec3 emission = texelFetch(u_emission, pixel, 0).rgb;
  vec4 radiosity = ldcRadiosity(position.xyz, normal);
  vec3 radiance = emission + albedo * radiosity.rgb * kInvPi;
  imageStore(u_output, pixel, vec4(radiance, radiosity.w > 0.0 ? 1.0 : 0.5));
}
