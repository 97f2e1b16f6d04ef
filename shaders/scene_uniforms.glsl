// Uniforms set by gpu::SceneRenderer for every draw (locations match gpu/scene_renderer.hpp).
layout(location = 0) uniform mat4 u_objectToWorld;
layout(location = 1) uniform mat4 u_normalToWorld;   // inverse transpose of u_objectToWorld
layout(location = 2) uniform mat4 u_viewProjection;
layout(location = 3) uniform vec3 u_albedo;          // linear diffuse reflectance ρ
layout(location = 4) uniform vec3 u_emission;        // emitted radiance L_e (front side only)
layout(location = 5) uniform int u_hasAlbedoTexture;
layout(location = 6) uniform int u_materialIndex;
layout(binding = 0) uniform sampler2D u_albedoTexture;
