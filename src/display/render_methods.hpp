#pragma once
// The table of what `ibrr render --view NAME` can produce, chosen by name. Each entry renders the
// scene from one camera into a linear image. G-buffer views are here now; the radiosity methods
// (IBRR, Keller, the lightmap solvers) join the same table.
#include "display/image.hpp"
#include "scene/scene.hpp"

#include <span>
#include <string>
#include <string_view>

namespace ibrr::display {

struct RenderRequest {
  const scene::Scene& scene;
  const scene::Camera& camera;
  int width;
  int height;
};

struct RenderMethod {
  std::string_view name;
  std::string_view summary;  // one line for --help
  // Renders with the GL context current on this thread.
  Image (*render)(const RenderRequest& request);
};

[[nodiscard]] std::span<const RenderMethod> renderMethods();
// Throws ibrr::Error listing the known names when none matches.
[[nodiscard]] const RenderMethod& findRenderMethod(std::string_view name);
// "albedo, normal, emission" for help texts.
[[nodiscard]] std::string renderMethodNames();

}  // namespace ibrr::display
