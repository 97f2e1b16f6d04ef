#pragma once
// Progress for long work (count, rate, time left) on stderr, and clean interruption by Ctrl-C.
//
//   ibrr::ScopedInterruptHandler onCtrlC;        // installs a SIGINT handler for this scope
//   ibrr::Progress progress("reference", totalRows, "rows");
//   for (...) { ibrr::throwIfInterrupted(); ...; progress.advance(1); }
//   progress.finish();
//
// Worker threads poll interruptRequested() and stop early; the command then throws Interrupted,
// which main() reports as "interrupted, nothing written" with exit code 130.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

namespace ibrr {

class Interrupted : public std::runtime_error {
public:
  Interrupted() : std::runtime_error("interrupted by Ctrl-C; nothing was written") {}
};

// True once SIGINT arrived while a ScopedInterruptHandler is installed.
bool interruptRequested();
void throwIfInterrupted();
// Test hook: request or clear an interrupt as if Ctrl-C had been pressed.
void setInterruptRequested(bool requested);

class ScopedInterruptHandler {
public:
  ScopedInterruptHandler();
  ~ScopedInterruptHandler();
  ScopedInterruptHandler(const ScopedInterruptHandler&) = delete;
  ScopedInterruptHandler& operator=(const ScopedInterruptHandler&) = delete;
};

class Progress {
public:
  // total: expected count of `unit`s (0 if unknown). On a terminal it rewrites one line at most
  // four times a second; when stderr is a file or pipe (logs, CI) it appends a line every 30 s,
  // so a long bake's log still shows its count, rate and time left. A final line either way.
  Progress(std::string label, std::uint64_t total, std::string unit);
  // Thread-safe.
  void advance(std::uint64_t count = 1);
  // Prints the final count, rate and elapsed time.
  void finish();
  [[nodiscard]] double elapsedSeconds() const;

private:
  void print(bool final);

  std::string m_label;
  std::string m_unit;
  std::uint64_t m_total;
  std::atomic<std::uint64_t> m_done{0};
  std::chrono::steady_clock::time_point m_start;
  std::chrono::steady_clock::time_point m_lastPrint;
  std::mutex m_printMutex;
  bool m_isTerminal;
  bool m_finished = false;
};

}  // namespace ibrr
