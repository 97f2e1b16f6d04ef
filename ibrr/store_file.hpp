#pragma once
// The LDC store file: one self-checking binary file per bake, little-endian.
//
//   offset  size  field
//        0     8  magic "IBRR-LDC"
//        8     4  version (kStoreVersion)
//       12     4  header size in bytes (88)
//       16     8  scene fingerprint (caller's hash of the scene; 0 = unknown)
//       24     8  VPL (hemicube) count
//       32     8  layer count L
//       40     4  resolution R
//       44     4  bytes per layer (24)
//       48    12  bounds lo, 3 × float32, world units
//       60    12  bounds hi
//       72     4  margin (fraction of the largest extent)
//       76     4  ε_d, world units
//       80     4  ε_n
//       84     4  bias compensation: rays per layer (bits 0–15) and passes (16–23), 0 = none (ldc.hpp)
//       88  4·(3R²+1)  offsets, uint32 (see ldc.hpp)
//        …  24·L  layers, PackedLayer
//        …     8  FNV-1a 64 of every byte before it
//
// saveStore writes the file at the path it is given; the ibrr commands give it a unique temporary name and
// rename it over the real one when complete (bake::writeStoreFile), so a crash never leaves a half-written
// store under the real name. Loading checks, in order: size, magic, version, header fields, exact size, checksum, structure
// (offsets monotonic, values finite, parameters valid), then the scene fingerprint; each failure throws
// ibrr::Error naming the file, what is wrong and what to do.

#include "ibrr/ldc.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ibrr {

inline constexpr std::uint32_t kStoreVersion = 1;
inline constexpr std::size_t kStoreHeaderBytes = 88;

std::vector<std::byte> serializeStore(const LayeredDepthCube& store);

// sourceName names the data in error messages (usually the file path).
// expectedFingerprint: when given, a store baked for another scene is refused.
LayeredDepthCube deserializeStore(std::span<const std::byte> bytes, const std::string& sourceName,
                                  std::optional<std::uint64_t> expectedFingerprint = std::nullopt);

void saveStore(const LayeredDepthCube& store, const std::filesystem::path& path);

LayeredDepthCube loadStore(const std::filesystem::path& path,
                           std::optional<std::uint64_t> expectedFingerprint = std::nullopt);

}  // namespace ibrr
