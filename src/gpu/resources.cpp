#include "gpu/resources.hpp"

#include "util/error.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <atomic>
#include <string>

namespace ibrr::gpu {
namespace {
GLuint createBufferId() {
  GLuint id = 0;
  glCreateBuffers(1, &id);
  return id;
}
GLuint createTextureId(GLenum target) {
  GLuint id = 0;
  glCreateTextures(target, 1, &id);
  return id;
}
GLuint createQueryId(GLenum target) {
  GLuint id = 0;
  glCreateQueries(target, 1, &id);
  return id;
}
GLuint createRenderbufferId() {
  GLuint id = 0;
  glCreateRenderbuffers(1, &id);
  return id;
}
}  // namespace

Buffer::Buffer(GLsizeiptr bytes, const void* data, GLbitfield flags) : GlObject(createBufferId()), m_size(bytes) {
  glNamedBufferStorage(id(), bytes, data, flags);
}

Texture::Texture(GLenum internalFormat, int width, int height, int layers, int levels)
    : GlObject(createTextureId(layers > 0 ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_2D)), m_width(width), m_height(height) {
  if (layers > 0)
    glTextureStorage3D(id(), levels, internalFormat, width, height, layers);
  else
    glTextureStorage2D(id(), levels, internalFormat, width, height);
  glTextureParameteri(id(), GL_TEXTURE_MIN_FILTER, levels > 1 ? GL_LINEAR_MIPMAP_LINEAR : GL_NEAREST);
  glTextureParameteri(id(), GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTextureParameteri(id(), GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(id(), GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

Renderbuffer::Renderbuffer(GLenum internalFormat, int width, int height) : GlObject(createRenderbufferId()) {
  glNamedRenderbufferStorage(id(), internalFormat, width, height);
}

Framebuffer Framebuffer::create() {
  GLuint id = 0;
  glCreateFramebuffers(1, &id);
  return Framebuffer{id};
}

void Framebuffer::checkComplete(const char* what, int width, int height) const {
  const GLenum status = glCheckNamedFramebufferStatus(id(), GL_FRAMEBUFFER);
  if (status == GL_FRAMEBUFFER_COMPLETE) return;
  std::string name;
  switch (status) {
    case GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT: name = "GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT"; break;
    case GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT: name = "GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT"; break;
    case GL_FRAMEBUFFER_UNSUPPORTED: name = "GL_FRAMEBUFFER_UNSUPPORTED"; break;
    default: name = "status " + std::to_string(status);
  }
  GLint maxTextureSize = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &maxTextureSize);
  const std::string size =
      width > 0 && height > 0 ? " of " + std::to_string(width) + "x" + std::to_string(height) + " pixels" : "";
  throw Error(std::string("the ") + what + " framebuffer" + size + " is incomplete (" + name +
              "); most often its images are larger than this GL allows (at most " + std::to_string(maxTextureSize) +
              " pixels a side) or than its memory: use a smaller size");
}

VertexArray VertexArray::create() {
  GLuint id = 0;
  glCreateVertexArrays(1, &id);
  return VertexArray{id};
}

Query::Query(GLenum target) : GlObject(createQueryId(target)) {}

GpuTimer::GpuTimer() : m_query(GL_TIME_ELAPSED) {}
void GpuTimer::begin() { glBeginQuery(GL_TIME_ELAPSED, m_query.id()); }
void GpuTimer::end() { glEndQuery(GL_TIME_ELAPSED); }
double GpuTimer::milliseconds() const {
  GLuint64 nanoseconds = 0;
  glGetQueryObjectui64v(m_query.id(), GL_QUERY_RESULT, &nanoseconds);
  return double(nanoseconds) * 1e-6;
}

void GpuTimeTotal::begin() {
  // Spans older than the last 16 have long finished: reading them waits for nothing.
  constexpr std::size_t kPendingSpans = 16;
  if (m_spans.size() > 2 * kPendingSpans) resolve(kPendingSpans);
  m_spans.emplace_back().begin();
}
void GpuTimeTotal::end() { m_spans.back().end(); }
double GpuTimeTotal::seconds() const {
  resolve(0);
  return m_seconds;
}
void GpuTimeTotal::resolve(std::size_t keep) const {
  if (m_spans.size() <= keep) return;
  const auto resolved = m_spans.end() - std::ptrdiff_t(keep);
  for (auto span = m_spans.begin(); span != resolved; ++span) m_seconds += 1e-3 * span->milliseconds();
  m_spans.erase(m_spans.begin(), resolved);
}

Fence Fence::afterCommandsSoFar() {
  Fence fence;
  fence.m_sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  glFlush();  // so that the fence reaches the GPU and can signal while nobody waits on it
  return fence;
}
Fence::~Fence() {
  if (m_sync) glDeleteSync(m_sync);
}
Fence& Fence::operator=(Fence&& other) noexcept {
  if (this != &other) {
    if (m_sync) glDeleteSync(m_sync);
    m_sync = std::exchange(other.m_sync, nullptr);
  }
  return *this;
}
bool Fence::finished() const {
  if (!m_sync) return true;
  const GLenum status = glClientWaitSync(m_sync, 0, 0);
  return status == GL_ALREADY_SIGNALED || status == GL_CONDITION_SATISFIED;
}
void Fence::wait() const {
  if (!m_sync) return;
  constexpr GLuint64 kSecond = 1'000'000'000;
  while (glClientWaitSync(m_sync, GL_SYNC_FLUSH_COMMANDS_BIT, kSecond) == GL_TIMEOUT_EXPIRED) throwIfInterrupted();
}

namespace {
std::atomic<std::uint64_t> g_textureReadbacks{0};
}  // namespace

std::uint64_t textureReadbacks() { return g_textureReadbacks.load(); }
void countTextureReadback() { g_textureReadbacks.fetch_add(1); }

std::vector<glm::vec4> readTexture(GLuint texture, int width, int height) {
  countTextureReadback();
  std::vector<glm::vec4> texels(std::size_t(width) * std::size_t(height));
  glGetTextureImage(texture, 0, GL_RGBA, GL_FLOAT, GLsizei(texels.size() * sizeof(glm::vec4)), texels.data());
  return texels;
}

std::vector<glm::vec4> readTextureTopFirst(GLuint texture, int width, int height) {
  const std::vector<glm::vec4> bottomFirst = readTexture(texture, width, height);
  std::vector<glm::vec4> topFirst(bottomFirst.size());
  for (int y = 0; y < height; ++y)
    std::copy_n(bottomFirst.begin() + std::ptrdiff_t(height - 1 - y) * width, width,
                topFirst.begin() + std::ptrdiff_t(y) * width);
  return topFirst;
}

}  // namespace ibrr::gpu
