#pragma once
// The lightmap file: `X.lightmap` is JSON metadata and `X.lightmap.exr` (beside it) the radiance
// atlas as a 32-bit float RGB OpenEXR image whose row y is atlas texel row y (so the picture shows
// the atlas upside down against GL's convention; the values are what matter). The JSON holds:
//   "format": "ibrr lightmap", "version": 1, "method": "gather", "settings": { the solver's },
//   "sceneFingerprint": "16 hex digits", "atlas": { texelsPerUnit, targetSize, paddingTexels,
//   chartNormalCosine }, "atlasFingerprint": "16 hex digits", "width", "height",
//   "radiance": "X.lightmap.exr" (relative to the JSON), "radianceChecksum": "16 hex digits".
// The atlas itself is not stored: buildAtlas() is deterministic, so the loader rebuilds it from the
// scene and "atlas" and checks that its fingerprint (atlasFingerprint(): size, UVs, charts) is the
// one the lightmap was solved on. "radianceChecksum" is FNV-1a 64 of the radiance as float32 RGB in
// texel order: a damaged or swapped .exr is refused.
#include "lightmap/atlas.hpp"
#include "util/atomic_file.hpp"

#include <filesystem>

namespace ibrr::lightmap {

inline constexpr int kLightmapFormatVersion = 2;  // 2: atlasFingerprint and radianceChecksum

// The radiance image's path for a lightmap path: "X.lightmap" → "X.lightmap.exr".
[[nodiscard]] std::filesystem::path lightmapImagePath(const std::filesystem::path& lightmapPath);

// Writes the EXR, then the JSON, each under a temporary name renamed over the target when
// complete. Throws ibrr::Error naming the file when the folder is missing or not writable, or the
// lightmap is inconsistent (radiance size ≠ width·height).
void saveLightmap(const std::filesystem::path& path, const Lightmap& lightmap);
inline void saveLightmap(const Lightmap& lightmap, const std::filesystem::path& path) { saveLightmap(path, lightmap); }
// The same, as outputs of a set written all or none (committed by the caller).
void stageLightmap(OutputSet& outputs, const std::filesystem::path& path, const Lightmap& lightmap);

// Reads and checks a lightmap for `scene`: the file exists and is JSON of this format and version,
// every key is there with the right type, it was baked for this scene (fingerprint: "baked for
// another scene"), the EXR exists, is width × height with finite values and matches the checksum,
// and the atlas rebuilt from "atlas" has the recorded fingerprint. Each failure is one ibrr::Error naming the file, the key and what to
// do. When `atlas` is given it receives the rebuilt atlas.
[[nodiscard]] Lightmap loadLightmap(const std::filesystem::path& path, const scene::Scene& scene,
                                    LightmapAtlas* atlas = nullptr);

}  // namespace ibrr::lightmap
