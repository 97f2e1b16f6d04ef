// `ibrr bench [store|rays|ibrr|all]`: the project's benchmarks. Figures are measured in one run and
// printed as tables (speed and memory targets are checked here, never in the tests).
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "bench/store_bench.hpp"
#include "display/ibrr_bench.hpp"
#include "lightmap/lightmap_bench.hpp"
#include "lightmap/matrix.hpp"
#include "rays/rays_bench.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>

namespace ibrr::app {
namespace {

struct BenchOptions {
  std::string which = "all";
  bool quick = false;
  std::string json;
  bool convergence = false;
  std::string sharedScenes = "../shared/scenes";
  std::string sections = "bake,insertion,display,geometry";
  std::uint32_t bakePaths = 0;     // 0: the benchmark's own (1,024; 32 with --quick)
  bool sharedScenesGiven = false;  // --shared-scenes on the command line: then its folder must exist
  std::string lightmapFlagGiven;   // a flag of the lightmap benchmark given ("" for none)
  lightmap::LightmapBenchOptions lightmap;
};

// The ibrr benchmark's sections, by name: the flag of IbrrBenchOptions each one sets.
struct IbrrSection {
  const char* name;
  bool display::IbrrBenchOptions::*flag;
};
constexpr IbrrSection kIbrrSections[] = {
    {"bake", &display::IbrrBenchOptions::bake},
    {"insertion", &display::IbrrBenchOptions::insertion},
    {"display", &display::IbrrBenchOptions::display},
    {"geometry", &display::IbrrBenchOptions::geometry},
};

// The ibrr benchmark's sections from "bake,insertion,display,geometry" (any subset, comma-separated).
void parseSections(const std::string& list, display::IbrrBenchOptions& ibrr) {
  for (const IbrrSection& section : kIbrrSections) ibrr.*section.flag = false;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t end = std::min(list.find(',', begin), list.size());
    const std::string name = list.substr(begin, end - begin);
    const auto known = std::find_if(std::begin(kIbrrSections), std::end(kIbrrSections),
                                    [&](const IbrrSection& section) { return name == section.name; });
    if (known == std::end(kIbrrSections))
      throw ibrr::Error("--sections '" + list + "': unknown section '" + name +
                        "'; give bake, insertion, display and/or geometry, comma-separated (e.g. --sections "
                        "bake,display)");
    ibrr.*known->flag = true;
    begin = end + 1;
  }
}

void runBench(const BenchOptions& options) {
  const bool all = options.which == "all";
  if (!all && options.which != "store" && options.which != "rays" && options.which != "ibrr" &&
      options.which != "lightmap")
    throw ibrr::Error("unknown benchmark '" + options.which + "'; choose store, rays, ibrr, lightmap or all");
  if (!options.json.empty() && !all && options.which != "store")
    throw ibrr::Error(
        "--json writes the store benchmark's figures; use it with 'ibrr bench store' or 'ibrr bench all'");
  if (!options.json.empty()) ibrr::checkOutputFile(options.json);
  if (!options.lightmapFlagGiven.empty() && !all && options.which != "lightmap")
    throw ibrr::Error(options.lightmapFlagGiven +
                      " is a setting of the lightmap benchmark; use it with 'ibrr bench lightmap' or 'ibrr bench all'");
  std::error_code ec;
  if (!options.lightmap.output.empty() && !std::filesystem::is_directory(options.lightmap.output, ec))
    throw ibrr::Error("--out " + options.lightmap.output.string() + ": no such folder; create it first");
  display::IbrrBenchOptions ibrr;
  if (all || options.which == "ibrr") {
    parseSections(options.sections, ibrr);
    if (options.sharedScenesGiven && !std::filesystem::is_directory(options.sharedScenes, ec))
      throw ibrr::Error("--shared-scenes " + options.sharedScenes +
                        ": no such folder; point it at the shared test scenes (the conference room, bunny and "
                        "dragon), or leave it out to bench the Cornell box alone");
  }
  if (all || options.which == "store") {
    std::cout << "== store: LDC insertion, retrieval and memory ==\n";
    bench::StoreBenchOptions store;
    if (options.quick) {
      store.resolutions = {128};
      store.secondsPerMeasure = 0.3;
    }
    if (!options.json.empty()) store.jsonPath = options.json;
    bench::runStoreBenchmark(store, std::cout);
  }
  if (all || options.which == "rays") {
    std::cout << "\n== rays: Embree throughput and the reference path tracer ==\n";
    rays::RaysBenchOptions raysOptions;
    raysOptions.convergence = options.convergence;
    if (options.quick) {
      raysOptions.rayCount = 1u << 18;
      raysOptions.referenceSize = 64;
      raysOptions.referenceSpp = 64;
    }
    rays::runRaysBenchmark(std::cout, raysOptions);
  }
  if (all || options.which == "ibrr") {
    std::cout << "\n== ibrr: bake and display ==\n";
    ibrr.quick = options.quick;
    if (options.bakePaths > 0) ibrr.bakePaths = options.bakePaths;
    ibrr.sharedScenes = options.sharedScenes;
    display::runIbrrBenchmark(ibrr, std::cout);
  }
  if (all || options.which == "lightmap") {
    std::cout << "\n== lightmap: the atlas and the form-factor matrix ==\n";
    lightmap::LightmapBenchOptions lightmapOptions = options.lightmap;
    lightmapOptions.quick = options.quick;
    lightmap::runLightmapBenchmark(lightmapOptions, std::cout);
  }
}

}  // namespace

void addBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command =
      app.add_subcommand("bench", "Measure speed and memory: store, rays, ibrr (bake and display), lightmap or all");
  command->add_option("WHICH", options->which, "store, rays, ibrr, lightmap or all")->capture_default_str();
  command->add_flag("--quick", options->quick, "small sizes, for a smoke run (figures not for the README)");
  command->add_option("--json", options->json, "store benchmark: also write its figures as JSON here");
  command->add_flag("--convergence", options->convergence,
                    "rays benchmark: also render 4096 spp and check relRMSE against 1/sqrt(spp)");
  command
      ->add_option("--sections", options->sections,
                   "ibrr benchmark: which of bake (the bakes, both warps, both configurations), insertion (the CPU "
                   "warp's ns per LDI write), display, geometry to run (comma-separated)")
      ->capture_default_str();
  command
      ->add_option("--paths", options->bakePaths,
                   "ibrr benchmark: light paths of the bake section (default 1024, 32 with --quick; `ibrr bake` "
                   "itself defaults to 4096)")
      ->check(CLI::Range(1u, 1u << 24));
  command
      ->add_option("--shared-scenes", options->sharedScenes,
                   "folder of the shared test scenes (conference room, bunny, dragon); when left out and the "
                   "default is missing, their parts are skipped with a note")
      ->capture_default_str();
  lightmap::LightmapBenchOptions& lightmapBench = options->lightmap;
  command->add_option("--matrix-scene", lightmapBench.matrixScene, "lightmap benchmark: the form-factor matrix's scene")
      ->capture_default_str();
  command
      ->add_option("--matrix-atlas", lightmapBench.matrixAtlas,
                   "lightmap benchmark: the matrix's atlas side (default " +
                       std::to_string(lightmap::kDefaultMatrixAtlasSize) + ", 16 with --quick)")
      ->check(CLI::Range(4, 1024));
  command->add_option("--bounces", lightmapBench.bounces, "lightmap benchmark: the matrix's bounces k (default 8)")
      ->check(CLI::Range(1, 64));
  command
      ->add_option("--hemicube", lightmapBench.hemicube,
                   "lightmap benchmark: H of the form-factor hemicubes (default 64)")
      ->check(CLI::Range(8, 1024));
  command->add_option("--out", lightmapBench.output,
                      "lightmap benchmark: a folder for cornell_atlas.png, the matrix file and the dense, "
                      "compressed and moved-light lightmaps");
  command->footer(
      "Examples:\n  ibrr bench store\n  ibrr bench ibrr --shared-scenes ../shared/scenes\n  ibrr bench ibrr --sections "
      "display\n  ibrr bench ibrr --sections bake --paths 4096\n  ibrr bench ibrr --sections insertion\n  ibrr bench "
      "lightmap --out figures\n  ibrr bench all "
      "--quick");
  command->callback([options, command] {
    options->sharedScenesGiven = command->count("--shared-scenes") > 0;
    for (const char* flag : {"--matrix-scene", "--matrix-atlas", "--bounces", "--hemicube", "--out"})
      if (command->count(flag) > 0) options->lightmapFlagGiven = flag;
    runBench(*options);
  });
}

}  // namespace ibrr::app
