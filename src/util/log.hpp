#pragma once
// Messages on stderr: warnings and information for people. Errors are exceptions (util/error.hpp).
#include <string>

namespace ibrr {

enum class LogLevel { Quiet, Normal, Verbose };

void setLogLevel(LogLevel level);
[[nodiscard]] LogLevel logLevel();

void warn(const std::string& message);    // "ibrr: warning: ..." (shown unless Quiet)
void info(const std::string& message);    // "ibrr: ..." (shown unless Quiet)
void verbose(const std::string& message);  // shown only when Verbose

}  // namespace ibrr
