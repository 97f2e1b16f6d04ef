// The lightmap file: a round trip keeps every value, and each kind of bad file is refused with a
// message naming the file and what is wrong; `ibrr render --lightmap` uses it and refuses a
// lightmap baked for another scene.
#include "lightmap/lightmap_file.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace ibrr;
using namespace ibrr::lightmap;
namespace fs = std::filesystem;

namespace {

const scene::Scene& cornell() {
  static const scene::Scene scene = scene::loadScene(scene::resolveScenePath("cornell"));
  return scene;
}

// A Cornell lightmap with a texel-dependent radiance (so that a row or channel swap shows).
Lightmap cornellLightmap() {
  Lightmap lightmap;
  lightmap.atlasOptions.targetSize = 64;
  lightmap.atlasOptions.emitterRefinement = 2;  // the loader must rebuild the refined atlas
  const LightmapAtlas atlas = buildAtlas(cornell(), lightmap.atlasOptions);
  lightmap.width = atlas.width;
  lightmap.height = atlas.height;
  lightmap.radiance.resize(std::size_t(atlas.width) * atlas.height);
  for (std::size_t i = 0; i < lightmap.radiance.size(); ++i)
    lightmap.radiance[i] = glm::vec3(float(i % 97) * 0.37f, float(i / 97) * 1e-3f, 1.0f / float(i + 1));
  lightmap.method = "gather";
  lightmap.settingsJson = R"({"hemicube":128,"tolerance":0.005})";
  lightmap.sceneFingerprint = cornell().fingerprint();
  lightmap.atlasFingerprint = atlasFingerprint(atlas);
  return lightmap;
}

nlohmann::json readJson(const fs::path& path) { return nlohmann::json::parse(test::readText(path)); }
void writeJson(const fs::path& path, const nlohmann::json& value) { test::writeText(path, value.dump(2)); }

}  // namespace

TEST_CASE("lightmap file: save and load give back every value", "[file]") {
  const fs::path folder = test::outputDir("lightmap file round trip");
  const Lightmap saved = cornellLightmap();
  const fs::path path = folder / "cornell.lightmap";
  saveLightmap(path, saved);
  CHECK(fs::exists(folder / "cornell.lightmap.exr"));
  CHECK(readJson(path)["radiance"] == "cornell.lightmap.exr");
  LightmapAtlas atlas;
  const Lightmap loaded = loadLightmap(path, cornell(), &atlas);
  CHECK(loaded.width == saved.width);
  CHECK(loaded.height == saved.height);
  CHECK(loaded.method == "gather");
  CHECK(nlohmann::json::parse(loaded.settingsJson) == nlohmann::json::parse(saved.settingsJson));
  CHECK(loaded.sceneFingerprint == saved.sceneFingerprint);
  CHECK(loaded.atlasOptions.targetSize == 64);
  CHECK(loaded.atlasOptions.texelsPerUnit == saved.atlasOptions.texelsPerUnit);
  CHECK(loaded.atlasOptions.paddingTexels == saved.atlasOptions.paddingTexels);
  CHECK(loaded.atlasOptions.chartNormalCosine == saved.atlasOptions.chartNormalCosine);
  CHECK(loaded.atlasOptions.emitterRefinement == 2);
  CHECK(loaded.radiance == saved.radiance);  // 32-bit float EXR: exact
  CHECK(atlas.width == saved.width);
  CHECK(atlas.height == saved.height);
  // No temporary files left behind.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(folder)) ++files;
  CHECK(files == 2);
}

TEST_CASE("lightmap file: the data's checksum and the atlas's fingerprint tie a lightmap to its bake", "[file]") {
  // Of the corrupted lightmap files tried before these keys existed, 95 were accepted and shown as
  // garbage: now a changed texel, a swapped data file or an atlas laid out differently is refused.
  const fs::path folder = test::outputDir("lightmap file identity");
  const Lightmap saved = cornellLightmap();
  const fs::path good = folder / "good.lightmap";
  saveLightmap(good, saved);
  const nlohmann::json metadata = readJson(good);
  const auto refused = [&](const fs::path& path, const std::string& what) {
    INFO(path.string() << " should be refused with '" << what << "'");
    CHECK_THROWS_WITH(loadLightmap(path, cornell()), Catch::Contains(path.string()) && Catch::Contains(what));
  };
  SECTION("one texel changed in the data file") {
    Image image(saved.width, saved.height);
    image.pixels = saved.radiance;
    image.pixels[saved.radiance.size() / 2].g += 1.0f;
    writeImage(image, lightmapImagePath(good));
    refused(good, "checksum");
  }
  SECTION("the data file of another bake of the same atlas") {
    Lightmap other = saved;
    for (glm::vec3& texel : other.radiance) texel *= 2.0f;
    saveLightmap(folder / "other.lightmap", other);
    fs::copy_file(lightmapImagePath(folder / "other.lightmap"), lightmapImagePath(good),
                  fs::copy_options::overwrite_existing);
    refused(good, "checksum");
  }
  SECTION("an atlas of the same size laid out differently") {
    nlohmann::json value = metadata;
    value["atlasFingerprint"] = "0123456789abcdef";
    writeJson(folder / "layout.lightmap", value);
    fs::copy_file(lightmapImagePath(good), folder / "layout.lightmap.exr");
    value["radiance"] = "layout.lightmap.exr";
    writeJson(folder / "layout.lightmap", value);
    refused(folder / "layout.lightmap", "laid out differently");
    value.erase("atlasFingerprint");
    writeJson(folder / "layout.lightmap", value);
    refused(folder / "layout.lightmap", "key 'atlasFingerprint'");
  }
  SECTION("500 data files with a byte flipped: each refused, or loaded with every texel as saved") {
    const std::string bytes = test::readText(lightmapImagePath(good));
    std::uint64_t state = 12345;
    int accepted = 0;
    for (int mutant = 0; mutant < 500; ++mutant) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;  // a fixed LCG: the same mutants every run
      std::string damaged = bytes;
      damaged[(state >> 33) % damaged.size()] ^= char(1u << ((state >> 20) % 8));
      test::writeText(lightmapImagePath(good), damaged);
      try {
        const Lightmap loaded = loadLightmap(good, cornell());
        ++accepted;
        CHECK(loaded.radiance == saved.radiance);  // a flip outside the pixels (a header name, padding)
      } catch (const Error& error) {
        CHECK_THAT(error.what(), Catch::Contains(good.string()));
      }
    }
    WARN(accepted << " of 500 mutants loaded, each with every texel as saved");
  }
}

TEST_CASE("lightmap file: bad files are refused naming the file and the problem", "[file]") {
  const fs::path folder = test::outputDir("lightmap file errors");
  const fs::path good = folder / "good.lightmap";
  saveLightmap(good, cornellLightmap());
  const nlohmann::json metadata = readJson(good);
  auto variant = [&](const std::string& name, const nlohmann::json& value) {
    const fs::path path = folder / (name + ".lightmap");
    writeJson(path, value);
    return path;
  };
  auto refused = [&](const fs::path& path, const std::string& what) {
    INFO(path.string() << " should be refused with '" << what << "'");
    CHECK_THROWS_WITH(loadLightmap(path, cornell()), Catch::Contains(path.string()) && Catch::Contains(what));
  };
  refused(folder / "missing.lightmap", "not found");
  test::writeText(folder / "garbage.lightmap", "{ \"format\": ");
  refused(folder / "garbage.lightmap", "malformed JSON");
  refused(folder / "good.lightmap.exr", "malformed JSON");  // the EXR given instead of the JSON
  test::writeText(folder / "huge.lightmap", "1e392");  // beyond a double: out_of_range, not parse_error (fuzz_lightmap)
  refused(folder / "huge.lightmap", "not a lightmap file");
  nlohmann::json value = metadata;
  value["format"] = "something else";
  refused(variant("format", value), "not a lightmap file");
  value = metadata;
  value["version"] = 99;
  refused(variant("version", value), "version 99");
  for (const char* key : {"width", "method", "sceneFingerprint", "atlas", "radiance"}) {
    value = metadata;
    value.erase(key);
    refused(variant(std::string("no_") + key, value), std::string("key '") + key + "'");
  }
  value = metadata;
  value["atlas"].erase("paddingTexels");
  refused(variant("no_padding", value), "key 'paddingTexels'");
  value = metadata;
  value["width"] = "wide";
  refused(variant("width_type", value), "key 'width'");
  value = metadata;
  value["radiance"] = "elsewhere.exr";
  refused(variant("no_exr", value), "is missing");
  value = metadata;
  value["width"] = metadata["width"].get<int>() + 1;
  refused(variant("size", value), "expected " + std::to_string(metadata["width"].get<int>() + 1) + "x");
  value = metadata;
  value["atlas"]["targetSize"] = 32;  // rebuilds a smaller atlas than the EXR's
  refused(variant("atlas", value), "rebuilt");
  value = metadata;
  value["atlas"]["emitterRefinement"] = 0;
  refused(variant("refinement", value), "refinement near lights");
  value = metadata;
  value["atlas"]["emitterRefinement"] = "fine";
  refused(variant("refinement_type", value), "key 'emitterRefinement'");
  value = metadata;
  value["atlas"].erase("emitterRefinement");  // an older file: uniform, smaller than this file's refined EXR
  refused(variant("no_refinement", value), "rebuilt");
  // Another scene: the furnace's fingerprint differs from the Cornell box's.
  const scene::Scene furnace = scene::loadScene(scene::resolveScenePath("furnace"));
  CHECK_THROWS_WITH(loadLightmap(good, furnace), Catch::Contains("baked for another scene"));
}

TEST_CASE("ibrr render --lightmap renders a lightmap and refuses another scene's", "[file][cli]") {
  const fs::path folder = test::outputDir("lightmap render command");
  const fs::path path = folder / "cornell.lightmap";
  Lightmap lightmap = cornellLightmap();
  for (glm::vec3& value : lightmap.radiance) value = glm::vec3(0.25f, 0.5f, 1.0f);
  saveLightmap(path, lightmap);
  const test::CommandResult ok = test::runIbrr(
      {"render", "cornell", "--lightmap", path.string(), "--size", "64x64", "-o", (folder / "cornell.exr").string()});
  INFO(ok.out << ok.err);
  REQUIRE(ok.exitCode == 0);
  CHECK_THAT(ok.out, Catch::Contains("lightmap"));
  // The constant lightmap shows as the constant wherever the camera sees the box.
  const Image image = readImage(folder / "cornell.exr");
  std::size_t constantPixels = 0;
  for (const glm::vec3& pixel : image.pixels)
    constantPixels += glm::length(pixel - glm::vec3(0.25f, 0.5f, 1.0f)) < 1e-4f;
  CHECK(constantPixels > image.pixels.size() / 2);
  const test::CommandResult other =
      test::runIbrr({"render", "furnace", "--lightmap", path.string(), "-o", (folder / "furnace.exr").string()});
  CHECK(other.exitCode == 1);
  CHECK_THAT(other.err, Catch::Contains("baked for another scene"));
  CHECK_FALSE(fs::exists(folder / "furnace.exr"));
  const test::CommandResult noLightmap =
      test::runIbrr({"render", "cornell", "--method", "lightmap", "-o", (folder / "none.exr").string()});
  CHECK(noLightmap.exitCode != 0);
  CHECK_THAT(noLightmap.err, Catch::Contains("--lightmap FILE"));
}
