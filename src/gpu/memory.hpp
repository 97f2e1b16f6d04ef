#pragma once
// The GPU's free memory, where the driver tells it (NVIDIA's GL_NVX_gpu_memory_info, AMD's
// GL_ATI_meminfo); llvmpipe draws from the process's memory, which util/memory.hpp checks.
#include <cstdint>
#include <optional>
#include <string>

namespace ibrr::gpu {

// Free video memory in bytes, or nothing when the current context's driver does not say.
std::optional<std::uint64_t> availableVideoMemoryBytes();

// Throws ibrr::Error "WHAT needs N GiB of GPU memory, M GiB free; HINT" when the driver tells the
// free memory and `bytes` exceeds it.
void requireVideoMemory(std::uint64_t bytes, const std::string& what, const std::string& hint);

}  // namespace ibrr::gpu
