#include "util/input_file.hpp"

#include "util/error.hpp"

namespace ibrr {

void requireRegularFile(const std::filesystem::path& path, const std::string& what) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status))
    throw Error(path.string() + ": the " + what + " does not exist; check the path");
  if (!std::filesystem::is_regular_file(status)) {
    const char* kind = std::filesystem::is_directory(status) ? "a folder"
                       : std::filesystem::is_fifo(status)    ? "a FIFO (named pipe)"
                       : std::filesystem::is_socket(status)  ? "a socket"
                                                             : "a device or other special file";
    throw Error(path.string() + ": is " + kind + ", not a " + what + "; give the path of a regular file");
  }
}

}  // namespace ibrr
