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

// Starts the program again, once, with glibc's malloc asking the kernel for transparent huge pages (the tunable
// glibc.malloc.hugetlb=1, which glibc reads only at start-up), where they help: on Linux with glibc 2.35 or later,
// transparent huge pages set to "madvise" (with "always" malloc has them already) and GLIBC_TUNABLES unset (a user's
// own setting stands; GLIBC_TUNABLES= turns this off). A bake touches a few hundred MiB of fresh memory, and each
// 4 KiB page of it first costs a page fault: the default Cornell bake took about 57 K of them, 18 K with huge
// pages, and 0.2 s less (docs/benchmarks.md). Call first in main(); returns (and the program goes on as it is) when
// it does not apply or the program cannot be started again.
void restartWithHugePageMalloc(char** argv);

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
