#pragma once
// The exceptions: Error for bad input (files, parameters, data handed in by a caller), its message naming the
// offending file or parameter and saying what to do about it; OptionError, an Error, for a setting refused before
// any work; InternalError, thrown by IBRR_CHECK, for a state
// the code's own logic rules out (a bug), naming the condition and where it failed.

#include <stdexcept>
#include <string>

namespace ibrr {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A setting out of its range or a combination of settings refused (a flag's value, a field of an options struct),
// found before any work; `ibrr` exits 2 on it, as on any command line it refuses.
class OptionError : public Error {
public:
  using Error::Error;
};

// A broken invariant. It is an Error, so that every command reports it as one line and exits non-zero.
class InternalError : public Error {
public:
  using Error::Error;
};

namespace detail {
[[noreturn]] inline void failCheck(const char* condition, const std::string& message, const char* file, int line) {
  throw InternalError("internal error at " + std::string(file) + ":" + std::to_string(line) + ": " + message +
                      " (" + condition + " does not hold); please report it");
}
}  // namespace detail

}  // namespace ibrr

// IBRR_CHECK(condition, message): throws InternalError when `condition` is false, in every build type (unlike
// assert). For invariants only: input a user can get wrong is checked with a throw of Error that says what to do.
#define IBRR_CHECK(condition, message)                                                      \
  do {                                                                                      \
    if (!(condition)) ::ibrr::detail::failCheck(#condition, (message), __FILE__, __LINE__); \
  } while (false)
