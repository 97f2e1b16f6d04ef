// Committed stores pin what the builder makes of fixed samples: the geometry seeds, the matching rule
// (ibrr/ldc_builder.hpp), the layers hemicubes open, the splats and the sums. The samples come from the analytic
// CPU hemicube renderer (ibrr/synthetic.hpp), not from a GL, so the same numbers go in on any processor and the
// same store must come out: the same layers and counts, radiosity within 1e-5 per layer (the builder's sums are
// formed in a fixed order; the Gaussian kernel's expf may differ by an ulp between processors). A GL-rendered bake
// cannot be pinned this way: llvmpipe compiles its interpolation for the host processor, so the sample positions
// differ in their last bits from one processor to another (and the GPU warp is held to the CPU warp on the same
// machine instead, tests/test_ibrr.cpp).
//
// With IBRR_WRITE_REFERENCE_STORES=1 the test writes the files instead of comparing (a change of the store's
// meaning regenerates them; say why in the commit).
#include "store_agreement.hpp"
#include "store_test_scenes.hpp"

#include "ibrr/store_file.hpp"
#include "ibrr/surface_seeds.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

using namespace ibrr;
using ibrr::test::addQuadTriangles;
using ibrr::test::AnalyticScene;
using ibrr::test::PointLight;

namespace {

// A 4 × 3 × 5 m room at R = 32 (a pixel ≈ 0.17 m) holding what the matching rule decides: a box on the floor
// (edges where surfaces meet, contact shadows), a shelf and a tilted board crossing it (along the crossing the
// seeds of one fold into the other's layer and samples of both match it), and a panel the seeds lack, whose
// samples open layers of their own.
struct PinnedScene {
  AnalyticScene scene;
  std::vector<SeedTriangle> seeded;  // every quad but the panel
  std::vector<PointLight> lights;
};

PinnedScene pinnedScene() {
  PinnedScene pinned;
  AnalyticScene& scene = pinned.scene;
  scene.addRoom({0, 0, 0}, {4, 3, 5});
  scene.addBox({1.0f, 0.0f, 1.5f}, {2.0f, 0.8f, 2.5f});
  scene.addQuad({{2.6f, 1.2f, 0.5f}, {0.0f, 0.0f, 1.0f}, {1.0f, 0.0f, 0.0f}});  // a shelf facing +y
  scene.addQuad({{2.3f, 1.0f, 0.8f}, {0.0f, 0.0f, 1.0f}, {1.0f, 0.5f, 0.0f}});  // a board crossing it, 27° tilted
  for (const synthetic::Quad& q : scene.quads()) addQuadTriangles(q, pinned.seeded);
  scene.addQuad({{3.2f, 0.3f, 3.0f}, {0.0f, 1.5f, 0.0f}, {0.0f, 0.0f, 1.2f}});  // the panel, facing +x
  pinned.lights = test::boxRoomLights();
  pinned.lights.push_back(PointLight{{2.9f, 2.2f, 1.2f}, glm::normalize(glm::vec3(-0.3f, -1.0f, 0.2f)), {6, 5, 4}});
  pinned.lights.push_back(PointLight{{1.5f, 0.81f, 2.0f}, {0, 1, 0}, {3, 3, 3}});  // on the box: contact edges
  pinned.lights.push_back(PointLight{{3.9f, 1.5f, 3.5f}, {-1, 0, 0}, {5, 5, 5}});  // facing the panel
  return pinned;
}

// A builder of the pinned scene at R = 32 with its geometry seeds and no hemicube yet.
LdcBuilder seededBuilder(const PinnedScene& pinned, SplatKernel kernel) {
  LdcParams params;
  params.bounds = pinned.scene.bounds();
  params.resolution = 32;
  LdcBuilder builder(params, kernel);
  HemicubeSamples seeds;
  appendSurfaceSeeds(builder.frame(), pinned.seeded, seeds);
  builder.seedLayers(seeds.view());
  return builder;
}

LayeredDepthCube buildPinned(const PinnedScene& pinned, SplatKernel kernel) {
  LdcBuilder builder = seededBuilder(pinned, kernel);
  const auto samples = test::renderAll(pinned.scene, pinned.lights, 48);
  builder.insert(test::views(samples));
  return builder.finalize();
}

}  // namespace

TEST_CASE("the builder gives the committed reference stores on any processor, radiosity within 1e-5", "[builder]") {
  const PinnedScene pinned = pinnedScene();
  const std::filesystem::path data = std::filesystem::path(IBRR_SOURCE_DIR) / "tests" / "data";
  for (const auto& [kernel, name] : {std::pair{SplatKernel::Box, "analytic_box_r32.ibrr"},
                                     std::pair{SplatKernel::Gaussian, "analytic_gaussian_r32.ibrr"}}) {
    INFO(name);
    const LayeredDepthCube store = buildPinned(pinned, kernel);
    if (std::getenv("IBRR_WRITE_REFERENCE_STORES")) {
      saveStore(store, data / name);
      WARN("wrote " << (data / name).string());
      continue;
    }
    const LayeredDepthCube expected = loadStore(data / name);
    REQUIRE(store.layers().size() == expected.layers().size());
    CHECK(store.vplCount() == expected.vplCount());
    const test::StoreAgreement agreement = test::compareStores(store, expected, 1e-5);
    INFO(agreement.beyond << " of " << agreement.layers << " layers beyond 1e-5, worst " << agreement.worst << "; "
                          << agreement.otherLayers << " layers in pixels of another structure");
    CHECK(agreement.beyond == 0);
    CHECK(agreement.otherLayers == 0);
  }
}

TEST_CASE("the pinned scene holds layers the hemicubes opened, and light on most layers", "[builder]") {
  // Without these the committed stores would pin less than their comment says.
  const PinnedScene pinned = pinnedScene();
  const LayeredDepthCube store = buildPinned(pinned, SplatKernel::Box);
  std::size_t litLayers = 0;
  for (const PackedLayer& layer : store.layers()) litLayers += layer.count > 0 ? 1 : 0;
  const LdcBuilder seedsOnly = seededBuilder(pinned, SplatKernel::Box);
  INFO(store.layers().size() << " layers, " << seedsOnly.stats().layers << " seeded, " << litLayers << " lit");
  CHECK(store.layers().size() > seedsOnly.stats().layers);  // the panel opened layers
  CHECK(litLayers > store.layers().size() / 2);
}
