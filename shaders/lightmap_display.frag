#version 450 core
// Pixel radiance = the lightmap's exitant radiance, bilinearly filtered (the atlas is dilated
// into its padding, so filtering near chart edges reads the chart's own values). The lightmap
// holds L = L_e + reflected for the front side; emitters emit from the front only, so a back face
// shows L − L_e.
in vec2 v_lightmapUv;
flat in uint v_material;

layout(binding = 0) uniform sampler2D u_lightmap;
layout(std430, binding = 0) readonly buffer MaterialEmission {
  vec4 materialEmission[];  // L_e per material (rgb)
};

layout(location = 0) out vec4 o_radiance;

void main() {
  vec3 radiance = texture(u_lightmap, v_lightmapUv).rgb;
  if (!gl_FrontFacing) radiance = max(radiance - materialEmission[v_material].rgb, vec3(0.0));
  o_radiance = vec4(radiance, 1.0);
}
