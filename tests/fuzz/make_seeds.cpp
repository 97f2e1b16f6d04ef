// Writes the binary seeds of the fuzz corpus that no shipped file provides, small enough for a
// corpus: stores (.ibrr) of the store suite's box room, form-factor matrices and lightmaps for the
// fixture scene (its fingerprint, atlases that match it); each is loaded back, so every seed gets
// past the loaders' checks. Run by tests/fuzz/make_corpus.py:
//   fuzz_make_seeds CORPUS_DIR   (writes CORPUS_DIR/store, CORPUS_DIR/matrix, CORPUS_DIR/lightmap)
#include "fuzz_support.hpp"

#include "ibrr/store_file.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/matrix.hpp"
#include "store_test_scenes.hpp"
#include "util/error.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

using namespace ibrr;
namespace fs = std::filesystem;

namespace {

void writeFile(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw Error(path.string() + ": cannot write the seed");
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Box-room stores (tests/store) at the smallest resolutions: every layer kind, a few KiB.
void storeSeeds(const fs::path& folder) {
  const test::AnalyticScene room = test::boxRoom();
  const std::uint64_t fingerprint = fuzz::fixtureScene().fingerprint();
  const auto save = [&](const char* name, const LayeredDepthCube& store) {
    const std::vector<std::byte> bytes = serializeStore(store);
    writeFile(folder / name, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  };
  save("box_room_r4_box.ibrr", test::build(room, test::boxRoomLights(), 4, 8, SplatKernel::Box, fingerprint));
  save("box_room_r8_gauss.ibrr", test::build(room, test::boxRoomLights(), 8, 8, SplatKernel::Gaussian, fingerprint));
  save("box_room_r4_empty.ibrr", test::build(room, {}, 4, 8, SplatKernel::Box, fingerprint));
  for (const auto& seed : fs::directory_iterator(folder)) {  // each one loads: the fuzzer starts past the checks
    const std::string bytes = readFile(seed.path());
    (void)deserializeStore(std::as_bytes(std::span(bytes.data(), bytes.size())), seed.path().string());
  }
}

// A matrix of n patches on the first texels of an 8 × 8 atlas, with made-up but consistent values; the
// compressed one keeps one exact entry per row, or none.
lightmap::MatrixSolution smallMatrix(std::size_t n, bool dense, bool compressed, bool exactEntries = true) {
  lightmap::MatrixSolution s;
  s.atlasOptions.targetSize = 8;
  s.width = 8;
  s.height = 8;
  s.sceneFingerprint = fuzz::fixtureScene().fingerprint();
  s.bounces = 2;
  s.direct = lightmap::MatrixDirect::Rays;
  for (std::size_t i = 0; i < n; ++i) {
    s.texels.push_back(std::uint32_t(3 * i));
    s.position.emplace_back(float(i), 1.0f, 2.0f);
    s.normal.emplace_back(0.0f, 1.0f, 0.0f);
    s.albedo.emplace_back(0.5f);
    s.emission.emplace_back(i == 0 ? 10.0f : 0.0f);
  }
  if (dense)
    for (std::vector<float>& channel : s.dense) channel.assign(n * n, 0.01f);
  if (compressed) {
    auto c = std::make_shared<lightmap::CompressedMatrix>();
    c->paddedSize = int((n + 3) / 4 * 4);
    for (std::size_t i = 0; i < n; ++i) {
      c->rowOrder.push_back(std::uint32_t(n - 1 - i));
      c->columnOrder.push_back(std::uint32_t(i));
      c->rowScale.emplace_back(0.1f);
    }
    const std::size_t blocksPerRow = std::size_t(c->paddedSize) / 4;
    c->blocks.assign(blocksPerRow * blocksPerRow, 0x00ff00ff12345678ull);
    c->exactStart.push_back(0);
    for (std::size_t i = 0; i < n; ++i) {  // one exact entry per row, on the diagonal
      if (exactEntries) {
        c->exactColumn.push_back(std::uint32_t(i));
        c->exactValue.emplace_back(0.02f);
      }
      c->exactStart.push_back(std::uint32_t(c->exactColumn.size()));
    }
    s.compressed = std::move(c);
  }
  s.settingsJson = R"({"bounces": 2, "storage": "dense"})";
  return s;
}

void matrixSeeds(const fs::path& folder) {
  fs::create_directories(folder);
  lightmap::saveMatrix(folder / "dense_n4.ffmatrix", smallMatrix(4, true, false));
  lightmap::saveMatrix(folder / "compressed_n5.ffmatrix", smallMatrix(5, false, true));
  lightmap::saveMatrix(folder / "both_n3.ffmatrix", smallMatrix(3, true, true));
  lightmap::saveMatrix(folder / "compressed_no_exact_n4.ffmatrix", smallMatrix(4, false, true, false));
  for (const auto& seed : fs::directory_iterator(folder)) {
    (void)lightmap::loadMatrix(seed.path(), fuzz::fixtureScene());
    std::printf("%s\n", seed.path().c_str());
  }
}

// A lightmap of the fixture scene's atlas with these options, saved by saveLightmap and joined into
// one input: the JSON, the separator, the EXR (fuzz_lightmap.cpp).
void lightmapSeed(const fs::path& folder, const std::string& name, const lightmap::AtlasOptions& options) {
  const lightmap::LightmapAtlas atlas = lightmap::buildAtlas(fuzz::fixtureScene(), options);
  const std::size_t texels = std::size_t(atlas.width) * std::size_t(atlas.height);
  // As a solver returns it (the scene's fingerprint and what the file records of the atlas), with the
  // options the atlas was built with, as the bake sets them.
  lightmap::Lightmap map = lightmap::solvedLightmap(fuzz::fixtureScene(), atlas,
                                                    std::vector<glm::vec3>(texels, glm::vec3(0.25f, 0.5f, 1.0f)),
                                                    "gather", R"({"hemicube": 32})");
  map.atlasOptions = options;
  map.atlasFingerprint = lightmap::atlasFingerprint(atlas);
  // The names fuzz_lightmap writes, in a folder per seed: a file read back is never written again.
  const fs::path path = fuzz::scratchFolder() / name / "fuzz.lightmap";
  fs::create_directories(path.parent_path());
  lightmap::saveLightmap(path, map);
  (void)lightmap::loadLightmap(path, fuzz::fixtureScene());
  writeFile(folder / name,
            readFile(path) + std::string(fuzz::kFileSeparator) + readFile(lightmap::lightmapImagePath(path)));
}

void lightmapSeeds(const fs::path& folder) {
  lightmapSeed(folder, "target8.lightmap", {.targetSize = 8});
  lightmapSeed(folder, "target16_refined.lightmap", {.targetSize = 16, .emitterRefinement = 2});
  lightmapSeed(folder, "density_padding1.lightmap", {.texelsPerUnit = 0.01f, .paddingTexels = 1});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR\n");
    return 2;
  }
  fuzz::initialize();
  const fs::path corpus = argv[1];
  try {
    storeSeeds(corpus / "store");
    matrixSeeds(corpus / "matrix");
    lightmapSeeds(corpus / "lightmap");
  } catch (const Error& error) {
    std::fprintf(stderr, "fuzz_make_seeds: %s\n", error.what());
    return 1;
  }
  return 0;
}
