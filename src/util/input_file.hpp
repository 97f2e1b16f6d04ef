#pragma once
// Inputs must be regular files: opening a FIFO blocks until something writes to it, and a folder or a
// device is no file to read. Every loader checks its path first, and every file read is recorded, so
// that no command writes an output over one of its own inputs (see util/atomic_file.hpp).
#include <filesystem>
#include <optional>
#include <string>

namespace ibrr {

// Throws ibrr::Error "<path>: <what> ..." when the path (after symbolic links) does not exist or is not a
// regular file; otherwise records it as an input of this process. `what` names the input ("scene
// manifest", "store file") for the message.
void requireRegularFile(const std::filesystem::path& path, const std::string& what);

// "a folder", "a FIFO (named pipe)", "a socket" or "a device or other special file", for messages.
std::string describeSpecialFile(const std::filesystem::file_status& status);

// Records a file this process reads (for loaders whose files are opened by a library: meshes, MTL
// files, textures). Paths that do not name an existing file are ignored.
void recordInput(const std::filesystem::path& path, const std::string& what);

// When `path` (after symbolic links) is the same file (device and inode) as a recorded input: that
// input's description, "the scene manifest 'my.json'". Otherwise nothing.
std::optional<std::string> recordedInputAt(const std::filesystem::path& path);

// When a recorded input lies inside `folder` (at any depth, after symbolic links): its description.
std::optional<std::string> recordedInputInside(const std::filesystem::path& folder);

// Forgets every recorded input (tests and the viewer, which loads scenes one after another).
void clearRecordedInputs();

}  // namespace ibrr
