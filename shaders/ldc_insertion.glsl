// Shared by ldc_insert.comp, ldc_open.comp and ldc_flush.comp: the buffers of the GPU insertion
// (src/bake/gpu_insertion.hpp) and its fixed-point sums.
//
// Per layer l and hemicube of a dispatch, the hemicube's sums are two unsigned 64-bit fixed-point numbers, each
// two uints (low, high) added with 32-bit atomics and a carry, at b_sums[4·(sumsBase + l)] (sumsBase: the
// hemicube's place in its dispatch times the layers the buffers hold):
//   Σ a·g  in units of 2^-56 (dimensionless: a share of the VPL's power; at most 1 per hemicube, since the
//          splat shares a of a sample add up to its footprint A and A·g ≤ dω·I(ω)/Φ)
//   Σ a    in units of 2^-44 LDI pixel areas (a layer's sum is a few pixel areas; 2^20 fit)
// Integer sums do not depend on the order of the atomics, so the result is the same run after run.
#include "interface.glsl"

layout(std430, binding = IBRR_B_WARP_OFFSETS) readonly buffer LayerOffsets { uint b_offsets[]; };  // 3R² + 1
layout(std430, binding = IBRR_B_WARP_PLANES) buffer LayerPlanes { vec4 b_planes[]; };    // (n, d)
// 4 per layer and hemicube of a dispatch: Σag lo, hi, Σa lo, hi
layout(std430, binding = IBRR_B_WARP_SUMS) coherent buffer LayerSums { uint b_sums[]; };
// per layer: the stamp of the last dispatch that touched it
layout(std430, binding = IBRR_B_WARP_STAMPS) coherent buffer LayerStamps { uint b_stamps[]; };
layout(std430, binding = IBRR_B_WARP_TOUCHED) buffer TouchedLayers { uint b_touched[]; };
layout(std430, binding = IBRR_B_WARP_TOTALS) buffer LayerTotals { vec4 b_totals[]; };  // Σ_h B_h (rgb, units of Φ·g), count (w)
// [0..2] the flush's indirect dispatch (groups, 1, 1), [3] touched count, [4] [5] pixel writes (lo, hi),
// [6] samples dropped, [7] samples whose own pixel had no layer (miss pass), [8] [9] samples inserted (lo, hi),
// [10] misses listed, [11] the miss list's capacity, [12..14] ldc_open.comp's indirect dispatch (groups, 1, 1),
// [15] pixels with a listed miss, [16] layers in the buffers, [17] the layers they hold, [18] layers ldc_open.comp
// had no room for (the host's room bound makes that never)
layout(std430, binding = IBRR_B_WARP_CONTROL) coherent buffer Control { uint b_control[]; };
// Layers opened after the seeds (a surface they lack: the back of a thin wall), per pixel as a list: the first
// of pixel g is b_extraHead[g], the next of layer l b_extraNext[l] (-1 ends). A layer's birth (hemicube,
// atlas texel) orders it among the samples: a sample sees the layers born before it, as in the CPU builder.
// ldc_open.comp opens them.
layout(std430, binding = IBRR_B_WARP_EXTRA_HEADS) buffer ExtraHeads { int b_extraHead[]; };
layout(std430, binding = IBRR_B_WARP_EXTRA_NEXT) buffer ExtraNext { int b_extraNext[]; };
layout(std430, binding = IBRR_B_WARP_BIRTHS) buffer Births { uvec2 b_births[]; };
// The samples of the miss pass whose own pixel has no layer, in three blocks of b_control[11] entries:
// (texel, pixel, p.x, p.y), (p.z, n.x, n.y, n.z) with n the unit normal (ibrr::sampleUnitNormal), as raw bits,
// and (hemicube stamp, the pixel's next listed miss or -1, 0, 0); their count is b_control[10]. Each pixel's
// misses form a list from b_missHead (emptied again by ldc_open.comp), and the pixels with any are listed in
// b_missedPixels (b_control[15] of them).
layout(std430, binding = IBRR_B_WARP_MISSES) buffer Misses { uvec4 b_misses[]; };
layout(std430, binding = IBRR_B_WARP_MISS_HEADS) coherent buffer MissHeads { int b_missHead[]; };
layout(std430, binding = IBRR_B_WARP_MISSED_PIXELS) buffer MissedPixels { uint b_missedPixels[]; };
// The batch's hemicubes (src/bake/gpu_insertion.cpp, HemicubeRecord).
struct WarpHemicube {
  vec4 centreCoverage;  // xyz: the hemicube's centre, world units; w: the coverage mark of the texels it covered
  vec4 power;           // rgb: Φ of its VPL, per channel
  ivec4 atlasLayout;    // its slot (atlas layer), H, atlas rows in use, side-face rows (H/2, or H for a full cube)
  uvec4 stamps;         // its stamp (its number in the bake, ≥ 1), its sumsBase, 0, 0
};
layout(std430, binding = IBRR_B_WARP_HEMICUBES) readonly buffer WarpHemicubes { WarpHemicube b_hemicubes[]; };

const float kSumScale = 72057594037927936.0;  // 2^56
const float kAreaScale = 17592186044416.0;    // 2^44
const float kTwoTo32 = 4294967296.0;
const uint kFlushGroupSize = 64u;  // ldc_flush.comp local size
const uint kOpenGroupSize = 64u;   // ldc_open.comp local size

// Adds x ≥ 0 (an integer-valued float below 2^64, rounded by the caller) to the 64-bit number at b_sums[at].
void atomicAdd64(uint at, float x) {
  float high = floor(x / kTwoTo32);
  uint lo = uint(x - high * kTwoTo32);  // exact: x and high·2^32 share their high bits
  uint hi = uint(high);
  uint old = atomicAdd(b_sums[at], lo);
  if (old + lo < old) hi += 1u;  // the low word wrapped: carry
  if (hi != 0u) atomicAdd(b_sums[at + 1u], hi);
}

float read64(uint at) { return float(b_sums[at + 1u]) * kTwoTo32 + float(b_sums[at]); }

// dot in glm's order of operations ((x + y) + z), which GLSL leaves to the compiler.
float orderedDot(vec2 a, vec2 b) {
  precise float d = a.x * b.x + a.y * b.y;
  return d;
}
float orderedDot(vec3 a, vec3 b) {
  precise float d = (a.x * b.x + a.y * b.y) + a.z * b.z;
  return d;
}
