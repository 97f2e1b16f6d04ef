// The store file (.ibrr) through deserializeStore (ibrr/store_file.hpp): any bytes load or are
// refused with ibrr::Error. A store that loads must serialize back to the same bytes and answer
// radiosity queries.
//
// The trailing FNV-1a checksum is recomputed over the mutated bytes first (as the store suite's
// mutation test does), or nearly every mutation would stop at the checksum and the structural
// checks behind it would never be reached.
#include "fuzz_support.hpp"

#include "ibrr/checksum.hpp"
#include "ibrr/error.hpp"
#include "ibrr/store_file.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace ibrr;

namespace {

void resealChecksum(std::vector<std::byte>& bytes) {
  if (bytes.size() < 8) return;
  const std::uint64_t sum = fnv1a64(std::span(bytes).first(bytes.size() - 8));
  std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
}

// Queries at the centre and a corner of the bounds, along each axis, with every filter.
void query(const LayeredDepthCube& store) {
  const Aabb& bounds = store.params().bounds;
  for (const glm::vec3& p : {bounds.lo + 0.5f * (bounds.hi - bounds.lo), bounds.lo})
    for (const glm::vec3& n : {glm::vec3(1, 0, 0), glm::vec3(0, -1, 0), glm::vec3(0, 0, 1)})
      for (const RetrievalFilter filter :
           {RetrievalFilter::Nearest, RetrievalFilter::Average, RetrievalFilter::Bilinear})
        (void)store.radiosity(p, n, filter, 1);
  (void)store.stats();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  if (size) std::memcpy(bytes.data(), data, size);
  resealChecksum(bytes);
  try {
    const LayeredDepthCube store = deserializeStore(bytes, "fuzz.ibrr");
    // Round trip: the same bytes (the header's bias-compensation word included).
    if (serializeStore(store) != bytes) std::abort();
    query(store);
  } catch (const Error&) {
    // refused with a message: fine
  }
  return 0;
}
