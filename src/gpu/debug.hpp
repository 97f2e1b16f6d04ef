#pragma once
// GL debugging: the KHR_debug message callback and one debug group per pass, both active only in
// IBRR_GL_DEBUG builds (cmake -DIBRR_GL_DEBUG=ON), so release builds pay nothing.
#include <string>

namespace ibrr::gpu {

// Called once by every context right after creation, while current: installs the debug output
// callback (IBRR_GL_DEBUG builds) and runs one GL_TIME_ELAPSED query around a 1×1 clear, because
// llvmpipe reports the first time query that encloses work as the time since some epoch (minutes).
void prepareNewContext();

// A debug group for the duration of a scope (shows in RenderDoc / apitrace).
class DebugGroup {
public:
  explicit DebugGroup(const char* name);
  ~DebugGroup();
  DebugGroup(const DebugGroup&) = delete;
  DebugGroup& operator=(const DebugGroup&) = delete;
};

// Throws ibrr::Error naming `where` if glGetError() reports an error (cheap checks at pass ends).
void checkGlError(const char* where);

}  // namespace ibrr::gpu
