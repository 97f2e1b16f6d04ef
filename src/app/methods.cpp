#include "app/methods.hpp"

#include "util/error.hpp"

#include <array>

namespace ibrr::app {

std::span<const Method* const> methods() {
  static const std::array<const Method*, 10> kMethods = {
      &kIbrrMethod,   &kKellerMethod, &kGatherMethod,   &kProgressiveMethod, &kStochasticMethod,
      &kMatrixMethod, &kAlbedoMethod, &kNormalMethod, &kEmissionMethod,    &kLightmapMethod};
  return kMethods;
}

std::vector<const display::RenderMethod*> renderMethods() {
  std::vector<const display::RenderMethod*> shown;
  for (const Method* method : methods())
    if (method->display) shown.push_back(method->display);
  return shown;
}

std::string renderMethodNames() {
  std::string names;
  for (const display::RenderMethod* method : renderMethods())
    names += (names.empty() ? "" : ", ") + std::string(method->name);
  return names;
}

const display::RenderMethod& findRenderMethod(std::string_view name) {
  for (const display::RenderMethod* method : renderMethods())
    if (method->name == name) return *method;
  throw Error("unknown method '" + std::string(name) + "'; choose one of: " + renderMethodNames());
}

const std::vector<compare::MethodRunner>& compareRunners() {
  static const std::vector<compare::MethodRunner> kRunners = [] {
    std::vector<compare::MethodRunner> runners;
    for (const Method* method : methods())
      runners.insert(runners.end(), method->comparisons.begin(), method->comparisons.end());
    return runners;
  }();
  return kRunners;
}

}  // namespace ibrr::app
