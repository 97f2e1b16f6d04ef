#pragma once
// `ibrr bench lightmap`: the lightmap atlas on the Cornell box, Sibenik and the conference room (charts,
// size, density, waste, times), and the form-factor matrix's figures (patches, bytes, precompute, relight
// per storage, the k-bounce matrix against k chained products, compression error with and without
// reordering). The other solvers' figures are their bakes' summaries (`ibrr bake --method progressive`,
// `--method stochastic`, `--method gather` print time per shot, per iteration and per hemicube).
#include <filesystem>
#include <ostream>
#include <string>

namespace ibrr::lightmap {

struct LightmapBenchOptions {
  bool atlas = true;                    // the atlas section
  bool matrix = true;                   // the matrix section
  std::string matrixScene = "cornell";  // a built-in name, manifest or mesh
  int matrixAtlas = 0;                  // atlas side of the matrix section; 0 = the solver's default
  int bounces = 0;                      // k; 0 = the solver's default
  int hemicube = 0;                     // H of the form-factor hemicubes; 0 = the solver's default
  // A folder for the pictures and files: the Cornell atlas's charts in false colour (cornell_atlas.png), the
  // matrix file, and the dense, compressed and moved-light lightmaps (for `ibrr render --lightmap`); empty:
  // none. It must exist (the caller checks, before any benchmark runs).
  std::filesystem::path output;
  bool quick = false;  // small atlases, Cornell box only (a smoke run; figures not for the docs)
};

// Prints the figures (creates its own headless GL context); throws ibrr::Error for a scene that cannot be
// loaded (Sibenik and the conference room are skipped with a note when the shared scenes are missing).
void runLightmapBenchmark(const LightmapBenchOptions& options, std::ostream& out);

}  // namespace ibrr::lightmap
