#include "gpu/debug.hpp"

#include "gpu/gl.hpp"
#include "util/error.hpp"

#include <cstdio>

namespace ibrr::gpu {

namespace {
#ifdef IBRR_GL_DEBUG
void GLAD_API_PTR onDebugMessage(GLenum, GLenum type, GLuint id, GLenum severity, GLsizei, const GLchar* message,
                                 const void*) {
  if (severity == GL_DEBUG_SEVERITY_NOTIFICATION) return;
  std::fprintf(stderr, "ibrr: GL debug%s (id %u): %s\n", type == GL_DEBUG_TYPE_ERROR ? " error" : "", id, message);
}

void installDebugOutput() {
  glEnable(GL_DEBUG_OUTPUT);
  glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
  glDebugMessageCallback(onDebugMessage, nullptr);
}
#else
void installDebugOutput() {}
#endif
}  // namespace

#ifdef IBRR_GL_DEBUG
DebugGroup::DebugGroup(const char* name) { glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, 0, -1, name); }
DebugGroup::~DebugGroup() { glPopDebugGroup(); }
#else
DebugGroup::DebugGroup(const char*) {}
DebugGroup::~DebugGroup() = default;
#endif

void prepareNewContext() {
  installDebugOutput();
  // The priming query must enclose real work (a clear of a 1×1 target) to absorb the bogus value.
  GLuint query = 0, texture = 0, framebuffer = 0;
  glCreateQueries(GL_TIME_ELAPSED, 1, &query);
  glCreateTextures(GL_TEXTURE_2D, 1, &texture);
  glTextureStorage2D(texture, 1, GL_RGBA8, 1, 1);
  glCreateFramebuffers(1, &framebuffer);
  glNamedFramebufferTexture(framebuffer, GL_COLOR_ATTACHMENT0, texture, 0);
  glBeginQuery(GL_TIME_ELAPSED, query);
  const float zero[4] = {0, 0, 0, 0};
  glClearNamedFramebufferfv(framebuffer, GL_COLOR, 0, zero);
  glEndQuery(GL_TIME_ELAPSED);
  GLuint64 ignored = 0;
  glGetQueryObjectui64v(query, GL_QUERY_RESULT, &ignored);
  glDeleteFramebuffers(1, &framebuffer);
  glDeleteTextures(1, &texture);
  glDeleteQueries(1, &query);
}

void checkGlError(const char* where) {
  const GLenum error = glGetError();
  if (error != GL_NO_ERROR) {
    char code[16];
    std::snprintf(code, sizeof code, "0x%04x", error);
    throw Error(std::string("OpenGL error ") + code + " in " + where);
  }
}

}  // namespace ibrr::gpu
