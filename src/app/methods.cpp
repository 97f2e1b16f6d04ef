#include "app/methods.hpp"

#include <array>

namespace ibrr::app {

std::span<const Method* const> methods() {
  static const std::array<const Method*, 6> kMethods = {&kIbrrMethod,        &kKellerMethod,     &kGatherMethod,
                                                        &kProgressiveMethod, &kStochasticMethod, &kMatrixMethod};
  return kMethods;
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
