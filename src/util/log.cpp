#include "util/log.hpp"

#include <atomic>
#include <cstdio>

namespace ibrr {
namespace {
std::atomic<LogLevel> g_level{LogLevel::Normal};
}

void setLogLevel(LogLevel level) { g_level.store(level); }
LogLevel logLevel() { return g_level.load(); }

void warn(const std::string& message) {
  if (logLevel() != LogLevel::Quiet) std::fprintf(stderr, "ibrr: warning: %s\n", message.c_str());
}

void info(const std::string& message) {
  if (logLevel() != LogLevel::Quiet) std::fprintf(stderr, "ibrr: %s\n", message.c_str());
}

void verbose(const std::string& message) {
  if (logLevel() == LogLevel::Verbose) std::fprintf(stderr, "ibrr: %s\n", message.c_str());
}

}  // namespace ibrr
