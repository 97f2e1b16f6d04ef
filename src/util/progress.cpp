#include "util/progress.hpp"

#include <unistd.h>
#include <csignal>
#include <cstdio>

namespace ibrr {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void onSigint(int) { g_interrupted.store(true); }

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

bool interruptRequested() { return g_interrupted.load(std::memory_order_relaxed); }

void throwIfInterrupted() {
  if (interruptRequested()) throw Interrupted();
}

void setInterruptRequested(bool requested) { g_interrupted.store(requested); }

ScopedInterruptHandler::ScopedInterruptHandler() {
  g_interrupted.store(false);
  std::signal(SIGINT, onSigint);
}

ScopedInterruptHandler::~ScopedInterruptHandler() { std::signal(SIGINT, SIG_DFL); }

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

}  // namespace ibrr
