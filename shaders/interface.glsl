// The GPU interface of the scene passes, the IBRR bake and display, Keller and the viewer: binding points,
// texture and image units and uniform locations, defined once. The shaders include this file
// (#include "interface.glsl"); the C++ side includes it too (#include "shaders/interface.glsl"), so the two
// cannot disagree; tests/test_shader.cpp checks the linked programs against it. (The lightmap solvers'
// shaders still keep their own literals.)

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

// The passes that draw the scene set their own uniforms from IBRR_U_FIRST_PASS_UNIFORM on.
#define IBRR_U_GBUFFER_EYE 16          // gbuffer.frag: camera position, world units
#define IBRR_U_HEMICUBE_CENTRE 16      // hemicube.frag: the VPL, world units
#define IBRR_U_HEMICUBE_AXIS 17        // surface normal / spot axis
#define IBRR_U_HEMICUBE_PROFILE 18     // 0 Lambertian surface, 1 isotropic point, 2 spot
#define IBRR_U_HEMICUBE_SPOT_COS 19    // inner, outer cone cosines

// The G-buffer's channels as texture units, in display::GBufferChannel order (ibrr_reconstruct.comp,
// keller_accumulate.comp).
#define IBRR_T_GBUFFER_POSITION 0
#define IBRR_T_GBUFFER_NORMAL 1
#define IBRR_T_GBUFFER_ALBEDO 2
#define IBRR_T_GBUFFER_EMISSION 3

// The store's lookup (ldc_lookup.glsl, for ibrr_reconstruct.comp; display/ibrr_reconstruction.cpp).
#define IBRR_B_LDC_OFFSETS 0
#define IBRR_B_LDC_PLANES 1
#define IBRR_B_LDC_RADIOSITY 2
#define IBRR_U_LDC_ORIGIN 32
#define IBRR_U_LDC_INV_PIXEL 33
#define IBRR_U_LDC_RESOLUTION 34
#define IBRR_U_LDC_EPS_DISTANCE 35
#define IBRR_U_LDC_MIN_COS 36
#define IBRR_U_LDC_FILTER 37
#define IBRR_U_LDC_FILTER_RADIUS 38
#define IBRR_I_RECONSTRUCT_OUTPUT 0    // image unit of the reconstruction's radiance

// Keller's accumulation (keller_accumulate.comp; display/keller.cpp): the G-buffer's position, normal and
// albedo units above, the VPL's hemicube atlas, the accumulation image, and per-VPL uniforms.
#define IBRR_T_KELLER_ATLAS_POSITION 4
#define IBRR_I_KELLER_ACCUMULATION 0
#define IBRR_U_KELLER_CENTRE 0
#define IBRR_U_KELLER_AXIS 1
#define IBRR_U_KELLER_PROFILE 2
#define IBRR_U_KELLER_SPOT_COS 3
#define IBRR_U_KELLER_POWER 4
#define IBRR_U_KELLER_CLAMP 5
#define IBRR_U_KELLER_FACE_COUNT 6
#define IBRR_U_KELLER_RESOLUTION 7
#define IBRR_U_KELLER_BIAS_SCALE 8
#define IBRR_U_KELLER_BIAS_MIN 9
#define IBRR_U_KELLER_FACE_FIRST_ROW 10       // int[6]: 10..15
#define IBRR_U_KELLER_FACE_ROWS 16            // int[6]: 16..21
#define IBRR_U_KELLER_FACE_VIEW_PROJECTION 22 // mat4[6]: 22..27

// The viewer's present pass (viewer_display.frag; viewer/view_renderer.cpp).
#define IBRR_T_PRESENT_RADIANCE 0
#define IBRR_U_PRESENT_VIEWPORT_ORIGIN 0
#define IBRR_U_PRESENT_VIEWPORT_SIZE 1
#define IBRR_U_PRESENT_EXPOSURE_SCALE 2
#define IBRR_U_PRESENT_CURVE 3
