#pragma once
// Writing outputs so that a failure never leaves a half-written or clobbered file: the content is
// written under a temporary name in the target's folder and renamed over the target only when
// complete (rename is atomic within one file system).
#include <filesystem>
#include <functional>

namespace ibrr {

// Calls write(temporaryPath), then renames it to `target`. If write throws, the temporary file is
// removed, the target is left as it was, and the exception propagates.
void writeFileAtomically(const std::filesystem::path& target,
                         const std::function<void(const std::filesystem::path& temporary)>& write);

// Throws ibrr::Error naming the path and the fix if its folder does not exist or is not writable.
void checkWritableFolder(const std::filesystem::path& target);

}  // namespace ibrr
