// A GLFW 3.3 window with an OpenGL 4.5 core context, for the viewer (under xvfb-run in tests).
#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/gl.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

namespace ibrr::gpu {
namespace {

class GlfwContext final : public WindowContext {
public:
  explicit GlfwContext(GLFWwindow* window) : m_window(window) {}
  ~GlfwContext() override {
    glfwDestroyWindow(m_window);
    glfwTerminate();
  }
  GlfwContext(const GlfwContext&) = delete;
  GlfwContext& operator=(const GlfwContext&) = delete;

  [[nodiscard]] const ContextInfo& info() const override { return m_info; }
  void makeCurrent() override { glfwMakeContextCurrent(m_window); }
  [[nodiscard]] void* nativeWindow() const override { return m_window; }
  [[nodiscard]] bool shouldClose() const override { return glfwWindowShouldClose(m_window) != 0; }
  void swapBuffers() override { glfwSwapBuffers(m_window); }
  ContextInfo& mutableInfo() { return m_info; }

private:
  GLFWwindow* m_window;
  ContextInfo m_info;
};

}  // namespace

std::unique_ptr<WindowContext> createWindowContext(const std::string& title, int width, int height, bool visible) {
  if (!glfwInit())
    throw GpuUnavailable(
        "no display for a window (is DISPLAY set?); run under 'xvfb-run -a', or headless: 'ibrr render', "
        "or 'ibrr view --offscreen' with --script or --frames");
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
#ifdef IBRR_GL_DEBUG
  glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, GLFW_TRUE);
#endif
  GLFWwindow* window = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (!window) {
    glfwTerminate();
    throw GpuUnavailable(
        "the display gives no OpenGL 4.5 core window; run under 'xvfb-run -a' or use 'ibrr render' headless");
  }
  auto context = std::make_unique<GlfwContext>(window);
  glfwMakeContextCurrent(window);
  if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(glfwGetProcAddress)) || !GLAD_GL_VERSION_4_5)
    throw GpuUnavailable("the window's context does not provide OpenGL 4.5 core");
  ContextInfo& info = context->mutableInfo();
  info.platform = "GLFW window";
  info.vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
  info.renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  info.version = reinterpret_cast<const char*>(glGetString(GL_VERSION));
  prepareNewContext();
  return context;
}

}  // namespace ibrr::gpu
