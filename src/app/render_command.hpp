#pragma once
// `ibrr render`: what a display needs from the command besides its pass (RenderInputs: its flags and the files they
// name), defined in the file of the method row that shows it (app/methods.hpp) and made once per command.
#include "app/method_flags.hpp"
#include "display/render_methods.hpp"
#include "scene/scene.hpp"
#include "util/atomic_file.hpp"
#include "util/image.hpp"

namespace ibrr::app {

class RenderInputs {
public:
  virtual ~RenderInputs() = default;
  // Declares the flags of `ibrr render` the display reads, bound to its own options.
  virtual void declareFlags(MethodFlags& flags) = 0;
  // Before any file is read: what the flags alone decide (the files it needs, combinations, output paths).
  virtual void check(const MethodFlags& flags) const = 0;
  // Reads the files the flags name for `scene` into `settings` (no GL yet); they stay with this object.
  virtual void load(const scene::Scene& scene, display::RenderSettings& settings) = 0;
  // With the GL context current, before the frame: work on the GPU that the inputs need (a matrix relit). Returns
  // the scene to show when it moves lights, else null.
  virtual const scene::Scene* prepareOnGpu(const scene::Scene&, display::RenderSettings&) { return nullptr; }
  // After the picture is staged: what the display writes beside it (the holes image), all or none with it.
  virtual void stageBeside(const display::RenderOutput&, OutputSet&, const ToneMapping&) const {}
  // Its lines of the summary, after the "wrote" line.
  virtual void printSummary(const display::RenderOutput&) const {}
};

}  // namespace ibrr::app
