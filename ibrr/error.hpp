#pragma once
// The exception for bad input (files, parameters, data handed in by a caller). Programmer bugs are asserts.
// Messages name the offending file or parameter and say what to do about it.

#include <stdexcept>
#include <string>

namespace ibrr {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace ibrr
