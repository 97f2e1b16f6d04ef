#include "app/methods.hpp"

#include "util/error.hpp"


namespace ibrr::app {

namespace {
// The table: the built-in rows, and the rows added by addMethod after them.
std::vector<const Method*>& table() {
  static std::vector<const Method*> rows = {&kIbrrMethod,        &kKellerMethod,     &kGatherMethod,
                                            &kProgressiveMethod, &kStochasticMethod, &kMatrixMethod,
                                            &kAlbedoMethod,      &kNormalMethod,     &kEmissionMethod,
                                            &kLightmapMethod};
  return rows;
}
}  // namespace

std::span<const Method* const> methods() { return table(); }

void addMethod(const Method& method) {
  for (const Method* row : table())
    if (row->name == method.name) throw Error("a method named '" + std::string(method.name) + "' is in the table");
  table().push_back(&method);
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

std::string_view defaultBakeMethod() {
  for (const Method* method : methods())
    if (method->makeBake) return method->name;
  return {};
}

std::string_view defaultRenderMethod() { return kAlbedoMethod.name; }

std::vector<compare::MethodRunner> compareRunners() {
  std::vector<compare::MethodRunner> runners;
  for (const Method* method : methods())
    runners.insert(runners.end(), method->comparisons.begin(), method->comparisons.end());
  return runners;
}

}  // namespace ibrr::app
