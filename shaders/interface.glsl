// The GPU interface of the scene pass and the GPU warp: binding points and uniform locations, defined once.
// The shaders include this file (#include "interface.glsl"); the C++ side includes it too
// (#include "shaders/interface.glsl": gpu/scene_renderer.hpp, bake/gpu_insertion.cpp), so the two cannot
// disagree; tests/test_shader.cpp checks the linked programs against it.

// Every program that draws the scene (scene_uniforms.glsl; gpu::SceneRenderer sets them per draw).
#define IBRR_U_OBJECT_TO_WORLD 0       // mat4
#define IBRR_U_NORMAL_TO_WORLD 1       // mat4, inverse transpose of the above
#define IBRR_U_VIEW_PROJECTION 2       // mat4
#define IBRR_U_ALBEDO 3                // vec3, linear ρ
#define IBRR_U_EMISSION 4              // vec3, radiance L_e
#define IBRR_U_HAS_ALBEDO_TEXTURE 5    // int (0/1)
#define IBRR_U_MATERIAL_INDEX 6        // int
#define IBRR_U_FIRST_PASS_UNIFORM 16   // a pass's own uniforms start here
#define IBRR_T_ALBEDO 0                // texture unit of the albedo texture

// The GPU warp's buffers (ldc_insertion.glsl), shared by ldc_insert.comp and ldc_flush.comp.
#define IBRR_B_WARP_OFFSETS 0
#define IBRR_B_WARP_PLANES 1
#define IBRR_B_WARP_SUMS 2
#define IBRR_B_WARP_STAMPS 3
#define IBRR_B_WARP_TOUCHED 4
#define IBRR_B_WARP_TOTALS 5
#define IBRR_B_WARP_CONTROL 6
#define IBRR_B_WARP_EXTRA_HEADS 7
#define IBRR_B_WARP_EXTRA_NEXT 8
#define IBRR_B_WARP_BIRTHS 9
#define IBRR_B_WARP_MISSES 10
#define IBRR_B_WARP_COUNT 11

// ldc_insert.comp: the hemicube atlas's texture units and the uniforms.
#define IBRR_T_WARP_POSITION 0
#define IBRR_T_WARP_NORMAL 1
#define IBRR_U_WARP_CENTRE 0
#define IBRR_U_WARP_RESOLUTION 1
#define IBRR_U_WARP_ROWS 2
#define IBRR_U_WARP_SIDE_FACE_ROWS 3
#define IBRR_U_WARP_CLAMP 4
#define IBRR_U_WARP_HEMICUBE 5
#define IBRR_U_WARP_ORIGIN 6
#define IBRR_U_WARP_INV_PIXEL_SIZE 7
#define IBRR_U_WARP_LDC_RESOLUTION 8
#define IBRR_U_WARP_EPS_DISTANCE 9
#define IBRR_U_WARP_MIN_COS 10
#define IBRR_U_WARP_GAUSSIAN 11
#define IBRR_U_WARP_MIN_AREA 12
#define IBRR_U_WARP_MIN_FOOTPRINT_COS 13
#define IBRR_U_WARP_SPLAT_COVERAGE 14
#define IBRR_U_WARP_MAX_HALF_EXTENT 15
#define IBRR_U_WARP_GAUSSIAN_CUTOFF2 16
#define IBRR_U_WARP_EDGE_SLACK 17
#define IBRR_U_WARP_MISS_PASS 18
#define IBRR_U_WARP_EDGE_NORMAL_COS 19
#define IBRR_U_WARP_EDGE_MEET_FOOTPRINTS2 20
#define IBRR_U_WARP_MAX_EDGE_REACH 21
#define IBRR_U_WARP_EDGE_SWEEP 22

// ldc_flush.comp.
#define IBRR_U_FLUSH_POWER 0
#define IBRR_U_FLUSH_PIXEL_AREA 1
