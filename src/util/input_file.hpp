#pragma once
// Inputs must be regular files: opening a FIFO blocks until something writes to it, and a folder or a
// device is no file to read. Every loader checks its path first.
#include <filesystem>
#include <string>

namespace ibrr {

// Throws ibrr::Error "<path>: <what> ..." when the path (after symbolic links) does not exist or is not a
// regular file. `what` names the input ("scene manifest", "store file") for the message.
void requireRegularFile(const std::filesystem::path& path, const std::string& what);

}  // namespace ibrr
