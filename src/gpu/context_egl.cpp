// Headless OpenGL over EGL: enumerate EGL devices (EGL_EXT_platform_device) and prefer a hardware
// one, else Mesa's surfaceless platform; bind the desktop GL API and make a 4.5 core context
// current with no surface. There is no default framebuffer: render into FBOs only.
#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/gl.hpp"

#include <glad/egl.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <vector>

namespace ibrr::gpu {
namespace {

struct Candidate {
  EGLenum platform;
  void* nativeDisplay;
  std::string description;
};

class EglContext final : public Context {
public:
  EglContext(EGLDisplay display, EGLContext context, std::string platform) : m_display(display), m_context(context) {
    m_info.platform = std::move(platform);
  }
  ~EglContext() override {
    eglMakeCurrent(m_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(m_display, m_context);
    eglTerminate(m_display);
  }
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

  [[nodiscard]] const ContextInfo& info() const override { return m_info; }
  void makeCurrent() override {
    if (!eglMakeCurrent(m_display, EGL_NO_SURFACE, EGL_NO_SURFACE, m_context))
      throw GpuUnavailable("eglMakeCurrent failed (error 0x" + std::to_string(eglGetError()) + ")");
  }
  ContextInfo& mutableInfo() { return m_info; }

private:
  EGLDisplay m_display;
  EGLContext m_context;
  ContextInfo m_info;
};

bool hasExtension(const char* list, const std::string& name) {
  if (!list) return false;
  const std::string extensions = std::string(" ") + list + " ";
  return extensions.find(" " + name + " ") != std::string::npos;
}

// LP_NUM_THREADS=0 while a display is initialised, where `raster` asks for it and the user has not set the
// variable: llvmpipe reads it when it creates the display's screen, so contexts made later keep their default.
class ScopedSoftwareRaster {
public:
  explicit ScopedSoftwareRaster(SoftwareRaster raster)
      : m_set(raster == SoftwareRaster::CallingThread && std::getenv("LP_NUM_THREADS") == nullptr) {
    if (m_set) setenv("LP_NUM_THREADS", "0", 0);
  }
  ~ScopedSoftwareRaster() {
    if (m_set) unsetenv("LP_NUM_THREADS");
  }
  ScopedSoftwareRaster(const ScopedSoftwareRaster&) = delete;
  ScopedSoftwareRaster& operator=(const ScopedSoftwareRaster&) = delete;

private:
  bool m_set;
};

// Tries one display; returns a current 4.5 core context or nullptr (with the reason in `why`).
std::unique_ptr<EglContext> tryDisplay(const Candidate& candidate, SoftwareRaster raster, std::string& why) {
  const ScopedSoftwareRaster rasterThreads(raster);
  EGLDisplay display = eglGetPlatformDisplayEXT(candidate.platform, candidate.nativeDisplay, nullptr);
  if (display == EGL_NO_DISPLAY) {
    why = candidate.description + ": no display";
    return nullptr;
  }
  EGLint major = 0, minor = 0;
  if (!eglInitialize(display, &major, &minor)) {
    why = candidate.description + ": eglInitialize failed";
    return nullptr;
  }
  // Reload with the display so that display extensions resolve.
  gladLoaderLoadEGL(display);
  if (!eglBindAPI(EGL_OPENGL_API)) {
    why = candidate.description + ": no desktop OpenGL";
    eglTerminate(display);
    return nullptr;
  }
  const EGLint contextAttributes[] = {EGL_CONTEXT_MAJOR_VERSION,
                                      4,
                                      EGL_CONTEXT_MINOR_VERSION,
                                      5,
                                      EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                      EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
#ifdef IBRR_GL_DEBUG
                                      EGL_CONTEXT_OPENGL_DEBUG,
                                      EGL_TRUE,
#endif
                                      EGL_NONE};
  EGLConfig config = nullptr;
  if (!hasExtension(eglQueryString(display, EGL_EXTENSIONS), "EGL_KHR_no_config_context")) {
    const EGLint configAttributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLint count = 0;
    if (!eglChooseConfig(display, configAttributes, &config, 1, &count) || count == 0) {
      why = candidate.description + ": no OpenGL config";
      eglTerminate(display);
      return nullptr;
    }
  }
  EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, contextAttributes);
  if (context == EGL_NO_CONTEXT) {
    why = candidate.description + ": no OpenGL 4.5 core context";
    eglTerminate(display);
    return nullptr;
  }
  if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
    why = candidate.description + ": cannot make a context current without a surface";
    eglDestroyContext(display, context);
    eglTerminate(display);
    return nullptr;
  }
  auto result = std::make_unique<EglContext>(display, context, candidate.description);
  if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(eglGetProcAddress)) || !GLAD_GL_VERSION_4_5) {
    why = candidate.description + ": the GL 4.5 core entry points did not load";
    return nullptr;
  }
  return result;
}

}  // namespace

std::unique_ptr<Context> createHeadlessContext(HeadlessPlatform platform, int hardwareDevice, SoftwareRaster raster) {
  if (!gladLoaderLoadEGL(EGL_NO_DISPLAY))
    throw GpuUnavailable("no usable GPU: libEGL could not be loaded (install libegl1 and libegl-mesa0)");
  const char* clientExtensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  std::vector<Candidate> hardware, software, surfaceless;
  if (platform != HeadlessPlatform::Surfaceless && hasExtension(clientExtensions, "EGL_EXT_platform_device") &&
      eglQueryDevicesEXT) {
    EGLint count = 0;
    eglQueryDevicesEXT(0, nullptr, &count);
    std::vector<EGLDeviceEXT> devices(std::size_t(std::max(count, 0)));
    if (count > 0 && eglQueryDevicesEXT(count, devices.data(), &count)) {
      for (EGLint i = 0; i < count; ++i) {
        const char* deviceExtensions = eglQueryDeviceStringEXT(devices[i], EGL_EXTENSIONS);
        // Mesa marks its CPU rasteriser with EGL_MESA_device_software; real GPUs expose a DRM node.
        const bool isSoftware = hasExtension(deviceExtensions, "EGL_MESA_device_software");
        (isSoftware ? software : hardware)
            .push_back({EGL_PLATFORM_DEVICE_EXT, devices[i],
                        std::string("EGL device ") + std::to_string(i) + (isSoftware ? " (software)" : " (hardware)")});
      }
    }
  }
  if (platform != HeadlessPlatform::Device && hasExtension(clientExtensions, "EGL_MESA_platform_surfaceless"))
    surfaceless.push_back({EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, "EGL surfaceless (Mesa)"});

  if (!hardware.empty())
    std::rotate(hardware.begin(), hardware.begin() + std::ptrdiff_t(std::max(hardwareDevice, 0) % int(hardware.size())),
                hardware.end());
  std::vector<Candidate> order = hardware;
  order.insert(order.end(), surfaceless.begin(), surfaceless.end());
  order.insert(order.end(), software.begin(), software.end());
  std::string reasons;
  for (const Candidate& candidate : order) {
    std::string why;
    if (auto context = tryDisplay(candidate, raster, why)) {
      ContextInfo& info = context->mutableInfo();
      info.vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
      info.renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
      info.version = reinterpret_cast<const char*>(glGetString(GL_VERSION));
      prepareNewContext();
      return context;
    }
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  throw GpuUnavailable("no usable GPU: no EGL device or surfaceless display gives OpenGL 4.5 core" +
                       (reasons.empty()
                            ? std::string(" (no EGL platform found; install libegl-mesa0 and libgl1-mesa-dri)")
                            : " (" + reasons + ")"));
}

bool ContextInfo::isSoftware() const {
  for (const char* name : {"llvmpipe", "softpipe", "swrast", "SwiftShader"})
    if (renderer.find(name) != std::string::npos) return true;
  return false;
}

std::string ContextInfo::summary() const { return renderer + " (" + vendor + "), OpenGL " + version + ", " + platform; }

}  // namespace ibrr::gpu
