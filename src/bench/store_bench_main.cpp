// ibrr_store_bench: a tiny standalone driver for runStoreBenchmark, for profiling the store without the app.
//   ibrr_store_bench [seconds per measure] [hemicube resolution H, 0 = R] [threads, 0 = all] [R ...]

#include "bench/store_bench.hpp"

#include <cstdlib>
#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  ibrr::bench::StoreBenchOptions options;
  if (argc > 1) options.secondsPerMeasure = std::atof(argv[1]);
  if (argc > 2) options.hemicubeResolution = std::atoi(argv[2]);
  if (argc > 3) options.threads = std::atoi(argv[3]);
  if (argc > 4) {
    options.resolutions.clear();
    for (int k = 4; k < argc; ++k) options.resolutions.push_back(std::atoi(argv[k]));
  }
  try {
    return ibrr::bench::runStoreBenchmark(options, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "ibrr_store_bench: " << e.what() << "\n";
    return 1;
  }
}
