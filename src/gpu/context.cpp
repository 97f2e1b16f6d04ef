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

ContextInfo currentRenderer() {
  ContextInfo info;
  const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const auto* vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
  info.renderer = renderer ? renderer : "";
  info.vendor = vendor ? vendor : "";
  return info;
}

ReversedDepthPass::ReversedDepthPass(unsigned framebuffer) {
  glClipControl(GL_LOWER_LEFT, GL_ZERO_TO_ONE);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_GREATER);
  glClearNamedFramebufferfi(framebuffer, GL_DEPTH_STENCIL, 0, 0.0f, 0);
}

ReversedDepthPass::~ReversedDepthPass() {
  glClipControl(GL_LOWER_LEFT, GL_NEGATIVE_ONE_TO_ONE);
  glDepthFunc(GL_LESS);
}

}  // namespace ibrr::gpu
