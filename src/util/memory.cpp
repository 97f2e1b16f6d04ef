#include "util/memory.hpp"

#include "util/error.hpp"

#include <sys/resource.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ibrr {
namespace {

// The value of a "Key:   N kB" line of a /proc file, in bytes.
std::optional<std::uint64_t> procKilobytes(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream fields(line.substr(key.size() + 1));
      std::uint64_t kilobytes = 0;
      if (fields >> kilobytes) return kilobytes * 1024;
    }
  return std::nullopt;
}

std::optional<std::uint64_t> readNumberFile(const char* file) {
  std::ifstream in(file);
  std::uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;  // absent, or "max"
}

std::atomic<const char*> g_phase{nullptr};

}  // namespace

void restartWithHugePageMalloc(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
  constexpr const char* kTunables = "GLIBC_TUNABLES";
  if (std::getenv(kTunables) != nullptr) return;  // set by the user, or by the start before this one
  int major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major < 2 || (major == 2 && minor < 35))
    return;  // the tunable came with glibc 2.35
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!std::getline(mode, modes) || modes.find("[madvise]") == std::string::npos) return;
  if (setenv(kTunables, "glibc.malloc.hugetlb=1", 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv(kTunables);  // execv failed (no /proc): go on as started
#else
  (void)argv;
#endif
}

std::optional<std::uint64_t> availableMemoryBytes() {
  std::optional<std::uint64_t> available = procKilobytes("/proc/meminfo", "MemAvailable");
  const auto limit = [&](std::uint64_t bytes) { available = available ? std::min(*available, bytes) : bytes; };
  const auto cgroupMax = readNumberFile("/sys/fs/cgroup/memory.max");
  const auto cgroupUsed = readNumberFile("/sys/fs/cgroup/memory.current");
  if (cgroupMax && cgroupUsed) limit(*cgroupMax > *cgroupUsed ? *cgroupMax - *cgroupUsed : 0);
  rlimit addressSpace{};
  if (getrlimit(RLIMIT_AS, &addressSpace) == 0 && addressSpace.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t mapped = procKilobytes("/proc/self/status", "VmSize").value_or(0);
    limit(addressSpace.rlim_cur > mapped ? addressSpace.rlim_cur - mapped : 0);
  }
  return available;
}

std::string formatGiB(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(1ull << 30));
  return text;
}

void requireMemory(std::uint64_t bytes, const std::string& what, const std::string& hint) {
  const std::optional<std::uint64_t> available = availableMemoryBytes();
  if (!available || bytes <= *available) return;
  throw Error(what + " needs about " + formatGiB(bytes) + ", " + formatGiB(*available) + " available; " + hint);
}

MemoryPhase::MemoryPhase(const char* what) : m_previous(g_phase.exchange(what)) {}

MemoryPhase::~MemoryPhase() { g_phase.store(m_previous); }

const char* MemoryPhase::current() {
  const char* phase = g_phase.load();
  return phase ? phase : "running";
}

}  // namespace ibrr
