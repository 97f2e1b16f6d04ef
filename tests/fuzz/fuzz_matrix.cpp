// The form-factor matrix file (lightmap/matrix.hpp, loadMatrix) loads for the fixture scene or is
// refused with ibrr::Error.
//
// The trailing FNV-1a checksum is recomputed over the mutated bytes first, so mutations reach the
// checks behind it; the seeds (make_seeds.cpp) carry the fixture scene's fingerprint.
#include "fuzz_support.hpp"

#include "ibrr/checksum.hpp"
#include "lightmap/matrix.hpp"
#include "util/error.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace ibrr;

namespace {

// The sizes a loaded matrix promises the relighter: n patches, each array n long, the dense matrix
// n × n per channel, the compressed one's orders and exact entries within n.
bool consistent(const lightmap::MatrixSolution& s) {
  const std::size_t n = s.texels.size();
  if (n == 0 || s.position.size() != n || s.normal.size() != n || s.albedo.size() != n || s.emission.size() != n)
    return false;
  for (const std::vector<float>& channel : s.dense)
    if (!channel.empty() && channel.size() != n * n) return false;
  if (const auto& c = s.compressed) {
    if (c->rowOrder.size() != n || c->columnOrder.size() != n || c->exactStart.size() != n + 1 ||
        c->exactColumn.size() != c->exactStart.back() || c->exactValue.size() != c->exactStart.back())
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::initialize();
  (void)fuzz::fixtureScene();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes(fuzz::asText(data, size));
  if (bytes.size() >= 8) {
    const std::uint64_t sum = fnv1a64(std::as_bytes(std::span(bytes.data(), bytes.size() - 8)));
    std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
  }
  const auto path = fuzz::writeScratchFile("fuzz.ffmatrix", bytes);
  try {
    const lightmap::MatrixSolution loaded = lightmap::loadMatrix(path, fuzz::fixtureScene());
    if (!consistent(loaded)) std::abort();
  } catch (const Error&) {
    // refused with a message: fine
  }
  return 0;
}
