#include "gpu/memory.hpp"

#include "gpu/context.hpp"
#include "gpu/gl.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"


namespace ibrr::gpu {
namespace {

constexpr GLenum kNvxCurrentAvailableKiB = 0x9049;  // GPU_MEMORY_INFO_CURRENT_AVAILABLE_VIDMEM_NVX
constexpr GLenum kAtiTextureFreeMemory = 0x87FC;    // TEXTURE_FREE_MEMORY_ATI: {free KiB, ...}

}  // namespace

std::optional<std::uint64_t> availableVideoMemoryBytes() {
  GLint kibibytes[4] = {0, 0, 0, 0};
  if (hasGlExtension("GL_NVX_gpu_memory_info"))
    glGetIntegerv(kNvxCurrentAvailableKiB, kibibytes);
  else if (hasGlExtension("GL_ATI_meminfo"))
    glGetIntegerv(kAtiTextureFreeMemory, kibibytes);
  else
    return std::nullopt;
  return kibibytes[0] > 0 ? std::optional<std::uint64_t>(std::uint64_t(kibibytes[0]) * 1024) : std::nullopt;
}

void requireVideoMemory(std::uint64_t bytes, const std::string& what, const std::string& hint) {
  const std::optional<std::uint64_t> available = availableVideoMemoryBytes();
  if (!available || bytes <= *available) return;
  throw Error(what + " needs about " + formatGiB(bytes) + " of GPU memory, " + formatGiB(*available) + " free; " +
              hint);
}

}  // namespace ibrr::gpu
