#include "util/input_file.hpp"

#include "util/error.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace ibrr {
namespace {

struct RecordedInput {
  dev_t device;
  ino_t inode;
  std::filesystem::path canonical;  // for recordedInputInside
  std::string description;
};

std::mutex g_inputsMutex;
std::vector<RecordedInput> g_inputs;

}  // namespace

std::string describeSpecialFile(const std::filesystem::file_status& status) {
  return std::filesystem::is_directory(status) ? "a folder"
         : std::filesystem::is_fifo(status)    ? "a FIFO (named pipe)"
         : std::filesystem::is_socket(status)  ? "a socket"
                                               : "a device or other special file";
}

void requireRegularFile(const std::filesystem::path& path, const std::string& what) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status))
    throw Error(path.string() + ": the " + what + " does not exist; check the path");
  if (!std::filesystem::is_regular_file(status))
    throw Error(path.string() + ": is " + describeSpecialFile(status) + ", not a " + what +
                "; give the path of a regular file");
  recordInput(path, what);
}

void recordInput(const std::filesystem::path& path, const std::string& what) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return;
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  std::lock_guard lock(g_inputsMutex);
  for (const RecordedInput& input : g_inputs)
    if (input.device == info.st_dev && input.inode == info.st_ino) return;
  g_inputs.push_back({info.st_dev, info.st_ino, std::move(canonical), "the " + what + " '" + path.string() + "'"});
}

std::optional<std::string> recordedInputAt(const std::filesystem::path& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return std::nullopt;
  std::lock_guard lock(g_inputsMutex);
  for (const RecordedInput& input : g_inputs)
    if (input.device == info.st_dev && input.inode == info.st_ino) return input.description;
  return std::nullopt;
}

std::optional<std::string> recordedInputInside(const std::filesystem::path& folder) {
  std::error_code ec;
  const std::filesystem::path root = std::filesystem::weakly_canonical(folder, ec);
  if (ec || root.empty()) return std::nullopt;
  std::lock_guard lock(g_inputsMutex);
  for (const RecordedInput& input : g_inputs) {
    const auto [rootEnd, inputEnd] = std::mismatch(root.begin(), root.end(), input.canonical.begin(), input.canonical.end());
    if (rootEnd == root.end()) return input.description;
  }
  return std::nullopt;
}

void clearRecordedInputs() {
  std::lock_guard lock(g_inputsMutex);
  g_inputs.clear();
}

}  // namespace ibrr
