#pragma once
// Progress for long work (count, rate, time left) on stderr, and clean interruption by Ctrl-C or
// SIGTERM.
//
//   ibrr::installInterruptHandlers();            // once, in main()
//   ibrr::Progress progress("reference", totalRows, "rows");
//   for (...) { ibrr::throwIfInterrupted(); ...; progress.advance(1); }
//   progress.finish();
//
// The handlers only set a flag: worker threads poll interruptRequested() and stop early, the
// command then throws Interrupted at its next safe point (every output checks it before its
// rename), and main() reports "interrupted, nothing was written" with exit code 128 + signal
// (130 for SIGINT, 143 for SIGTERM). A second signal while the first is pending removes the
// temporary files being written (registered below) and exits at once with the same code.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace ibrr {

class Interrupted : public std::runtime_error {
public:
  explicit Interrupted(int signalNumber);
  // 128 + the signal's number, as a shell reports a process killed by it.
  [[nodiscard]] int exitCode() const { return 128 + m_signal; }

private:
  int m_signal;
};

// Installs the SIGINT and SIGTERM handlers for the rest of the process.
void installInterruptHandlers();
// True once SIGINT or SIGTERM arrived (or a test or the viewer requested a stop).
bool interruptRequested();
void throwIfInterrupted();
// Test and viewer hook: request or clear a stop as if Ctrl-C had been pressed.
void setInterruptRequested(bool requested);

// A temporary output file that a second signal must remove before the process exits. At most
// kMaxPendingTemporaries are tracked at once (more are written without the forced-exit cleanup).
class PendingTemporaryFile {
public:
  explicit PendingTemporaryFile(const std::filesystem::path& path);
  ~PendingTemporaryFile();
  PendingTemporaryFile(const PendingTemporaryFile&) = delete;
  PendingTemporaryFile& operator=(const PendingTemporaryFile&) = delete;

private:
  int m_slot = -1;
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

// What every long operation reports as it goes (the IBRR bake, the compensation, the four lightmap solvers):
// its phase, how far it is in that phase, and a note. One observer type feeds the terminal's progress line
// (ProgressLine), the viewer's bar and ibrr compare alike.
struct ProgressUpdate {
  const char* phase = "";   // the work's name ("hemicubes", "bias compensation", "gather", ...): a new one
                            // starts a new line
  std::uint64_t done = 0;   // units done so far in this phase
  std::uint64_t total = 0;  // units planned, 0 when unknown
  const char* unit = "";    // what is counted ("hemicubes", "layers", "shots", "iterations", "stages")
  std::string note;         // a figure beside the count (e.g. the residual), "" for none
};
// Called from the thread that does the work, or from several (the observer serialises what it shows).
using ProgressObserver = std::function<void(const ProgressUpdate&)>;

// A ProgressObserver that prints each phase as its own Progress line (count, rate, time left), moving it to
// each update's `done`. Thread-safe; copies report to the same line; finish() ends the last line.
class ProgressLine {
public:
  ProgressLine();
  void operator()(const ProgressUpdate& update);
  void finish();

private:
  struct State;
  std::shared_ptr<State> m_state;
};

}  // namespace ibrr
