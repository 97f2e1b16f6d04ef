#include "util/progress.hpp"

#include "util/log.hpp"

#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace ibrr {
namespace {

// The signal that asked for the stop (0: none). Written by the handler: lock-free atomics only.
std::atomic<int> g_interruptSignal{0};

constexpr int kMaxPendingTemporaries = 32;
constexpr std::size_t kMaxTemporaryPath = 4096;
// Paths of the temporary files being written, for the second signal's cleanup (unlink is
// async-signal-safe; the handler reads a slot only while its flag says it is complete).
std::atomic<bool> g_temporaryInUse[kMaxPendingTemporaries];
char g_temporaryPath[kMaxPendingTemporaries][kMaxTemporaryPath];

extern "C" void onInterruptSignal(int signalNumber) {
  int expected = 0;
  if (g_interruptSignal.compare_exchange_strong(expected, signalNumber)) return;  // first: stop at a safe point
  // Second signal: the user insists. Remove what is half written and leave now.
  for (int slot = 0; slot < kMaxPendingTemporaries; ++slot)
    if (g_temporaryInUse[slot].load(std::memory_order_acquire)) unlink(g_temporaryPath[slot]);
  static const char message[] = "ibrr: interrupted twice; temporary files removed, nothing was written\n";
  [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, message, sizeof message - 1);
  _exit(128 + signalNumber);
}

std::string formatDuration(double seconds) {
  char buffer[32];
  if (seconds < 0 || seconds > 1e7) return "?";
  const auto total = static_cast<long>(seconds + 0.5);
  if (total >= 3600)
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", total / 3600, (total / 60) % 60);
  else if (total >= 60)
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", total / 60, total % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%.1fs", seconds);
  return buffer;
}

}  // namespace

Interrupted::Interrupted(int signalNumber)
    : std::runtime_error(signalNumber == SIGTERM ? "terminated (SIGTERM); nothing was written"
                                                 : "interrupted by Ctrl-C; nothing was written"),
      m_signal(signalNumber) {}

void installInterruptHandlers() {
  struct sigaction action {};
  action.sa_handler = onInterruptSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress resume; the flag is polled
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interruptRequested() { return g_interruptSignal.load(std::memory_order_relaxed) != 0; }

void throwIfInterrupted() {
  const int signalNumber = g_interruptSignal.load(std::memory_order_relaxed);
  if (signalNumber != 0) throw Interrupted(signalNumber);
}

void setInterruptRequested(bool requested) { g_interruptSignal.store(requested ? SIGINT : 0); }

// Slots are claimed and released under one mutex; the handler reads them without it, but only
// slots whose flag is set, and the flag is set after the path is complete and cleared before it
// is erased.
static std::mutex g_temporarySlots;

PendingTemporaryFile::PendingTemporaryFile(const std::filesystem::path& path) {
  const std::string text = path.string();
  if (text.size() >= kMaxTemporaryPath) return;
  std::lock_guard lock(g_temporarySlots);
  for (int slot = 0; slot < kMaxPendingTemporaries; ++slot) {
    if (g_temporaryInUse[slot].load(std::memory_order_acquire)) continue;
    std::memcpy(g_temporaryPath[slot], text.c_str(), text.size() + 1);
    g_temporaryInUse[slot].store(true, std::memory_order_release);
    m_slot = slot;
    return;
  }
}

PendingTemporaryFile::~PendingTemporaryFile() {
  if (m_slot < 0) return;
  std::lock_guard lock(g_temporarySlots);
  g_temporaryInUse[m_slot].store(false, std::memory_order_release);
}

Progress::Progress(std::string label, std::uint64_t total, std::string unit)
    : m_label(std::move(label)),
      m_unit(std::move(unit)),
      m_total(total),
      m_start(std::chrono::steady_clock::now()),
      m_lastPrint(m_start),
      m_isTerminal(isatty(STDERR_FILENO) != 0) {}

void Progress::advance(std::uint64_t count) {
  m_done.fetch_add(count, std::memory_order_relaxed);
  const auto now = std::chrono::steady_clock::now();
  const auto interval = m_isTerminal ? std::chrono::milliseconds(250) : std::chrono::milliseconds(30000);
  std::unique_lock lock(m_printMutex, std::try_to_lock);
  if (!lock.owns_lock() || now - m_lastPrint < interval) return;
  m_lastPrint = now;
  print(false);
}

void Progress::finish() {
  std::lock_guard lock(m_printMutex);
  if (m_finished) return;
  m_finished = true;
  print(true);
}

double Progress::elapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

void Progress::print(bool final) {
  if (logLevel() == LogLevel::Quiet) return;  // -q: errors only
  const double elapsed = elapsedSeconds();
  const std::uint64_t done = m_done.load();
  const double rate = elapsed > 0 ? double(done) / elapsed : 0.0;
  std::string line = m_label + ": " + std::to_string(done);
  if (m_total > 0) line += "/" + std::to_string(m_total);
  char rateText[64];
  std::snprintf(rateText, sizeof rateText, " %s, %.3g %s/s", m_unit.c_str(), rate, m_unit.c_str());
  line += rateText;
  if (final)
    line += ", " + formatDuration(elapsed) + " in all";
  else if (m_total > 0 && rate > 0)
    line += ", " + formatDuration(double(m_total - std::min(done, m_total)) / rate) + " left";
  // A terminal gets one line rewritten in place; a log gets whole lines.
  const char* format = !m_isTerminal ? "%s\n" : (final ? "\r%s\033[K\n" : "\r%s\033[K");
  std::fprintf(stderr, format, line.c_str());
  std::fflush(stderr);
}

struct ProgressLine::State {
  std::mutex mutex;
  std::string phase;
  std::unique_ptr<Progress> line;
  std::uint64_t reported = 0;  // `done` already passed to `line`
};

ProgressLine::ProgressLine() : m_state(std::make_shared<State>()) {}

void ProgressLine::operator()(const ProgressUpdate& update) {
  const std::lock_guard lock(m_state->mutex);
  if (!m_state->line || m_state->phase != update.phase) {
    if (m_state->line) m_state->line->finish();
    m_state->line = std::make_unique<Progress>(update.phase, update.total, update.unit);
    m_state->phase = update.phase;
    m_state->reported = 0;
  }
  if (update.done > m_state->reported) {  // workers may report out of order: only ever move forward
    m_state->line->advance(update.done - m_state->reported);
    m_state->reported = update.done;
  }
}

void ProgressLine::finish() {
  const std::lock_guard lock(m_state->mutex);
  if (m_state->line) m_state->line->finish();
  m_state->line.reset();
  m_state->phase.clear();
}

}  // namespace ibrr
