#pragma once
// Benchmark of the LDC radiosity store: insertion rate with one thread and with all threads, retrieval rate,
// memory per layer and depth complexity, for a synthetic box room at several LDC resolutions.

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <vector>

namespace ibrr::bench {

struct StoreBenchOptions {
  std::vector<int> resolutions{128, 256, 512};    // LDC resolutions R to measure, each in [4, 8192]
  int threads = 0;                                // threads for the "all threads" runs; 0 = all the machine has
  double secondsPerMeasure = 1.0;                 // minimum wall time of each timed measurement, seconds, (0, 60]
  int hemicubeResolution = 0;                     // hemicube face size H; 0 = same as R (as in the paper's table 1)
  std::optional<std::filesystem::path> jsonPath;  // also write the figures as JSON here
};

// Prints a table to `out`; returns 0 on success (a process exit code). Throws ibrr::Error on bad options.
int runStoreBenchmark(const StoreBenchOptions& options, std::ostream& out);

}  // namespace ibrr::bench
