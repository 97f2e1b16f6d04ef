// `ibrr compare SCENE [--methods ...] [--camera NAME ...] [--budget S | --quality Q] [--reference ...]
// -o report/`: IBRR against Keller and the texel-lightmap solvers on one scene, with figures,
// pictures, error images and error-against-time curves in a report folder (compare/report.hpp).
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "app/methods.hpp"
#include "compare/compare.hpp"
#include "compare/report.hpp"
#include "export/scene_export.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"

#include <sstream>

namespace ibrr::app {
namespace {

struct CompareArguments {
  std::string scene;
  std::string methods;
  std::vector<std::string> cameras;
  std::string quality = "final";
  double budget = 0.0;
  std::vector<std::string> references;
  std::uint32_t referenceSpp = 0;
  std::string size = "256x256";
  std::uint32_t seed = 0;
  std::string output;
  bool exportPages = false;
};

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

void runCompare(const CompareArguments& arguments) {
  compare::CompareOptions options;
  options.scene = arguments.scene;
  options.methods = splitList(arguments.methods);
  options.cameras = arguments.cameras;
  options.quality = compare::parseQuality(arguments.quality);
  options.budgetSeconds = arguments.budget;
  for (const std::string& reference : arguments.references) options.references.emplace_back(reference);
  options.referenceSpp = arguments.referenceSpp;
  const scene::ImageSize size = parseImageSize(arguments.size, "--size");
  options.width = size.width;
  options.height = size.height;
  options.seed = arguments.seed;
  options.output = arguments.output;
  options.exportPages = arguments.exportPages;
  if (options.exportPages) exporter::checkWebFiles();  // the page's template is built before any work
  compare::validateCompareOptions(options, compareRunners());  // bad flags fail before any work
  compare::checkReportFolder(options.output);
  const compare::CompareResults results = compare::runComparison(options, compareRunners());
  compare::writeReport(results, options.output);
}

}  // namespace

void addCompareCommand(CLI::App& app) {
  auto arguments = std::make_shared<CompareArguments>();
  CLI::App* command = app.add_subcommand(
      "compare", "IBRR against Keller and the texel lightmaps on one scene: figures, pictures and curves in a report");
  command->add_option("SCENE", arguments->scene, "built-in scene name, manifest (.json) or mesh file")->required();
  command->add_option(
      "--methods", arguments->methods,
      "comma-separated methods (default: all implemented: " + compare::methodRunnerNames(compareRunners()) + ")");
  command->add_option("--camera", arguments->cameras, "a scene camera (repeat for several; default: all)");
  command
      ->add_option(
          "--quality", arguments->quality,
          "final: every method at its documented defaults, 4096-spp reference; preview: about a quarter of the work")
      ->capture_default_str();
  command->add_option("--budget", arguments->budget,
                      "seconds of bake/solve per method; each stops there (0 = the quality's full settings)");
  command->add_option("--reference", arguments->references,
                      "linear reference image (.exr/.pfm) at --size, one per camera in order; default: rendered");
  command->add_option("--reference-spp", arguments->referenceSpp,
                      "samples per pixel of the rendered reference (default: preview 256, final 4096)");
  command->add_option("--size", arguments->size, "report image size WxH")->capture_default_str();
  command->add_option("--seed", arguments->seed, "seed of light paths, hemicube rotations and the reference")
      ->capture_default_str();
  command->add_option("-o,--output", arguments->output, "report folder (replaced when the new report is complete)")
      ->required();
  command->add_flag("--export", arguments->exportPages,
                    "also write each baked method's walkthrough page (as 'ibrr export --html') to REPORT/pages/ and "
                    "link it from the report, so the methods can be walked through side by side");
  command->footer(
      "Writes REPORT/index.html (table, image grid, error images, error-against-time plot), results.json,\n"
      "results.csv, convergence.csv, images/ and, with --export, pages/. Re-running with the same seed gives the same figures except times.\n"
      "Examples:\n  ibrr compare cornell -o report\n"
      "  ibrr compare cornell --methods ibrr,gather --reference ref.exr --quality final -o report\n"
      "  ibrr compare cornell --methods ibrr,gather --quality preview --export -o report\n"
      "  ibrr compare sibenik --camera nave --budget 120 -o sibenik-report");
  command->callback([arguments] { runCompare(*arguments); });
}

}  // namespace ibrr::app
