#include "ibrr/checksum.hpp"

namespace ibrr {

std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t hash) {
  for (std::byte b : bytes) {
    hash ^= static_cast<std::uint64_t>(b);
    hash *= kFnv1a64Prime;
  }
  return hash;
}

}  // namespace ibrr
