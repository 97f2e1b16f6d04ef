#pragma once
// Wall-clock timing of a piece of work (steady clock).
#include <chrono>

namespace ibrr {

class Stopwatch {
public:
  Stopwatch() : m_start(std::chrono::steady_clock::now()) {}
  void restart() { m_start = std::chrono::steady_clock::now(); }
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  }
  [[nodiscard]] double milliseconds() const { return 1e3 * seconds(); }

private:
  std::chrono::steady_clock::time_point m_start;
};

}  // namespace ibrr
