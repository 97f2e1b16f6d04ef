#include "util/atomic_file.hpp"

#include "util/error.hpp"

#include <unistd.h>

#include <atomic>

namespace ibrr {

namespace fs = std::filesystem;

void checkWritableFolder(const fs::path& target) {
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw Error(target.string() + ": the folder '" + folder.string() + "' does not exist; create it first (mkdir -p " +
                folder.string() + ")");
  if (access(folder.c_str(), W_OK) != 0)
    throw Error(target.string() + ": the folder '" + folder.string() + "' is not writable");
  if (fs::is_directory(target, ec)) throw Error(target.string() + ": is a folder; give a file name");
}

void writeFileAtomically(const fs::path& target, const std::function<void(const fs::path&)>& write) {
  checkWritableFolder(target);
  static std::atomic<unsigned> counter{0};
  // The temporary name keeps the extension, since some writers choose the format by it.
  fs::path temporary = target;
  temporary.replace_filename("." + target.stem().string() + ".tmp" + std::to_string(getpid()) + "-" +
                             std::to_string(counter++) + target.extension().string());
  try {
    write(temporary);
    fs::rename(temporary, target);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
}

}  // namespace ibrr
