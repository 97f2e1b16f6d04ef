#pragma once
// `ibrr bench rays`: Embree ray throughput and the reference path tracer's time on the built-in
// Cornell box.
#include <cstdint>
#include <ostream>

namespace ibrr::rays {

struct RaysBenchOptions {
  std::uint32_t rayCount = 1u << 22;  // random rays per throughput measurement
  int referenceSize = 256;            // Cornell reference image, square
  std::uint32_t referenceSpp = 1024;
  // Also render 4096 spp (≈ 4× the time) and report relRMSE(1024 vs 4096) against the
  // 1/sqrt(spp) prediction from the variance estimates.
  bool convergence = false;
};

// Prints the figures; returns 0 (a process exit code), or throws ibrr::Error when the built-in
// scene cannot be loaded.
int runRaysBenchmark(std::ostream& out, const RaysBenchOptions& options);
int runRaysBenchmark(std::ostream& out);

}  // namespace ibrr::rays
