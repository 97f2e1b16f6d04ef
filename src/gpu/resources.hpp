#pragma once
// Move-only owners of GL objects: copy is deleted, a move empties the source, the destructor
// deletes the object. Each wrapper exposes id() for the raw GL calls it does not cover.
#include "gpu/gl.hpp"

#include <glm/glm.hpp>

#include <utility>
#include <vector>

namespace ibrr::gpu {

template <void (*Delete)(GLuint)>
class GlObject {
public:
  GlObject() = default;
  explicit GlObject(GLuint id) : m_id(id) {}
  ~GlObject() { reset(); }
  GlObject(const GlObject&) = delete;
  GlObject& operator=(const GlObject&) = delete;
  GlObject(GlObject&& other) noexcept : m_id(std::exchange(other.m_id, 0)) {}
  GlObject& operator=(GlObject&& other) noexcept {
    if (this != &other) {
      reset();
      m_id = std::exchange(other.m_id, 0);
    }
    return *this;
  }
  [[nodiscard]] GLuint id() const { return m_id; }
  [[nodiscard]] explicit operator bool() const { return m_id != 0; }
  void reset() {
    if (m_id) Delete(m_id);
    m_id = 0;
  }

private:
  GLuint m_id = 0;
};

namespace detail {
inline void deleteBuffer(GLuint id) { glDeleteBuffers(1, &id); }
inline void deleteTexture(GLuint id) { glDeleteTextures(1, &id); }
inline void deleteFramebuffer(GLuint id) { glDeleteFramebuffers(1, &id); }
inline void deleteRenderbuffer(GLuint id) { glDeleteRenderbuffers(1, &id); }
inline void deleteVertexArray(GLuint id) { glDeleteVertexArrays(1, &id); }
inline void deleteQuery(GLuint id) { glDeleteQueries(1, &id); }
inline void deleteProgram(GLuint id) { glDeleteProgram(id); }
inline void deleteShader(GLuint id) { glDeleteShader(id); }
}  // namespace detail

// A buffer with immutable storage (glNamedBufferStorage).
class Buffer : public GlObject<detail::deleteBuffer> {
public:
  Buffer() = default;
  // bytes: size; data may be null; flags e.g. GL_DYNAMIC_STORAGE_BIT | GL_MAP_READ_BIT.
  Buffer(GLsizeiptr bytes, const void* data, GLbitfield flags);
  [[nodiscard]] GLsizeiptr size() const { return m_size; }

private:
  GLsizeiptr m_size = 0;
};

// A 2D texture (or 2D array when layers > 0) with immutable storage.
class Texture : public GlObject<detail::deleteTexture> {
public:
  Texture() = default;
  Texture(GLenum internalFormat, int width, int height, int layers = 0, int levels = 1);
  [[nodiscard]] int width() const { return m_width; }
  [[nodiscard]] int height() const { return m_height; }

private:
  int m_width = 0;
  int m_height = 0;
};

class Renderbuffer : public GlObject<detail::deleteRenderbuffer> {
public:
  Renderbuffer() = default;
  Renderbuffer(GLenum internalFormat, int width, int height);
};

class Framebuffer : public GlObject<detail::deleteFramebuffer> {
public:
  using GlObject::GlObject;
  static Framebuffer create();
  // Throws ibrr::Error naming `what`, the status and (when given) the images' size in pixels when the
  // framebuffer is incomplete, with the GL's largest image size: the usual cause is a size too large
  // for the GL or its memory.
  void checkComplete(const char* what, int width = 0, int height = 0) const;
};

class VertexArray : public GlObject<detail::deleteVertexArray> {
public:
  using GlObject::GlObject;
  static VertexArray create();
};

class Shader : public GlObject<detail::deleteShader> {
public:
  using GlObject::GlObject;
};

class Program : public GlObject<detail::deleteProgram> {
public:
  using GlObject::GlObject;
  void use() const { glUseProgram(id()); }
};

class Query : public GlObject<detail::deleteQuery> {
public:
  Query() = default;
  explicit Query(GLenum target);
};

// Measures GPU time of the commands between begin() and end() with GL_TIME_ELAPSED.
class GpuTimer {
public:
  GpuTimer();
  void begin();
  void end();
  // Waits for the result; milliseconds of GPU time.
  [[nodiscard]] double milliseconds() const;

private:
  Query m_query;
};

// The GPU time of many spans of commands (GL_TIME_ELAPSED, one query a span), summed without waiting for the GPU
// until seconds() is asked: a span's result is read only once several later spans have begun.
class GpuTimeTotal {
public:
  void begin();
  void end();
  // Waits for every span's result; seconds of GPU time in all.
  [[nodiscard]] double seconds() const;

private:
  // Adds the results of all but the last `keep` spans to m_seconds and drops their queries.
  void resolve(std::size_t keep) const;
  mutable std::vector<GpuTimer> m_spans;
  mutable double m_seconds = 0.0;
};

// A fence after the commands issued so far (glFenceSync): move-only, deleted with its owner.
class Fence {
public:
  Fence() = default;
  static Fence afterCommandsSoFar();
  ~Fence();
  Fence(Fence&& other) noexcept : m_sync(std::exchange(other.m_sync, nullptr)) {}
  Fence& operator=(Fence&& other) noexcept;
  Fence(const Fence&) = delete;
  Fence& operator=(const Fence&) = delete;
  // Whether the GPU has finished those commands, asked without waiting.
  [[nodiscard]] bool finished() const;
  // Waits until it has, in steps of a second between which a Ctrl-C is seen (ibrr::throwIfInterrupted).
  void wait() const;

private:
  GLsync m_sync = nullptr;
};

// Reads level 0 of a width × height texture as float RGBA in GL's row order (the bottom row first). Every call
// counts one texture readback.
std::vector<glm::vec4> readTexture(GLuint texture, int width, int height);
// The same with the rows reordered top-first (images are top-first).
std::vector<glm::vec4> readTextureTopFirst(GLuint texture, int width, int height);
// The texture readbacks of this process so far (readTexture calls, and those that countTextureReadback notes):
// the viewer logs them per frame.
[[nodiscard]] std::uint64_t textureReadbacks();
// Notes one texture readback made without readTexture (an integer texture, a part of one).
void countTextureReadback();

}  // namespace ibrr::gpu
