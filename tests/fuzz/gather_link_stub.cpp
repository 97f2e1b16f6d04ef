// matrix_file.cpp's checkMatrixAtlas calls validTexels() from gather.cpp, which is GL-bound solver
// code the fuzz build leaves out. loadMatrix never calls checkMatrixAtlas, so this stand-in only
// satisfies the linker; reaching it is a bug of the fuzz build.
#include "lightmap/gather.hpp"

#include <cstdio>
#include <cstdlib>

namespace ibrr::lightmap {

std::vector<std::uint32_t> validTexels(const PatchList&) {
  std::fprintf(stderr, "ibrr fuzz: validTexels (gather.cpp) is not part of the fuzz build\n");
  std::abort();
}

}  // namespace ibrr::lightmap
