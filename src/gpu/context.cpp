// What the current GL context offers, whichever platform made it.
#include "gpu/context.hpp"

#include "gpu/gl.hpp"

#include <cstring>

namespace ibrr::gpu {

bool hasGlExtension(const char* name) {
  GLint count = 0;
  glGetIntegerv(GL_NUM_EXTENSIONS, &count);
  for (GLint i = 0; i < count; ++i) {
    const auto* extension = reinterpret_cast<const char*>(glGetStringi(GL_EXTENSIONS, GLuint(i)));
    if (extension && std::strcmp(extension, name) == 0) return true;
  }
  return false;
}

}  // namespace ibrr::gpu
