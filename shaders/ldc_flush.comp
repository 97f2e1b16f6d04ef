#version 450 core
// The end of a dispatch of the GPU insertion: for every layer one of its hemicubes touched, each of them in
// order adds its area-weighted mean
//   B_h = Φ_h · Σ a·g / Σ a
// to the layer's total and counts one more hemicube (the same meaning as the CPU builder, ibrr/ldc_builder.hpp),
// then clears its sums. The means are added in hemicube order, as one dispatch a hemicube would add them, so the
// totals do not depend on how many hemicubes a dispatch takes. One invocation per touched layer; dispatched
// indirectly with the group count the insertion pass kept.
#include "ldc_insertion.glsl"

layout(local_size_x = 64) in;

layout(location = IBRR_U_FLUSH_FIRST_HEMICUBE) uniform int u_firstHemicube;  // the dispatch's first in b_hemicubes
layout(location = IBRR_U_FLUSH_HEMICUBES) uniform int u_hemicubes;           // and how many it took
layout(location = IBRR_U_FLUSH_PIXEL_AREA) uniform float u_pixelArea;        // LDI pixel area, world units²

void main() {
  uint index = gl_GlobalInvocationID.x;
  if (index >= b_control[3]) return;
  uint layer = b_touched[index];
  for (int k = 0; k < u_hemicubes; ++k) {
    WarpHemicube hemicube = b_hemicubes[u_firstHemicube + k];
    uint at = 4u * (hemicube.stamps.y + layer);
    float sumAG = read64(at) / kSumScale;
    float sumA = read64(at + 2u) / kAreaScale * u_pixelArea;
    if (sumA > 0.0) b_totals[layer] += vec4(hemicube.power.rgb * (sumAG / sumA), 1.0);
    b_sums[at] = 0u;
    b_sums[at + 1u] = 0u;
    b_sums[at + 2u] = 0u;
    b_sums[at + 3u] = 0u;
  }
}
