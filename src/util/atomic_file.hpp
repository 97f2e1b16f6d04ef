#pragma once
// Writing outputs so that nothing is lost: a failure, Ctrl-C or SIGTERM never leaves a half-written
// or clobbered file, and no command writes over one of its own inputs.
//
// Each output is written under a unique temporary name (mkstemp) in its target's folder, flushed to
// disk, and renamed over the target only when complete; rename is atomic within one file system, so
// even SIGKILL leaves the previous target intact (and at most a hidden ".NAME.tmp-XXXXXX" file).
// A symbolic link is written through: its target is replaced and the link kept.
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace ibrr {

using FileWriter = std::function<void(const std::filesystem::path& temporary)>;

// The checks every output passes before any work is done, each an ibrr::Error naming the path and
// the fix: its folder exists and is writable; an existing target (after symbolic links) is a regular
// file, not read-only, and not a file this process has read (util/input_file.hpp: compared by device
// and inode, so another name for the same file is caught too).
void checkOutputFile(const std::filesystem::path& target);

// Calls write(temporaryPath), then renames it to `target` (see above). If write throws or a stop was
// requested (Ctrl-C, SIGTERM) the temporary file is removed, the target is left as it was, and the
// exception (ibrr::Interrupted for a stop) propagates.
void writeFileAtomically(const std::filesystem::path& target, const FileWriter& write);

// Writes `bytes` to `path` (typically a FileWriter's temporary file); throws ibrr::Error naming the path when the
// write fails (disk full, no permission).
void writeBytes(const std::filesystem::path& path, std::string_view bytes);

// Several outputs that are written all or none: each stage() writes a temporary file; commit()
// renames them all once every one is complete. Destroyed without commit(), it removes them.
class OutputSet {
public:
  OutputSet();
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  void stage(const std::filesystem::path& target, const FileWriter& write);
  // Throws ibrr::Interrupted (removing every staged file) if a stop was requested.
  void commit();

private:
  struct Staged;  // a target and its temporary file
  std::vector<std::unique_ptr<Staged>> m_staged;
};

}  // namespace ibrr
