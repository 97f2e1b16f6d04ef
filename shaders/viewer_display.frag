#version 450 core
// The viewer's present pass: the view's linear radiance (RGBA32F, nearest texel) tone-mapped for
// the window exactly as PNG files are (display/image.cpp, toneMapChannel): value = curve(2^stops·L)
// with curve = clamp (u_curve 0) or Narkowicz's ACES fit x(2.51x+0.03)/(x(2.43x+0.59)+0.14)
// (u_curve 1), then the sRGB transfer function (the window's framebuffer is not sRGB-encoding).

#include "interface.glsl"

layout(binding = IBRR_T_PRESENT_RADIANCE) uniform sampler2D u_radiance;
layout(location = IBRR_U_PRESENT_VIEWPORT_ORIGIN) uniform vec2 u_viewportOrigin;  // window pixels
layout(location = IBRR_U_PRESENT_VIEWPORT_SIZE) uniform vec2 u_viewportSize;    // window pixels
layout(location = IBRR_U_PRESENT_EXPOSURE_SCALE) uniform float u_exposureScale;  // 2^stops
layout(location = IBRR_U_PRESENT_CURVE) uniform int u_curve;            // 0 sRGB clamp, 1 filmic

layout(location = 0) out vec4 o_color;

float encodeSrgb(float x) { return x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1.0 / 2.4) - 0.055; }

void main() {
  const ivec2 size = textureSize(u_radiance, 0);
  const vec2 uv = (gl_FragCoord.xy - u_viewportOrigin) / u_viewportSize;
  const ivec2 texel = clamp(ivec2(uv * vec2(size)), ivec2(0), size - 1);
  vec3 x = max(texelFetch(u_radiance, texel, 0).rgb, vec3(0.0)) * u_exposureScale;
  if (any(isnan(x)) || any(isinf(x))) x = vec3(0.0);
  if (u_curve == 1) x = (x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14);
  x = clamp(x, 0.0, 1.0);
  o_color = vec4(encodeSrgb(x.r), encodeSrgb(x.g), encodeSrgb(x.b), 1.0);
}
