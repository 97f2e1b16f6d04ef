#pragma once
// OpenGL 4.5 core contexts: headless over EGL (render into FBOs only) or a GLFW window for the
// viewer, behind one small interface. One context per thread; keep GL on one thread.
#include "util/error.hpp"

#include <memory>
#include <string>

namespace ibrr::gpu {

// No usable OpenGL 4.5 (no EGL device, no display, too old a driver). main() prints its message
// on one line and exits non-zero.
class GpuUnavailable : public Error {
public:
  using Error::Error;
};

struct ContextInfo {
  std::string platform;                       // "EGL device (hardware)", "EGL surfaceless", "GLFW window", ...
  std::string vendor;                         // GL_VENDOR
  std::string renderer;                       // GL_RENDERER, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string version;                        // GL_VERSION
  [[nodiscard]] bool isSoftware() const;      // llvmpipe, softpipe, swrast
  [[nodiscard]] std::string summary() const;  // "renderer (vendor), GL version, platform"
};

class Context {
public:
  virtual ~Context() = default;
  [[nodiscard]] virtual const ContextInfo& info() const = 0;
  // Makes this context current on the calling thread.
  virtual void makeCurrent() = 0;
};

// True when the current context exposes the GL extension `name` (GL_EXTENSIONS, one by one).
bool hasGlExtension(const char* name);
// The renderer and vendor of the current context (the rest of ContextInfo left empty): enough for isSoftware().
ContextInfo currentRenderer();

// Reversed depth for a pass seen through a camera (scene::Camera::projection): depth 1 at the near plane and 0 at
// the far one, in GL's [0, 1] clip range (glClipControl), cleared to 0 and tested with GL_GREATER. A 32-bit float
// depth buffer then keeps a relative precision of about 2^-24 of the distance at every distance. With the
// usual depth (1 far, [−1, 1]) a 0.1 mm gap 1 m away, where the Cornell box's light hangs under its ceiling,
// z-fights on an NVIDIA GPU. The constructor sets the state, the destructor restores GL's default.
class ReversedDepthPass {
public:
  explicit ReversedDepthPass(unsigned framebuffer);
  ~ReversedDepthPass();
  ReversedDepthPass(const ReversedDepthPass&) = delete;
  ReversedDepthPass& operator=(const ReversedDepthPass&) = delete;
};

enum class HeadlessPlatform {
  Automatic,    // a hardware EGL device, else Mesa's surfaceless platform, else any EGL device
  Device,       // EGL_EXT_platform_device only
  Surfaceless,  // EGL_MESA_platform_surfaceless only
};

// Where Mesa's llvmpipe rasterises a context's draws; a hardware GPU ignores it.
enum class SoftwareRaster {
  OwnThreads,     // llvmpipe's default: raster threads of its own, one a core
  CallingThread,  // on the GL thread itself (LP_NUM_THREADS=0): for work that keeps every core busy beside the
                  // rendering, where llvmpipe's threads only add hand-offs (the IBRR bake on two cores,
                  // bake::bakeSoftwareRaster)
};

// A headless 4.5 core context, current on the calling thread. Throws GpuUnavailable with one line
// saying what is missing. `hardwareDevice`: which hardware EGL device to try first (modulo their count), so that
// the ranks of a distributed bake on one node each take their own GPU (cluster.hpp, localRank). `raster` holds
// for this context only; an LP_NUM_THREADS the user set wins over it.
std::unique_ptr<Context> createHeadlessContext(HeadlessPlatform platform = HeadlessPlatform::Automatic,
                                               int hardwareDevice = 0,
                                               SoftwareRaster raster = SoftwareRaster::OwnThreads);

class WindowContext : public Context {
public:
  [[nodiscard]] virtual void* nativeWindow() const = 0;  // GLFWwindow*
  [[nodiscard]] virtual bool shouldClose() const = 0;
  virtual void swapBuffers() = 0;
};

// A GLFW window with a 4.5 core context, current on the calling thread. Throws GpuUnavailable
// (suggesting xvfb-run or `ibrr render`) when there is no display.
std::unique_ptr<WindowContext> createWindowContext(const std::string& title, int width, int height,
                                                   bool visible = true);

}  // namespace ibrr::gpu
