// The GPU interface of the scene passes, the IBRR bake and display, Keller, the viewer and the lightmap
// solvers: binding points, texture and image units and uniform locations, defined once. The shaders include
// this file (#include "interface.glsl"); the C++ side includes it too (#include "shaders/interface.glsl"), so
// the two cannot disagree; tests/test_shader.cpp checks the linked programs against it.

// Every program that draws the scene (scene_uniforms.glsl; gpu::SceneRenderer sets them per draw).
#define IBRR_U_OBJECT_TO_WORLD 0       // mat4
#define IBRR_U_NORMAL_TO_WORLD 1       // mat4, inverse transpose of the above
#define IBRR_U_VIEW_PROJECTION 2       // mat4
#define IBRR_U_ALBEDO 3                // vec3, linear ρ
#define IBRR_U_EMISSION 4              // vec3, radiance L_e
#define IBRR_U_HAS_ALBEDO_TEXTURE 5    // int (0/1)
#define IBRR_U_MATERIAL_INDEX 6        // int
#define IBRR_U_TEXTURE_LOD_BIAS 7      // float, added to the albedo texture's level of detail (gpu/supersample.hpp)
#define IBRR_U_FIRST_PASS_UNIFORM 16   // a pass's own uniforms start here
#define IBRR_A_VIEW 4                  // uint, instanced: the view of a gpu::SceneRenderer::drawViews command
#define IBRR_T_ALBEDO 0                // texture unit of the albedo texture

// The GPU warp's buffers (ldc_insertion.glsl), shared by ldc_insert.comp, ldc_open.comp and ldc_flush.comp.
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
#define IBRR_B_WARP_HEMICUBES 11  // WarpHemicube per hemicube of the batch: its slot, layout, stamp, sums and power
#define IBRR_B_WARP_MISS_HEADS 12     // per LDI pixel: its first listed miss, -1 for none
#define IBRR_B_WARP_MISSED_PIXELS 13  // the pixels with a listed miss
#define IBRR_B_WARP_COUNT 14

// ldc_insert.comp: the hemicube atlas's texture units and the uniforms.
#define IBRR_T_WARP_POSITION 0
#define IBRR_T_WARP_NORMAL 1
#define IBRR_U_WARP_FIRST_HEMICUBE 0  // the dispatch's first hemicube among WarpHemicubes (it has one a z)
#define IBRR_U_WARP_GROUP 1           // the dispatch's stamp, ≥ 1: a layer it reaches joins the touched list once
#define IBRR_U_WARP_CLAMP 4
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
#define IBRR_U_WARP_MERGE_NORMAL_COS 24
#define IBRR_U_WARP_MERGE_OFF_PLANE2 25
#define IBRR_U_WARP_MERGE_APART2 26

// ldc_open.comp: the matching bounds of ldc_insert.comp.
#define IBRR_U_OPEN_EPS_DISTANCE 0
#define IBRR_U_OPEN_MIN_COS 1

// ldc_flush.comp.
#define IBRR_U_FLUSH_FIRST_HEMICUBE 0  // as the insertion's dispatch
#define IBRR_U_FLUSH_PIXEL_AREA 1
#define IBRR_U_FLUSH_HEMICUBES 2       // the hemicubes of the dispatch

// The passes that draw the scene set their own uniforms from IBRR_U_FIRST_PASS_UNIFORM on.
#define IBRR_U_GBUFFER_EYE 16          // gbuffer.frag: camera position, world units

// hemicube.vert and hemicube.frag: a batch of hemicubes drawn in one pass (gpu/hemicube.hpp).
#define IBRR_B_HEMICUBE_FACES 0        // HemicubeFaceDraw per view: world → clip, its hemicube, layer and viewport
#define IBRR_B_HEMICUBE_SOURCES 1      // HemicubeSourceDraw per hemicube: the VPL, its profile and coverage mark

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

// The lightmap solvers. Within a solver a buffer keeps its binding point in every pass that reads it; uniform
// locations are per program unless said otherwise.

// The atlas's patch pass (lightmap_patches.vert/.frag; lightmap/patches.cpp).
#define IBRR_B_PATCHES_TRIANGLE_DEPTH 0  // float per atlas triangle, its depth (1 − n·n_chart)/2
#define IBRR_U_PATCHES_ATLAS_SIZE 16     // vec2, width, height in texels

// The lightmap display (lightmap_display.vert/.frag, which draw the scene with scene_uniforms.glsl;
// lightmap/lightmap_display.cpp): its own unit and location beside the scene's.
#define IBRR_T_LIGHTMAP_INCIDENT 1     // RGB32F incident radiance H (unit 0 is IBRR_T_ALBEDO's)
#define IBRR_U_LIGHTMAP_ATLAS_SIZE 17  // vec2, width, height in texels

// The gathering solver's hemicubes (lightmap_gather.vert/.frag, lightmap_gather_cull.comp;
// lightmap/gather_hemicubes.cpp).
#define IBRR_B_GATHER_FACE_MATRICES 0  // mat4 per hemicube face, world → clip (the vertex and cull passes)
#define IBRR_B_GATHER_CHUNKS 1         // the sorted triangle list's chunks and their boxes
#define IBRR_B_GATHER_COMMANDS 2       // the indirect draw commands the cull pass writes
#define IBRR_T_GATHER_SEEN 0           // lightmap_gather.frag: per atlas texel what a hemicube sees there
#define IBRR_U_GATHER_FIRST_ENTRY 0    // int, the batch's first matrix in the bound range (the vertex and cull passes)
#define IBRR_U_GATHER_CHUNKS 1         // uint, chunks (lightmap_gather_cull.comp)
#define IBRR_U_GATHER_SLOTS 2          // uint, 5 × the batch's hemicubes (lightmap_gather_cull.comp)

// The gathering solver's integration (lightmap_reduce.comp; lightmap/gather_hemicubes.cpp).
#define IBRR_B_REDUCE_MULTIPLIER 0   // float per hemicube pixel, the multiplier map w
#define IBRR_B_REDUCE_PATCHES 1      // texel and ρ per hemicube
#define IBRR_T_REDUCE_HEMICUBES 0    // RGBA32F radiance, H × 3H per layer
#define IBRR_T_REDUCE_BASE 1         // RGBA32F per texel, L_e (or L_e plus the direct light)
#define IBRR_I_REDUCE_OUTPUT 0       // RGBA32F per texel, the new exitant radiance
#define IBRR_U_REDUCE_FIRST_ENTRY 0  // int, the batch's first patch in the bound range
#define IBRR_U_REDUCE_RESOLUTION 1   // int, H

// Progressive refinement's buffers (lightmap_shoot_select.comp, lightmap_shoot_update.comp,
// lightmap_shoot_zero.comp; lightmap/progressive.cpp).
#define IBRR_B_SHOOT_RECEIVERS 0         // Receiver per valid texel (lightmap_shoot.glsl)
#define IBRR_B_SHOOT_RESIDUAL 1          // vec4 per valid texel, ΔL
#define IBRR_B_SHOOT_CLUSTER_FIRST 2     // uint, C + 1 offsets into the cluster texels
#define IBRR_B_SHOOT_PARTIALS 3          // the selection's choice per workgroup
#define IBRR_B_SHOOT_RESULT 4            // the chosen shooter, 16 bytes for the CPU
#define IBRR_B_SHOOT_CLUSTER_TEXELS 5    // uint, the clusters' texels
#define IBRR_B_SHOOT_CLUSTER_RESIDUAL 6  // vec4 per cluster, (ΔL_c, Φ_c)
#define IBRR_B_SHOOT_RADIANCE 7          // vec4 per valid texel, L
#define IBRR_B_SHOOT_AXES 8              // TexelAxes per valid texel
#define IBRR_B_SHOOT_LAST_SHOT 9         // adaptive (RECORD_SHOT): each receiver's ΔL of the shot
#define IBRR_B_SHOOT_SUBSET 10           // adaptive (SUBSET): the receivers that take the shot again

// lightmap_shoot_select.comp.
#define IBRR_U_SHOOT_SELECT_COUNT 0  // uint, clusters (stage 1) or partials (FINAL_STAGE)

// lightmap_shoot_update.comp.
#define IBRR_T_SHOOT_HEMISPHERE 0     // RG32F distance, chart of the shooter's hemisphere
#define IBRR_U_SHOOT_SHOOTER 0        // vec3, the cluster's centroid (scene units)
#define IBRR_U_SHOOT_TO_SHOOTER 1     // mat3, rows: tangent, bitangent, normal
#define IBRR_U_SHOOT_COUNT 3          // uint, the dispatch's receivers
#define IBRR_U_SHOOT_AREA 4           // float, A_c (scene units²)
#define IBRR_U_SHOOT_DEPTH_EPSILON 5  // float, the depth test's absolute slack (scene units)
#define IBRR_U_SHOOT_NEAR_RADIUS 6    // float, exact per-texel form factors nearer than this (scene units)

// The shooter's hemisphere, which progressive refinement and stochastic iteration render
// (lightmap_shoot_hemisphere.vert/.frag; lightmap/shooting.cpp).
#define IBRR_U_HEMISPHERE_SHOOTER 0     // vec3, the shooter's position (scene units)
#define IBRR_U_HEMISPHERE_TO_SHOOTER 1  // mat3, rows: tangent, bitangent, normal
#define IBRR_U_HEMISPHERE_NEAR_FAR 2    // vec2, clip range along the normal (scene units)

// Stochastic iteration's buffers (lightmap_stochastic_power.comp, _pyramid.comp, _select.comp and
// _update.comp; lightmap/stochastic.cpp).
#define IBRR_B_STOCHASTIC_RECEIVERS 0        // Receiver per valid texel (lightmap_shoot.glsl)
#define IBRR_B_STOCHASTIC_EMISSION 1         // vec4 per valid texel, L_e
#define IBRR_B_STOCHASTIC_AXES 2             // TexelAxes per valid texel
#define IBRR_B_STOCHASTIC_RADIANCE 3         // vec4 per valid texel: L_src (power, select), L̃ (update)
#define IBRR_B_STOCHASTIC_PYRAMID 4          // float, the selection pyramid's levels, the atlas first
#define IBRR_B_STOCHASTIC_ATLAS_TEXEL 5      // uint per valid texel, its atlas texel
#define IBRR_B_STOCHASTIC_COMPACT_OF 6       // uint per atlas texel, its valid texel
#define IBRR_B_STOCHASTIC_LEVELS 7           // uvec4 per pyramid level: offset, width, height
#define IBRR_B_STOCHASTIC_RANDOM 8           // float per shooter, ξ_s
#define IBRR_B_STOCHASTIC_SHOTS 9            // per shooter its cluster, P_c and L_shot,c
#define IBRR_B_STOCHASTIC_FRAMES 10          // per shooter its centroid, area and frame
#define IBRR_B_STOCHASTIC_ITERATE 11         // vec4 per valid texel, L_m
#define IBRR_B_STOCHASTIC_CLUSTER_FIRST 12   // uint, C + 1 offsets into the cluster texels
#define IBRR_B_STOCHASTIC_CLUSTER_TEXELS 13  // uint, the clusters' texels
#define IBRR_B_STOCHASTIC_MEMBER_SHOTS 14    // vec4, S × the largest cluster's texels, L_shot,j

// lightmap_stochastic_power.comp.
#define IBRR_U_STOCHASTIC_POWER_COUNT 0  // uint, valid texels

// lightmap_stochastic_pyramid.comp.
#define IBRR_U_STOCHASTIC_PYRAMID_INPUT 0   // uvec3, offset, width, height of level k
#define IBRR_U_STOCHASTIC_PYRAMID_OUTPUT 1  // uvec3, the same of level k + 1

// lightmap_stochastic_select.comp.
#define IBRR_U_STOCHASTIC_SELECT_SHOOTERS 0     // uint, S
#define IBRR_U_STOCHASTIC_SELECT_LEVELS 1       // uint, pyramid levels, the atlas included
#define IBRR_U_STOCHASTIC_SELECT_MAX_MEMBERS 2  // uint, the largest cluster's texels

// lightmap_stochastic_update.comp.
#define IBRR_T_STOCHASTIC_HEMISPHERE 0        // RG32F distance, chart; layer s = shooter s
#define IBRR_U_STOCHASTIC_COUNT 0             // uint, valid texels
#define IBRR_U_STOCHASTIC_SHOOTERS 1          // uint, S
#define IBRR_U_STOCHASTIC_ITERATION 2         // float, n: the iterates in the average
#define IBRR_U_STOCHASTIC_DEPTH_EPSILON 3     // float, the depth test's absolute slack (scene units)
#define IBRR_U_STOCHASTIC_NEAR_FIELD_SIDES 4  // float, the near field's radius in √A_c
#define IBRR_U_STOCHASTIC_STORE_ITERATE 5     // bool, the last iterate is the shooting source
#define IBRR_U_STOCHASTIC_MAX_MEMBERS 6       // uint, the largest cluster's texels

// The form-factor matrix solver (lightmap_matrix_dense.comp, lightmap_matrix_bc1.comp,
// lightmap_matrix_transfer.comp; lightmap/matrix.cpp): one numbering of buffers and locations for its programs.
#define IBRR_B_MATRIX_DENSE 0          // float, n × n per channel: channel c at IBRR_B_MATRIX_DENSE + c
#define IBRR_B_MATRIX_BLOCKS 0         // uvec2 per BC1 block (decoded in the shader)
#define IBRR_T_MATRIX_BLOCKS 0         // the BC1 texture (HARDWARE_BC1)
#define IBRR_B_MATRIX_ROW_ORDER 1      // uint per stored row, its patch
#define IBRR_B_MATRIX_COLUMN_ORDER 2   // uint per stored column, its patch
#define IBRR_B_MATRIX_INPUT 3          // vec4 per patch, x (the transfer's e)
#define IBRR_B_MATRIX_OUTPUT 4         // vec4 per patch, y = N x
#define IBRR_B_MATRIX_ACCUMULATE 5     // vec4 per patch, the products' sum (the transfer's r)
#define IBRR_B_MATRIX_ROW_SCALE 6      // vec4 per stored row, scale_r
#define IBRR_B_MATRIX_EXACT_START 7    // uint, n + 1 offsets into the exact corrections
#define IBRR_B_MATRIX_EXACT_COLUMN 8   // uint per exact correction, its column
#define IBRR_B_MATRIX_EXACT_VALUE 9    // vec4 per exact correction, its value
#define IBRR_B_MATRIX_PATCH_TEXEL 10   // uint per patch, its atlas texel
#define IBRR_B_MATRIX_EMISSION 11      // vec4 per patch, L_e
#define IBRR_I_MATRIX_ATLAS 0          // RGBA32F atlas of the transfer's radiance
#define IBRR_U_MATRIX_COUNT 0          // uint, n
#define IBRR_U_MATRIX_ACCUMULATE 1     // uint, 0: acc = y, 1: acc += y (the products)
#define IBRR_U_MATRIX_PADDED 2         // uint, n rounded up to a multiple of 4 (lightmap_matrix_bc1.comp)
#define IBRR_U_MATRIX_LOG_RANGE 3      // float, R (lightmap_matrix_bc1.comp)
#define IBRR_U_MATRIX_WIDTH 4          // uint, the atlas's width in texels (lightmap_matrix_transfer.comp)
#define IBRR_U_MATRIX_DIRECT_WEIGHT 5  // float, s (lightmap_matrix_transfer.comp)
