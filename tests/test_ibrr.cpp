// IBRR end to end on the GPU: bake a store from VPL hemicubes, reconstruct views from it.
#include "bake/bake.hpp"
#include "display/gbuffer.hpp"
#include "display/ibrr_bench.hpp"
#include "display/ibrr_reconstruction.hpp"
#include "gpu/hemicube.hpp"
#include "ibrr/store_file.hpp"
#include "rays/test_scenes.hpp"
#include "scene/load.hpp"
#include "store/store_agreement.hpp"
#include "test_support.hpp"
#include "util/progress.hpp"

#include <catch2/catch.hpp>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <glm/gtc/constants.hpp>

#include <algorithm>
#include <numeric>
#include <string_view>

using namespace ibrr;
using test::compareStores;
using test::StoreAgreement;

namespace {

// Small settings so that a bake takes a second or two on llvmpipe. Without bias compensation: these tests are
// about the warp and the store's structure (test_bias_compensation.cpp tests the compensation).
bake::BakeOptions quickBake(std::uint32_t paths = 64) {
  bake::BakeOptions options = bake::paperConfiguration();
  options.biasCompensation = false;
  options.paths = paths;
  options.ldcResolution = 128;
  options.hemicubeResolution = 64;
  options.indirectHemicubeResolution = 32;
  return options;
}

display::GBuffer renderGBuffer(const scene::Scene& scene, const scene::Camera& camera, int size) {
  const gpu::SceneRenderer renderer(scene);
  display::GBuffer gbuffer(size, size);
  gbuffer.render(renderer, scene, camera);
  return gbuffer;
}

// A square floor of half-size L at y = 0 facing up, one default material.
scene::Scene floorScene(float halfSize) {
  scene::Scene scene;
  scene::TriangleMesh floor;
  floor.positions = {
      {-halfSize, 0, -halfSize}, {halfSize, 0, -halfSize}, {halfSize, 0, halfSize}, {-halfSize, 0, halfSize}};
  floor.normals.assign(4, glm::vec3(0, 1, 0));
  floor.triangles = {{0, 2, 1}, {0, 3, 2}};
  floor.triangleMaterials = {0, 0};
  scene.meshes.push_back(floor);
  scene.instances.push_back({0, glm::mat4(1.0f)});
  scene.materials.push_back(scene::Material{});
  scene.finalize();
  return scene;
}

}  // namespace

TEST_CASE("hemicube faces cover the hemisphere: their pixels' solid angles sum to 2π (4π for a cube)", "[bake]") {
  // The pixel solid angle is a midpoint rule: its error falls as 1/H² (0.4% at H = 8).
  for (auto [resolution, tolerance] : {std::pair{8, 5e-3}, std::pair{64, 1e-4}}) {
    for (bool fullCube : {false, true}) {
      double total = 0.0;
      for (const gpu::HemicubeFace& face : gpu::hemicubeFaces(glm::vec3(0.3f, 0.9f, -0.2f), resolution, fullCube))
        for (int row = 0; row < face.rows; ++row)
          for (int x = 0; x < resolution; ++x) total += gpu::atlasPixelSolidAngle(face, resolution, x, row);
      CHECK(total == Approx((fullCube ? 4.0 : 2.0) * glm::pi<double>()).epsilon(tolerance));
    }
  }
}

TEST_CASE("a hemicube over a plane returns the analytic geometry term", "[bake][gpu]") {
  test::glContext();
  // A square floor of half-size L at y = 0 and a Lambertian VPL at height d = 1 looking down. The
  // floor's edges appear in the side faces at b = d/L = 3/16, a row boundary at H = 64, so the
  // rasterised coverage has no partial rows.
  const float halfSize = 16.0f / 3.0f;
  const scene::Scene scene = floorScene(halfSize);
  const gpu::SceneRenderer renderer(scene);
  gpu::HemicubeRenderer hemicubes(renderer, scene, 64);
  gpu::HemicubeSource source;
  source.position = {0.0f, 1.0f, 0.0f};
  source.axis = {0.0f, -1.0f, 0.0f};
  gpu::HemicubeCapture capture;
  hemicubes.render(source, 64, capture);
  int frontCovered = 0;
  double coveredSolidAngle = 0.0;
  for (const gpu::HemicubeFace& face : capture.faces)
    for (int row = 0; row < face.rows; ++row)
      for (int x = 0; x < 64; ++x) {
        if (capture.positions[std::size_t(face.firstRow + row) * 64 + x].w < 0.5f) continue;
        coveredSolidAngle += gpu::atlasPixelSolidAngle(face, 64, x, row);
        frontCovered += face.firstRow == 0 ? 1 : 0;
      }
  // The front face sees only floor; in all, the a × a square (a = 2L) seen from height d subtends
  // Ω = 4·asin(a² / (a² + 4d²)); the edges in the corners of the side faces are rasterised.
  const double side2 = 4.0 * double(halfSize) * halfSize;
  CHECK(frontCovered == 64 * 64);
  CHECK(coveredSolidAngle == Approx(4.0 * std::asin(side2 / (side2 + 4.0))).epsilon(2e-3));
  for (std::size_t i = 0; i < capture.positions.size(); ++i) {
    if (capture.positions[i].w < 0.5f) continue;
    const glm::vec3 p(capture.positions[i]);
    CHECK(p.y == Approx(0.0f).margin(1e-4));
    CHECK(capture.normalsGeometry[i].y == Approx(1.0f));
    // g = cosθx·cosθi/(π r²) with cosθx = cosθi = h/r, h = 1 (+ the tiny surface offset of the centre).
    const glm::vec3 d = p - capture.centre;
    const float r2 = glm::dot(d, d);
    const float cosine = capture.centre.y / std::sqrt(r2);
    CHECK(capture.normalsGeometry[i].w == Approx(cosine * cosine / (glm::pi<float>() * r2)).epsilon(1e-4));
  }

  // An isotropic point light gets a full cube and g = cosθx/(4π r²).
  source.profile = gpu::EmissionProfile::IsotropicPoint;
  hemicubes.render(source, 64, capture);
  REQUIRE(capture.faces.size() == 6);
  double pointSolidAngle = 0.0;
  for (const gpu::HemicubeFace& face : capture.faces)
    for (int row = 0; row < face.rows; ++row)
      for (int x = 0; x < 64; ++x) {
        const std::size_t i = std::size_t(face.firstRow + row) * 64 + x;
        if (capture.positions[i].w < 0.5f) continue;
        pointSolidAngle += gpu::atlasPixelSolidAngle(face, 64, x, row);
        const glm::vec3 d = glm::vec3(capture.positions[i]) - source.position;
        const float r2 = glm::dot(d, d);
        CHECK(capture.normalsGeometry[i].w ==
              Approx(1.0f / std::sqrt(r2) / (4.0f * glm::pi<float>() * r2)).epsilon(1e-4));
      }
  CHECK(pointSolidAngle == Approx(4.0 * std::asin(side2 / (side2 + 4.0))).epsilon(2e-3));
}

TEST_CASE("the benchmark's hemicubes alone stop at Ctrl-C, for either warp", "[bake][gpu]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  bake::BakeOptions options;
  options.paths = 8;
  options.indirectHemicubeResolution = 8;
  const rays::VplSet vpls = bake::generateBakeVpls(scene, options);
  REQUIRE(vpls.vpls.size() > vpls.countPerBounce.at(0));  // some VPLs after a bounce: hemicubes to render
  CHECK(display::hemicubeRenderOnlySeconds(scene, vpls, options, bake::WarpDevice::Cpu) > 0.0);
  struct ClearInterrupt {
    ~ClearInterrupt() { setInterruptRequested(false); }
  } clearAtEnd;
  setInterruptRequested(true);
  CHECK_THROWS_AS(display::hemicubeRenderOnlySeconds(scene, vpls, options, bake::WarpDevice::Cpu), Interrupted);
  CHECK_THROWS_AS(display::hemicubeRenderOnlySeconds(scene, vpls, options, bake::WarpDevice::Gpu), Interrupted);
}

TEST_CASE("a hemicube reads no texel an earlier draw left as covered, also when the coverage marks start over",
          "[bake][gpu]") {
  test::glContext();
  // A floor, a VPL above it looking down (its front face all floor) and one looking up (nothing above its tangent
  // plane: every texel uncovered). The colour targets are not cleared between draws (gpu/hemicube.hpp).
  const scene::Scene scene = floorScene(8.0f);
  const gpu::SceneRenderer renderer(scene);
  gpu::HemicubeSource down, up;
  down.position = up.position = {0.0f, 1.0f, 0.0f};
  down.axis = {0.0f, -1.0f, 0.0f};
  up.axis = {0.0f, 1.0f, 0.0f};
  auto covered = [](const gpu::HemicubeCapture& capture) {
    return std::count_if(capture.positions.begin(), capture.positions.end(),
                         [](const glm::vec4& p) { return p.w != 0.0f; });
  };
  auto zeroWhereUncovered = [](const gpu::HemicubeCapture& capture) {
    for (std::size_t i = 0; i < capture.positions.size(); ++i)
      if (capture.positions[i].w == 0.0f && (capture.positions[i] != glm::vec4(0.0f) ||
                                             capture.normalsGeometry[i] != glm::vec4(0.0f)))
        return false;
    return true;
  };
  for (const bool startOver : {false, true}) {
    INFO((startOver ? "the second draw's mark starts over at the first's" : "consecutive marks"));
    gpu::HemicubeRenderer hemicubes(renderer, scene, 64);
    gpu::HemicubeCapture first, second;
    hemicubes.render(down, 64, first);
    CHECK(first.coverage == 1.0f);
    CHECK(covered(first) >= 64 * 64);  // the whole front face, and floor in the side faces
    if (startOver) hemicubes.setLastCoverageMark(gpu::HemicubeRenderer::kCoverageMarks);
    hemicubes.render(up, 64, second);
    CHECK(second.coverage == (startOver ? 1.0f : 2.0f));
    CHECK(covered(second) == 0);
    CHECK(zeroWhereUncovered(second));
    // And the floor again after the empty draw: what it covers is read as before.
    gpu::HemicubeCapture third;
    hemicubes.render(down, 64, third);
    CHECK(third.positions == first.positions);
    CHECK(third.normalsGeometry == first.normalsGeometry);
  }
}

TEST_CASE("a batch of hemicubes drawn in one pass gives each hemicube the texels it gets drawn alone", "[bake][gpu]") {
  test::glContext();
  // VPLs in the Cornell box (millimetres): on the floor, a point in the middle, a spot under the ceiling, on the
  // walls. Every face of the batch goes out in one multi-draw, routed to its slot (gl_Layer) and its rows (a viewport
  // per face layout), each face culled against its own frustum (gpu/hemicube.hpp). Drawn alone, into slot 0 of a
  // one-slot atlas, each hemicube must read back the same texels, bit for bit, and submit the same triangles.
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const gpu::SceneRenderer renderer(scene);
  auto surface = [](glm::vec3 position, glm::vec3 axis) {
    gpu::HemicubeSource source;
    source.position = position;
    source.axis = axis;
    return source;
  };
  gpu::HemicubeSource point = surface({278.0f, 300.0f, 280.0f}, {0.0f, 1.0f, 0.0f});
  point.profile = gpu::EmissionProfile::IsotropicPoint;
  gpu::HemicubeSource spot = surface({250.0f, 540.0f, 300.0f}, glm::normalize(glm::vec3(0.2f, -1.0f, 0.1f)));
  spot.profile = gpu::EmissionProfile::Spot;
  spot.spotCosInner = 0.9f;
  spot.spotCosOuter = 0.6f;
  // Three face layouts: hemicubes at H = 32, a full cube at 16, and (last) a hemicube at 16.
  const std::vector<std::pair<gpu::HemicubeSource, int>> hemicubes = {
      {surface({278.0f, 0.0f, 280.0f}, {0.0f, 1.0f, 0.0f}), 32},
      {point, 16},
      {spot, 32},
      {surface({0.0f, 270.0f, 300.0f}, {1.0f, 0.0f, 0.0f}), 32},
      {surface({278.0f, 270.0f, 559.0f}, {0.0f, 0.0f, -1.0f}), 16}};
  gpu::HemicubeRenderer batch(renderer, scene, 32, int(hemicubes.size()));
  std::vector<gpu::HemicubeCapture> batched(hemicubes.size());
  for (std::size_t k = 0; k < hemicubes.size(); ++k)
    batch.draw(hemicubes[k].first, hemicubes[k].second, batched[k], int(k));
  for (gpu::HemicubeCapture& capture : batched) batch.readBack(capture);
  // The first four hemicubes hold two layouts; the fifth's is a third, which takes a pass of its own when GL's
  // viewports hold two layouts (16 viewports, six faces a layout).
  CHECK(batch.passes() == (batch.maxBatchLayouts() >= 3 ? 1u : 2u));
  gpu::HemicubeRenderer alone(renderer, scene, 32);
  for (std::size_t k = 0; k < hemicubes.size(); ++k) {
    INFO("hemicube " << k << " at H = " << hemicubes[k].second);
    gpu::HemicubeCapture capture;
    alone.render(hemicubes[k].first, hemicubes[k].second, capture);
    CHECK(batched[k].atlasLayer == int(k));
    CHECK(std::count_if(capture.positions.begin(), capture.positions.end(),
                        [](const glm::vec4& p) { return p.w == 1.0f; }) > 0);
    REQUIRE(batched[k].positions.size() == capture.positions.size());
    std::size_t differing = 0;
    for (std::size_t i = 0; i < capture.positions.size(); ++i)
      differing += batched[k].positions[i] != capture.positions[i] ||
                   batched[k].normalsGeometry[i] != capture.normalsGeometry[i];
    CHECK(differing == 0);
  }
  CHECK(alone.passes() == hemicubes.size());
  CHECK(batch.trianglesSubmitted() == alone.trianglesSubmitted());
}

TEST_CASE("no dark line where two surfaces meet: a VPL's light reaches every LDI pixel along the edge", "[ibrr][gpu]") {
  test::glContext();
  // A floor (y = 0) meeting a back wall (z = 1) under a point light. Coarse hemicubes (H = 16: a hemicube
  // pixel covers about 4 LDI pixels here) make the gap visible: the hemicube pixel that straddles the edge shows
  // one of the two surfaces, and without the splats' reach towards the edge (ibrr/hemicube_samples.hpp,
  // edgeReachTowards) the LDI pixels along the edge on the other surface miss the light (measured with the
  // reach off: 25 of the 57 floor pixels along the wall held nothing; the wall's row, seen more squarely,
  // none). With the reach (the box extended to take in the point towards the edge, kEdgeSweep = 0) 9 of them
  // stay empty, with either warp (the same pixels): between the far corners of neighbouring samples' boxes where
  // the reach runs diagonally to the box's axes. Sweeping the box further (kEdgeSweep 0.5 or 1) fills them but
  // spills light sideways into contact shadows (the Sibenik nave's blue 4% and 6% too bright; ibrr/splat.hpp).
  // The rest must hold within 25% of the analytic I·cosθ/r².
  scene::Scene scene;
  rays::test::addQuad(scene, {-1, 0, -1}, {-1, 0, 1}, {1, 0, 1}, {1, 0, -1}, glm::vec3(0.5f));  // floor, up
  rays::test::addQuad(scene, {-1, 0, 1}, {-1, 2, 1}, {1, 2, 1}, {1, 0, 1}, glm::vec3(0.5f));    // wall, towards −z
  scene::PointLight light;
  light.position = {0.3f, 1.0f, 0.2f};
  light.intensity = glm::vec3(1.0f);
  scene.pointLights.push_back(light);
  scene.finalize();
  for (bake::WarpDevice warp : {bake::WarpDevice::Cpu, bake::WarpDevice::Gpu}) {
    bake::BakeOptions options = bake::paperConfiguration();
    options.paths = 1;
    options.maxBounces = 0;  // the light's own VPL only
    options.geometryClamp = 0.0f;
    options.biasCompensation = false;
    options.ldcResolution = 64;
    options.hemicubeResolution = 16;
    options.warp = warp;
    const LayeredDepthCube store = bake::bakeStore(scene, options).store;
    const float pixel = store.frame().pixelSize();
    auto expected = [&](const glm::vec3& p, const glm::vec3& n) {
      const glm::vec3 toLight = light.position - p;
      const float r2 = glm::dot(toLight, toLight);
      return light.intensity.r * glm::dot(n, toLight) / (r2 * std::sqrt(r2));
    };
    int dark = 0, checked = 0;
    for (float x = -0.9f; x <= 0.9f; x += pixel) {
      // The floor's last pixel row before the wall, and the wall's first row above the floor (pixel centres).
      const float edge = 1.0f - 0.5f * pixel;
      for (const auto& [p, n] : {std::pair{glm::vec3(x, 0.0f, std::min(edge, 1.0f)), glm::vec3(0, 1, 0)},
                                 std::pair{glm::vec3(x, 0.5f * pixel, 1.0f), glm::vec3(0, 0, -1)}}) {
        const float stored = store.radiosity(p, n, RetrievalFilter::Nearest).value_or(glm::vec3(0.0f)).r;
        ++checked;
        if (!(stored > 0.75f * expected(p, n))) {
          ++dark;
          UNSCOPED_INFO(bake::warpDeviceName(warp) << " warp: dark at " << p.x << "," << p.y << "," << p.z << ": "
                                                   << stored << " of " << expected(p, n));
        }
      }
    }
    CHECK(dark <= 10);
    CHECK(checked > 100);
  }
}

TEST_CASE("furnace: IBRR reconstructs E/(1−a) = 2 everywhere", "[ibrr][gpu]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "furnace.json");
  // The VPL estimate has a heavy tail (g ~ 1/r² next to a VPL, unclamped here): a finite VPL set
  // under-estimates the mean where the camera looks, by 2.2% at 256 paths and 1.5% at 1,024 (Keller
  // on the same VPLs measures the same), so this needs ~1,000 paths to meet the 2% of the issue.
  bake::BakeOptions options = quickBake(1024);
  options.indirectHemicubeResolution = 64;
  options.maxBounces = 40;       // a^40 ≈ 1e-12: no light lost
  options.geometryClamp = 0.0f;  // unbiased: the clamp would darken the corners
  const bake::BakeResult baked = bake::bakeStore(scene, options);
  const display::GBuffer gbuffer = renderGBuffer(scene, scene.camera(""), 64);
  display::GpuReconstructor reconstructor(baked.store);
  const display::Reconstruction result = reconstructor.reconstruct(gbuffer, {});
  REQUIRE(result.coveredPixels == 64 * 64);
  CHECK(result.holePixels == 0);
  const glm::vec3 sum = std::accumulate(result.radiance.pixels.begin(), result.radiance.pixels.end(), glm::vec3(0.0f));
  const glm::vec3 mean = sum / float(result.radiance.pixels.size());
  INFO("mean radiance " << mean.x << " " << mean.y << " " << mean.z);
  for (int c = 0; c < 3; ++c) CHECK(mean[c] == Approx(2.0f).epsilon(0.02));
}

TEST_CASE("GPU and CPU reconstruction agree within 1e-3 relative on every covered pixel", "[ibrr][gpu]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const bake::BakeResult baked = bake::bakeStore(scene, quickBake());
  const display::GBuffer gbuffer = renderGBuffer(scene, scene.camera(""), 96);
  display::GpuReconstructor reconstructor(baked.store);
  for (RetrievalFilter filter : {RetrievalFilter::Nearest, RetrievalFilter::Average, RetrievalFilter::Bilinear}) {
    const display::ReconstructionOptions options{filter, 1};
    const display::Reconstruction gpu = reconstructor.reconstruct(gbuffer, options);
    const display::Reconstruction cpu = display::reconstructOnCpu(gbuffer, baked.store, options);
    REQUIRE(gpu.coveredPixels == cpu.coveredPixels);
    CHECK(gpu.holes == cpu.holes);
    std::size_t disagreeing = 0;
    for (std::size_t i = 0; i < gpu.radiance.pixels.size(); ++i) {
      const glm::vec3 a = gpu.radiance.pixels[i], b = cpu.radiance.pixels[i];
      const glm::vec3 bound = 1e-3f * glm::max(glm::abs(b), glm::vec3(1e-3f));
      if (glm::any(glm::greaterThan(glm::abs(a - b), bound))) ++disagreeing;
    }
    INFO("filter " << int(filter));
    CHECK(disagreeing == 0);
  }
}

TEST_CASE("the baked store is identical with one thread and with all, converted on the GL thread or in the warp task, "
          "and reloads to the same picture",
          "[ibrr][gpu]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  bake::BakeOptions options = quickBake(48);
  options.biasCompensation = true;  // the compensation pass is deterministic too
  std::vector<std::byte> oneThread, allThreads;
  {
    tbb::global_control single(tbb::global_control::max_allowed_parallelism, 1);
    oneThread = serializeStore(bake::bakeStore(scene, options).store);
  }
  const bake::BakeResult baked = bake::bakeStore(scene, options);
  allThreads = serializeStore(baked.store);
  CHECK(oneThread == allThreads);
  // The CPU warp converts hemicubes to samples on the GL thread in an arena of two threads or fewer, in its
  // insertion task in a larger one (bake.cpp, CpuWarp); both give the same samples and so the same store.
  for (const int threads : {2, 4}) {
    std::vector<std::byte> inArena;
    tbb::task_arena(threads).execute([&] { inArena = serializeStore(bake::bakeStore(scene, options).store); });
    INFO("an arena of " << threads << " threads");
    CHECK(inArena == allThreads);
  }

  const std::filesystem::path file = test::outputDir("ibrr_reload") / "cornell.ibrr";
  saveStore(baked.store, file);
  const LayeredDepthCube reloaded = loadStore(file, scene.fingerprint());
  const display::GBuffer gbuffer = renderGBuffer(scene, scene.camera(""), 64);
  display::GpuReconstructor original(baked.store), fromFile(reloaded);
  CHECK(original.reconstruct(gbuffer, {}).radiance.pixels == fromFile.reconstruct(gbuffer, {}).radiance.pixels);
  // A store is refused for another scene.
  const scene::Scene furnace = scene::loadScene(test::sceneDir() / "furnace.json");
  CHECK_THROWS_WITH(loadStore(file, furnace.fingerprint()), Catch::Contains("cornell.ibrr"));
}

TEST_CASE("the store level's direct light traced beside the hemicubes gives the store of the passes one after the "
          "other, with one thread and with all",
          "[ibrr][gpu]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  bake::BakeOptions options;  // the defaults: the direct light by rays, the bounces on a level of their own
  options.paths = 48;
  options.ldcResolution = 128;
  options.indirectHemicubeResolution = 32;
  const bake::BakeResult beside = bake::bakeStore(scene, options);
  CHECK(beside.stats.directBeside);
  CHECK(beside.stats.directRays > 0);
  // The same passes one after the other: the light paths alone, then the direct light on their store, then the
  // compensation.
  const bake::LightPathBake paths = bake::bakeLightPaths(scene, options);
  CHECK_FALSE(paths.storeDirect);
  CHECK_FALSE(paths.stats.directBeside);
  const bake::LightPathStores stores = bake::lightPathStores(paths.sums, paths.indirect ? &*paths.indirect : nullptr);
  bake::BakeStats stats;
  LayeredDepthCube inTurn = bake::addDirectLight(scene, stores.store, options, {}, stats);
  REQUIRE(bake::compensatesClamp(scene, options));
  inTurn = bake::compensateBias(scene, inTurn, stores.bounces(), options, {}, stats);
  CHECK(stats.directRays == beside.stats.directRays);
  CHECK(serializeStore(beside.store) == serializeStore(inTurn));
  // With one thread the seeding and the direct pass wait for the bake thread, which works them off at the end.
  tbb::global_control single(tbb::global_control::max_allowed_parallelism, 1);
  const bake::BakeResult oneThread = bake::bakeStore(scene, options);
  CHECK(oneThread.stats.directBeside);
  CHECK(serializeStore(oneThread.store) == serializeStore(beside.store));
}

TEST_CASE("Cornell box at the default settings: holes stay under 0.1% of covered pixels", "[ibrr][gpu]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  bake::BakeOptions options = bake::paperConfiguration();  // default R, H, h and splat
  options.paths = 32;  // coverage needs few paths: the direct hemicubes see everything lit
  const bake::BakeResult baked = bake::bakeStore(scene, options);
  const display::GBuffer gbuffer = renderGBuffer(scene, scene.camera(""), 256);
  display::GpuReconstructor reconstructor(baked.store);
  const display::Reconstruction result = reconstructor.reconstruct(gbuffer, {});
  INFO(result.holePixels << " holes of " << result.coveredPixels << " covered pixels");
  CHECK(double(result.holePixels) <= 1e-3 * double(result.coveredPixels));
}

TEST_CASE("the store's layers follow the geometry, not the VPLs: 4 and 256 light paths give nearly the same layers",
          "[ibrr][gpu]") {
  // Geometry seeds (ibrr/surface_seeds.hpp) create every surface's layers before the VPLs, so the display's
  // work per pixel, which walks a pixel's layers, is the same for few and many VPLs (the paper's view
  // independence). Without seeds the 256-path store has layers the 4-path one lacks (surfaces few VPLs saw).
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  bake::BakeOptions few = quickBake(4), many = quickBake(256);
  const bake::BakeResult fewBaked = bake::bakeStore(scene, few);
  const bake::BakeResult manyBaked = bake::bakeStore(scene, many);
  const double fewLayers = double(fewBaked.store.layers().size());
  const double manyLayers = double(manyBaked.store.layers().size());
  INFO(fewLayers << " layers from " << fewBaked.stats.hemicubes << " VPLs, " << manyLayers << " from "
                 << manyBaked.stats.hemicubes);
  CHECK(fewBaked.stats.seedSamples > 0);
  CHECK(manyLayers <= 1.01 * fewLayers);
  CHECK(fewLayers <= manyLayers);

  few.seedLayersFromGeometry = many.seedLayersFromGeometry = false;
  const double fewUnseeded = double(bake::bakeStore(scene, few).store.layers().size());
  const double manyUnseeded = double(bake::bakeStore(scene, many).store.layers().size());
  INFO("without seeds: " << fewUnseeded << " and " << manyUnseeded << " layers");
  CHECK(manyUnseeded > 1.02 * fewUnseeded);  // the comparison the seeds exist for

  // And the few-VPL store has a layer wherever the camera looks: no holes.
  const display::GBuffer gbuffer = renderGBuffer(scene, scene.camera(""), 128);
  display::GpuReconstructor reconstructor(fewBaked.store);
  const display::Reconstruction result = reconstructor.reconstruct(gbuffer, {});
  CHECK(result.holePixels <= result.coveredPixels / 1000);
}

TEST_CASE("a bake's checkpoint after P of N paths equals a bake of P paths, and a time budget stops at a path",
          "[ibrr][gpu]") {
  test::glContext();
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  auto sameStore = [](const LayeredDepthCube& a, const LayeredDepthCube& b) {
    REQUIRE(a.layers().size() == b.layers().size());
    CHECK(std::equal(a.offsets().begin(), a.offsets().end(), b.offsets().begin()));
    double worst = 0.0;
    for (std::size_t k = 0; k < a.layers().size(); ++k) {
      const PackedLayer &x = a.layers()[k], &y = b.layers()[k];
      const glm::vec3 d(x.r - y.r, x.g - y.g, x.b - y.b);
      const double scale = std::max({1e-12, double(std::fabs(y.r)), double(std::fabs(y.g)), double(std::fabs(y.b))});
      worst = std::max(worst, double(glm::length(d)) / scale);
    }
    CHECK(worst < 1e-5);  // the scale N/P applied to sums of Φ/N, against sums of Φ/P: float rounding only
  };
  bake::BakeCheckpoints checkpoints;
  checkpoints.paths = {2, 8};
  std::vector<std::pair<std::uint32_t, LayeredDepthCube>> partial;
  std::vector<double> times;
  checkpoints.onCheckpoint = [&](const LayeredDepthCube& store, const LayeredDepthCube*, std::uint32_t paths,
                                 double seconds) {
    partial.emplace_back(paths, store);
    times.push_back(seconds);
  };
  const bake::BakeResult full = bake::bakeStore(scene, quickBake(16), {}, &checkpoints);
  REQUIRE(partial.size() == 2);
  CHECK(times[0] <= times[1]);
  CHECK(times[1] <= full.stats.totalSeconds);
  for (const auto& [paths, store] : partial) {
    INFO(paths << " paths");
    sameStore(store, bake::bakeStore(scene, quickBake(paths)).store);
  }

  bake::BakeOptions budgeted = quickBake(16);
  budgeted.timeBudgetSeconds = 1e-9;  // over as soon as the first path is done
  const bake::BakeResult stopped = bake::bakeStore(scene, budgeted);
  CHECK(stopped.stats.pathsCompleted == 1);
  sameStore(stopped.store, bake::bakeStore(scene, quickBake(1)).store);
}

namespace {

// The options of the conference room's reference store (tests/data/conference_r48_p32.ibrr): chairs put
// several layers within ε of one another in a pixel, where the warps' matching rule decides which layer a sample's
// share goes to.
bake::BakeOptions conferenceTestBake() {
  bake::BakeOptions options = bake::paperConfiguration();
  options.biasCompensation = false;
  options.paths = 32;
  options.ldcResolution = 48;
  options.hemicubeResolution = 32;
  options.indirectHemicubeResolution = 16;
  return options;
}

// The two warps follow one matching rule (ibrr/ldc_builder.hpp) and the GPU's sums are exact fixed point, so the
// stores agree within the float rounding of the CPU's sums, on any processor that emulates the GPU. A batch of
// hemicubes is drawn in one pass and warped as if its hemicubes came one by one: a bake with batches of 3 (split
// inside light paths and, with two levels, between them; three hemicubes a dispatch) gives the same bytes as one
// with the default batch (a dispatch takes all the hemicubes of a level in the batch when their sums fit). One
// test case a scene below, so that ctest runs them side by side.
void checkWarpsAgree(const scene::Scene& scene, bake::BakeOptions options) {
  options.warp = bake::WarpDevice::Cpu;
  const bake::BakeResult cpu = bake::bakeStore(scene, options);
  options.warp = bake::WarpDevice::Gpu;
  const bake::BakeResult gpu = bake::bakeStore(scene, options);
  CHECK(gpu.stats.warp == bake::WarpDevice::Gpu);
  CHECK(gpu.stats.samplesInserted == cpu.stats.samplesInserted);
  CHECK(gpu.stats.pixelWrites == cpu.stats.pixelWrites);
  CHECK(gpu.stats.openedLayers == cpu.stats.openedLayers);
  const StoreAgreement agreement = compareStores(gpu.store, cpu.store, 1e-5);
  INFO(agreement.beyond << " layers beyond 1e-5, worst " << agreement.worst << "; " << agreement.otherLayers
                        << " in pixels of another structure");
  CHECK(agreement.beyond == 0);
  CHECK(agreement.otherLayers == 0);
  // The default batch is drawn in fewer passes than hemicubes and warped in fewer dispatches (the CPU warp draws
  // one a pass); batches of 3 take at least a pass and a dispatch each.
  CHECK(cpu.stats.renderPasses == cpu.stats.hemicubes);
  CHECK(gpu.stats.renderPasses < gpu.stats.hemicubes);
  CHECK(gpu.stats.warpDispatches < gpu.stats.hemicubes);
  options.gpuBatchHemicubes = 3;
  const bake::BakeResult batched = bake::bakeStore(scene, options);
  CHECK(batched.stats.renderPasses >= (batched.stats.hemicubes + 2) / 3);
  CHECK(batched.stats.warpDispatches >= (batched.stats.hemicubes + 2) / 3);
  const LayeredDepthCube& batchesOf3 = batched.store;
  const StoreAgreement batchAgreement = compareStores(batchesOf3, gpu.store, 0.0);
  INFO("batches of 3 against the default: " << batchAgreement.beyond << " layers differ, worst " << batchAgreement.worst
                                            << "; " << batchAgreement.otherLayers << " in pixels of another structure");
  const bool sameBytes = serializeStore(batchesOf3) == serializeStore(gpu.store);  // not printed: megabytes
  CHECK(sameBytes);
}

void checkWarpsAgree(const char* sceneFile, const bake::BakeOptions& options) {
  test::glContext();
  checkWarpsAgree(scene::loadScene(test::sceneDir() / sceneFile), options);
}

}  // namespace

TEST_CASE("the GPU warp gives the CPU warp's store, and the same bytes at any batch size, on the Cornell box",
          "[ibrr][gpu]") {
  checkWarpsAgree("cornell.json", quickBake(32));
  // The GPU warp inserts into the seeded layers: without seeds it refuses, naming the flag.
  const scene::Scene cornell = scene::loadScene(test::sceneDir() / "cornell.json");
  bake::BakeOptions unseeded = quickBake(4);
  unseeded.warp = bake::WarpDevice::Gpu;
  unseeded.seedLayersFromGeometry = false;
  CHECK_THROWS_WITH(bake::bakeStore(cornell, unseeded), Catch::Contains("--warp gpu"));
}

TEST_CASE("the GPU warp gives the CPU warp's store, and the same bytes at any batch size, with two levels",
          "[ibrr][gpu]") {
  bake::BakeOptions twoLevels = quickBake(32);  // the lights' hemicubes at R, the bounces' at R/2
  twoLevels.indirectLdcResolution = twoLevels.ldcResolution / 2;
  checkWarpsAgree("cornell.json", twoLevels);
}

TEST_CASE("the GPU warp gives the CPU warp's store, and the same bytes at any batch size, on the furnace, Gaussian",
          "[ibrr][gpu]") {
  bake::BakeOptions gaussian = quickBake(32);
  gaussian.splat = SplatKernel::Gaussian;
  checkWarpsAgree("furnace.json", gaussian);
}

TEST_CASE("the GPU warp gives the CPU warp's store, and the same bytes at any batch size, on the conference room",
          "[ibrr][gpu]") {
  checkWarpsAgree("conference.json", conferenceTestBake());
}

// A panel of one side (facing +z) standing on a floor, a point light on each side: the seeds give the panel its
// front's layers only (ibrr/surface_seeds.hpp), so the samples on its back, from the light behind it and from the
// VPLs of the paths that bounce there, open layers of their own, many hemicubes of a batch in the same pixels.
// The GPU opens them (shaders/ldc_open.comp) in the CPU warp's order.
TEST_CASE("the GPU warp gives the CPU warp's store, and the same bytes at any batch size, where samples open layers",
          "[ibrr][gpu]") {
  test::glContext();
  scene::Scene scene;
  rays::test::addQuad(scene, {-1, 0, -1}, {-1, 0, 1}, {1, 0, 1}, {1, 0, -1}, glm::vec3(0.6f));    // floor, up
  rays::test::addQuad(scene, {-0.6f, 0, 0}, {0.6f, 0, 0}, {0.6f, 1, 0}, {-0.6f, 1, 0}, glm::vec3(0.7f));  // +z
  for (const glm::vec3& position : {glm::vec3(0.2f, 0.8f, 0.7f), glm::vec3(-0.3f, 0.6f, -0.6f)}) {
    scene::PointLight light;
    light.position = position;
    light.intensity = glm::vec3(1.0f, 0.8f, 0.6f);
    scene.pointLights.push_back(light);
  }
  scene.finalize();
  bake::BakeOptions options = quickBake(32);
  options.ldcResolution = 32;
  options.biasCompensation = false;
  options.warp = bake::WarpDevice::Cpu;
  const bake::BakeResult cpu = bake::bakeStore(scene, options);
  INFO(cpu.stats.openedLayers << " layers opened by the CPU warp's hemicubes");
  CHECK(cpu.stats.openedLayers > 0);
  checkWarpsAgree(scene, options);
}

// Hidden (run by tools/gpu_check.sh on a machine with a hardware GPU, where its two bakes take seconds; on llvmpipe
// the GPU warp of 4096 paths takes many minutes): the default Cornell bake, every hemicube of 4096 paths, gives the
// same store with either warp.
TEST_CASE("a hardware GPU warps the default Cornell bake into the CPU warp's store", "[.][gpu-hardware]") {
  if (test::glContext().info().isSoftware()) {
    WARN("a software GL: this check is for a hardware GPU (tools/gpu_check.sh)");
    return;
  }
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  bake::BakeOptions options;
  options.warp = bake::WarpDevice::Cpu;
  const bake::BakeResult cpu = bake::bakeStore(scene, options);
  options.warp = bake::WarpDevice::Gpu;
  const bake::BakeResult gpu = bake::bakeStore(scene, options);
  CHECK(gpu.stats.samplesInserted == cpu.stats.samplesInserted);
  CHECK(gpu.stats.pixelWrites == cpu.stats.pixelWrites);
  CHECK(gpu.stats.openedLayers == cpu.stats.openedLayers);
  const StoreAgreement agreement = compareStores(gpu.store, cpu.store, 1e-5);
  WARN(agreement.beyond << " of " << agreement.layers << " layers beyond 1e-5, worst " << agreement.worst << "; "
                        << agreement.otherLayers << " in pixels of another structure; pixel writes "
                        << gpu.stats.pixelWrites << " (gpu), " << cpu.stats.pixelWrites << " (cpu)");
  CHECK(agreement.beyond == 0);
  CHECK(agreement.otherLayers == 0);
}
