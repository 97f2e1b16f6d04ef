#pragma once
// The table of methods: one row each, defined in the method's own file (method_NAME.cpp) with its bake and its
// flags, read by `ibrr bake` (--method, the flags, mpirun) and `ibrr compare` (--methods, the report's rows).
// Adding a method is one new file and one row in methods.cpp.
#include "app/bake_command.hpp"
#include "app/render_command.hpp"
#include "compare/compare.hpp"
#include "display/render_methods.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ibrr::app {

struct Method {
  std::string_view name;
  std::string_view summary;  // what it makes, for --help
  // Its bake, made once per `ibrr bake` (its flags, its run); null for a method with nothing to precompute (Keller's),
  // which `ibrr bake --method` refuses. `distributed`: mpirun may split it over ranks.
  std::unique_ptr<BakeMethod> (*makeBake)() = nullptr;
  bool distributed = false;
  // Its entries in `ibrr compare`, in the report's order (e.g. with and without the bias compensation).
  std::vector<compare::MethodRunner> comparisons;
  // How `ibrr render --method NAME`, the viewer and its compare entries show it; null for a method whose result
  // another row shows (the lightmap solvers: "lightmap"). With it, what `ibrr render` gives its pass: the flags it
  // reads and the files they name (null: none, as the G-buffer views).
  const display::RenderMethod* display = nullptr;
  std::unique_ptr<RenderInputs> (*makeRenderInputs)() = nullptr;
};

// The rows, in --method's and the report's order: ibrr, keller, gather, progressive, stochastic, matrix, and the rows
// that only show: albedo, normal, emission (the G-buffer views) and lightmap (any solver's lightmap).
extern const Method kIbrrMethod, kKellerMethod, kGatherMethod, kProgressiveMethod, kStochasticMethod, kMatrixMethod;
extern const Method kAlbedoMethod, kNormalMethod, kEmissionMethod, kLightmapMethod;
std::span<const Method* const> methods();
// Appends a row of a method defined outside this library (a plug-in: the tests' own method) to the table, before
// any command is made; throws ibrr::Error when the table has a row of that name. The row must outlive the table.
void addMethod(const Method& method);

// The displays of the rows that have one, in table order (`ibrr render --method`, the viewer's modes).
std::vector<const display::RenderMethod*> renderMethods();
// Throws ibrr::Error listing the names when no row shows `name`.
const display::RenderMethod& findRenderMethod(std::string_view name);
// "ibrr, keller, albedo, normal, emission, lightmap" for help texts.
std::string renderMethodNames();
// What `ibrr bake` makes without --method (the first row with a bake: ibrr), and what `ibrr render` shows when
// neither --method nor an input file is given (the albedo view).
std::string_view defaultBakeMethod();
std::string_view defaultRenderMethod();

// The lightmap row's display, which the lightmap solvers' compare entries draw their lightmaps with.
extern const display::RenderMethod kLightmapDisplay;

// Every row's compare entries, in table order.
std::vector<compare::MethodRunner> compareRunners();

// What the IBRR row and Keller's share in a comparison: the IBRR bake's options at the comparison's quality
// (Keller's frame lights the same VPLs), and those options as the report's settings JSON.
bake::BakeOptions compareBakeOptions(const compare::CompareOptions& options);
nlohmann::json bakeSettingsJson(const bake::BakeOptions& bake);

}  // namespace ibrr::app
