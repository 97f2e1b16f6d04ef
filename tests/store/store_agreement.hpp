#pragma once
// The agreement of two stores of one layout, for tests that hold a store to another (the GPU warp to the CPU
// warp, a build to a committed store).

#include "ibrr/ldc.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace ibrr::test {

// Agreement of two stores of the same layout. A pixel whose layer planes are the same in both is compared
// layer by layer: the hemicube count, and the relative difference of the radiosity against the layer's largest
// channel (floored at 1e-6 of the store's brightest value, below which a layer is dark and any difference is
// noise). Pixels whose planes differ are counted apart, with their layers.
struct StoreAgreement {
  std::size_t layers = 0;       // in the expected store
  std::size_t beyond = 0;       // layers of matching pixels with another count or beyond the tolerance
  std::size_t otherLayers = 0;  // expected layers in pixels whose planes differ
  double worst = 0.0;
};

inline StoreAgreement compareStores(const LayeredDepthCube& actual, const LayeredDepthCube& expected,
                                    double tolerance) {
  StoreAgreement agreement;
  REQUIRE(actual.offsets().size() == expected.offsets().size());
  float brightest = 0.0f;
  for (const PackedLayer& y : expected.layers()) brightest = std::max({brightest, y.r, y.g, y.b});
  for (std::uint32_t g = 0; g + 1 < expected.offsets().size(); ++g) {
    const auto a = actual.pixelLayers(g), e = expected.pixelLayers(g);
    const bool sameStructure = a.size() == e.size() && std::equal(a.begin(), a.end(), e.begin(), [](auto& x, auto& y) {
                                 return x.normal == y.normal && x.d == y.d;
                               });
    if (!sameStructure) {
      agreement.otherLayers += e.size();
      continue;
    }
    for (std::size_t k = 0; k < e.size(); ++k) {
      const PackedLayer &x = a[k], &y = e[k];
      const double scale = std::max({1e-6 * double(brightest), double(y.r), double(y.g), double(y.b)});
      const double difference =
          std::max({std::fabs(double(x.r) - y.r), std::fabs(double(x.g) - y.g), std::fabs(double(x.b) - y.b)}) / scale;
      agreement.worst = std::max(agreement.worst, difference);
      if (difference > tolerance || x.count != y.count) ++agreement.beyond;
    }
  }
  agreement.layers = expected.layers().size();
  return agreement;
}

}  // namespace ibrr::test
