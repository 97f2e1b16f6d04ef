#pragma once
// Memory is estimated before it is spent: a command that would need more than the machine can give
// refuses at once, naming what it needs and what is available, instead of failing in the middle
// (or being killed by the kernel). A std::bad_alloc that still happens names the phase it hit.
#include <cstdint>
#include <optional>
#include <string>

namespace ibrr {

// Bytes this process can still allocate: the least of MemAvailable (/proc/meminfo), the cgroup's
// memory.max less memory.current, and the address-space limit (ulimit -v) less what is mapped.
// Nothing when none of them can be read.
std::optional<std::uint64_t> availableMemoryBytes();

// "12.3 GiB"
std::string formatGiB(std::uint64_t bytes);

// Throws ibrr::Error "WHAT needs N GiB, M GiB available; HINT" when `bytes` exceeds what is available.
void requireMemory(std::uint64_t bytes, const std::string& what, const std::string& hint);

// The phase a std::bad_alloc is reported in ("out of memory while baking the store"): the innermost
// live MemoryPhase of any thread, else "running".
class MemoryPhase {
public:
  explicit MemoryPhase(const char* what);
  ~MemoryPhase();
  MemoryPhase(const MemoryPhase&) = delete;
  MemoryPhase& operator=(const MemoryPhase&) = delete;
  [[nodiscard]] static const char* current();

private:
  const char* m_previous;
};

}  // namespace ibrr
