#pragma once
// FNV-1a, 64-bit (Fowler, Noll, Vo): h = (h ⊕ byte) · 1099511628211, starting from 14695981039346656037.
// Each step is a bijection of h for a fixed byte, so any change of a single byte always changes the result;
// used to detect corrupted store files, not as a cryptographic hash.

#include <cstddef>
#include <cstdint>
#include <span>

namespace ibrr {

inline constexpr std::uint64_t kFnv1a64Offset = 14695981039346656037ull;
inline constexpr std::uint64_t kFnv1a64Prime = 1099511628211ull;

// Continues a running hash (start with kFnv1a64Offset) over `bytes`.
std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t hash = kFnv1a64Offset);

}  // namespace ibrr
