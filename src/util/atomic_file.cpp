#include "util/atomic_file.hpp"

#include "util/error.hpp"
#include "util/input_file.hpp"
#include "util/progress.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

namespace ibrr {

namespace fs = std::filesystem;

namespace {

// The file a write to `target` replaces: the target of a symbolic link (followed to the end, even
// when it does not exist yet), otherwise the path itself.
fs::path resolveOutput(const fs::path& target) {
  fs::path resolved = target;
  std::error_code ec;
  for (int hop = 0; hop < 40 && fs::is_symlink(fs::symlink_status(resolved, ec)); ++hop) {
    const fs::path link = fs::read_symlink(resolved, ec);
    if (ec) break;
    resolved = link.is_absolute() ? link : (resolved.parent_path() / link);
  }
  return resolved.lexically_normal();
}

// The permissions a new output gets: those of the file it replaces, else 0666 less the umask.
mode_t outputMode(const fs::path& target) {
  struct stat info {};
  if (stat(target.c_str(), &info) == 0) return info.st_mode & 07777;
  static const mode_t umaskBits = [] {
    const mode_t bits = umask(0);
    umask(bits);
    return bits;
  }();
  return 0666 & ~umaskBits;
}

// Creates a unique, empty temporary file beside `target`, keeping its extension (some writers
// choose the format by it): "folder/.NAME.tmp-XXXXXX.EXT".
fs::path createTemporaryBeside(const fs::path& target) {
  const std::string extension = target.extension().string();
  std::string pattern = (target.parent_path() / ("." + target.stem().string() + ".tmp-XXXXXX")).string() + extension;
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  const int descriptor = mkstemps(buffer.data(), static_cast<int>(extension.size()));
  if (descriptor < 0)
    throw Error(target.string() + ": cannot create a temporary file in its folder (" + std::strerror(errno) +
                "); check the folder's permissions and free space");
  close(descriptor);
  return fs::path(buffer.data());
}

// Flushes a written temporary file to disk and gives it the permissions of the output.
void finishTemporary(const fs::path& temporary, const fs::path& target) {
  const int descriptor = open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) throw Error(temporary.string() + ": the written file vanished; write the output again");
  const bool synced = fsync(descriptor) == 0;
  const bool permitted = fchmod(descriptor, outputMode(target)) == 0;
  close(descriptor);
  if (!synced || !permitted)
    throw Error(target.string() + ": could not flush the written file to disk (disk full?); free space and retry");
}

// Test hook: IBRR_TEST_HOLD_OUTPUT_SECONDS=S keeps each written temporary file for up to S seconds
// before its rename (ending early on a stop), so that tests can signal a command while its output
// is being written (docs/testing.md). Unset, it costs one getenv per output.
void holdForTests() {
  const char* text = std::getenv("IBRR_TEST_HOLD_OUTPUT_SECONDS");
  if (!text) return;
  const double seconds = std::atof(text);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!interruptRequested() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

void checkOutputFile(const fs::path& given) {
  const fs::path target = resolveOutput(given);
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw Error(given.string() + ": the folder '" + folder.string() + "' does not exist; create it first (mkdir -p " +
                folder.string() + ")");
  if (access(folder.c_str(), W_OK) != 0)
    throw Error(given.string() + ": the folder '" + folder.string() + "' is not writable");
  const fs::file_status status = fs::status(target, ec);
  if (!fs::exists(status)) return;
  if (!fs::is_regular_file(status))
    throw Error(given.string() + ": is " + describeSpecialFile(status) +
                ", not a regular file; ibrr does not write over it: give the name of a file");
  struct stat info {};
  if (stat(target.c_str(), &info) == 0 && ((info.st_mode & 0222) == 0 || access(target.c_str(), W_OK) != 0))
    throw Error(given.string() + ": is read-only; make it writable (chmod u+w " + given.string() +
                ") or give another output name");
  if (const auto input = recordedInputAt(target))
    throw Error(given.string() + ": is " + *input + " this command reads; give another output name (nothing was "
                "written)");
}

struct OutputSet::Staged {
  fs::path target;  // after symbolic links
  fs::path temporary;
  std::unique_ptr<PendingTemporaryFile> pending;
};

OutputSet::OutputSet() = default;

OutputSet::~OutputSet() {
  for (const auto& staged : m_staged) {
    std::error_code ignored;
    if (!staged->temporary.empty()) fs::remove(staged->temporary, ignored);
  }
}

void OutputSet::stage(const fs::path& given, const FileWriter& write) {
  checkOutputFile(given);
  auto staged = std::make_unique<Staged>();
  staged->target = resolveOutput(given);
  staged->temporary = createTemporaryBeside(staged->target);
  staged->pending = std::make_unique<PendingTemporaryFile>(staged->temporary);
  const Staged& added = *m_staged.emplace_back(std::move(staged));  // from here on, the destructor removes it
  write(added.temporary);
  finishTemporary(added.temporary, added.target);
  holdForTests();
}

void OutputSet::commit() {
  throwIfInterrupted();  // the destructor removes every staged file
  for (const auto& staged : m_staged) {
    std::error_code ec;
    fs::rename(staged->temporary, staged->target, ec);
    if (ec)
      throw Error("cannot rename '" + staged->temporary.string() + "' to '" + staged->target.string() +
                  "': " + ec.message());
    staged->temporary.clear();
  }
  m_staged.clear();
}

void writeFileAtomically(const fs::path& target, const FileWriter& write) {
  OutputSet output;
  output.stage(target, write);
  output.commit();
}

void writeBytes(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) throw Error("cannot write " + path.string() + " (disk full or no permission?)");
}

}  // namespace ibrr
