// `ibrr export`: the .glb against the Khronos glTF validator and against the lightmap it came from, the
// walkthrough page in headless Chromium against `ibrr render` of the same store and camera, and bad input.
#include "export/scene_export.hpp"
#include "lightmap/lightmap_display.hpp"
#include "lightmap/lightmap_file.hpp"
#include "metrics/metrics.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <Imath/half.h>
#include <stb_image.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace fs = std::filesystem;
using namespace ibrr;

namespace {

const fs::path kWebTests = test::sourceDir() / "tests" / "web";

// A small bake of a scene: an IBRR store or a progressive-refinement lightmap. What the tests check does not
// depend on how well converged the light is.
fs::path smallBake(const fs::path& folder, const std::string& scene, const std::string& kind) {
  const fs::path out = folder / (fs::path(scene).stem().string() + (kind == "store" ? ".ibrr" : ".lightmap"));
  std::vector<std::string> arguments = {"bake", scene, "-o", out.string(), "-q"};
  const std::vector<std::string> store = {
      "--paths", "64", "--ldc", "64", "--hemicube", "16", "--indirect-hemicube", "16", "--bias-compensation", "off"};
  const std::vector<std::string> lightmap = {"--method", "progressive", "--atlas", "64", "--shots", "8"};
  for (const std::string& flag : kind == "store" ? store : lightmap) arguments.push_back(flag);
  const test::CommandResult result = test::runIbrr(arguments);
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  return out;
}

// Runs a command line; returns its stdout, REQUIREs exit 0.
std::string runCommand(const std::string& command, const fs::path& folder) {
  const fs::path out = folder / "command_out.txt", err = folder / "command_err.txt";
  const int code = std::system((command + " > " + out.string() + " 2> " + err.string()).c_str());
  INFO(command << "\n" << test::readText(err));
  REQUIRE(code == 0);
  return test::readText(out);
}

void requireNode() {
  INFO("needs Node.js and web/node_modules (./ibrr.sh installs both: npm ci in web/)");
  REQUIRE(std::system("node --version > /dev/null 2>&1") == 0);
  REQUIRE(fs::exists(test::sourceDir() / "web" / "node_modules" / "gltf-validator"));
}

// The JSON chunk and the BIN chunk of a .glb.
struct Glb {
  nlohmann::json json;
  std::vector<std::uint8_t> binary;
  std::span<const std::uint8_t> view(int index) const {
    const nlohmann::json& v = json["bufferViews"][std::size_t(index)];
    return std::span(binary).subspan(v.value("byteOffset", std::size_t(0)), v["byteLength"].get<std::size_t>());
  }
};
Glb readGlb(const fs::path& path) {
  const std::string bytes = test::readText(path);
  REQUIRE(bytes.size() >= 20);
  std::uint32_t header[5];
  std::memcpy(header, bytes.data(), sizeof header);
  REQUIRE(header[0] == 0x46546C67u);  // "glTF"
  REQUIRE(header[2] == bytes.size());
  Glb glb;
  glb.json = nlohmann::json::parse(bytes.substr(20, header[3]));
  const std::size_t binaryStart = 20 + header[3] + 8;
  glb.binary.assign(bytes.begin() + std::ptrdiff_t(binaryStart), bytes.end());
  return glb;
}

// An 8-bit PNG in memory or in a file as RGB bytes.
struct Rgb8 {
  int width = 0, height = 0;
  std::vector<std::uint8_t> bytes;
};
Rgb8 decodePng(std::span<const std::uint8_t> png) {
  Rgb8 image;
  int channels = 0;
  stbi_uc* pixels = stbi_load_from_memory(png.data(), int(png.size()), &image.width, &image.height, &channels, 3);
  REQUIRE(pixels != nullptr);
  image.bytes.assign(pixels, pixels + std::size_t(image.width) * std::size_t(image.height) * 3);
  stbi_image_free(pixels);
  return image;
}
Rgb8 readPng(const fs::path& path) {
  const std::string bytes = test::readText(path);
  return decodePng({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
}
// The displayed values back in linear light (the sRGB curve inverted).
Image linearImage(const Rgb8& png) {
  Image image(png.width, png.height);
  for (std::size_t i = 0; i < image.pixels.size(); ++i)
    for (int c = 0; c < 3; ++c) {
      const float v = float(png.bytes[3 * i + std::size_t(c)]) / 255.0f;
      image.pixels[i][c] = v <= 0.04045f ? v / 12.92f : std::pow((v + 0.055f) / 1.055f, 2.4f);
    }
  return image;
}

void exportAndValidate(const fs::path& folder, const std::string& scene, const std::string& kind) {
  const fs::path baked = smallBake(folder, scene, kind);
  const fs::path glbPath = folder / (fs::path(scene).stem().string() + "_" + kind + ".glb");
  const test::CommandResult exported =
      test::runIbrr({"export", scene, "--" + kind, baked.string(), "-o", glbPath.string(), "--atlas", "256"});
  INFO(exported.err);
  REQUIRE(exported.exitCode == (kind == "store" ? 0 : 1));  // --atlas is for --store
  if (kind != "store") {
    CHECK_THAT(exported.err, Catch::Contains("--atlas"));
    REQUIRE(test::runIbrr({"export", scene, "--lightmap", baked.string(), "-o", glbPath.string()}).exitCode == 0);
  }
  const nlohmann::json report = nlohmann::json::parse(
      runCommand("node " + (kWebTests / "validate.mjs").string() + " " + glbPath.string(), folder));
  INFO(glbPath.filename().string() << ": " << report.dump(1));
  CHECK(report["errors"] == 0);
  CHECK(report["warnings"] == 0);

  // Every triangle of the scene of nonzero area, every camera, the light on TEXCOORD_1 in [0, 1].
  const scene::Scene loaded = scene::loadScene(scene::resolveScenePath(scene));
  const Glb glb = readGlb(glbPath);
  std::size_t triangles = 0, uvsOutside = 0;
  for (const nlohmann::json& primitive : glb.json["meshes"][0]["primitives"]) {
    triangles += glb.json["accessors"][primitive["indices"].get<std::size_t>()]["count"].get<std::size_t>() / 3;
    const nlohmann::json& uv = glb.json["accessors"][primitive["attributes"]["TEXCOORD_1"].get<std::size_t>()];
    const std::span<const std::uint8_t> bytes = glb.view(uv["bufferView"].get<int>());
    for (std::size_t i = 0; i < bytes.size() / 4; ++i) {
      float value;
      std::memcpy(&value, bytes.data() + 4 * i, 4);
      uvsOutside += !(value >= 0.0f && value <= 1.0f);
    }
  }
  CHECK(uvsOutside == 0);
  CHECK(triangles <= loaded.triangleCount());
  CHECK(triangles >= loaded.triangleCount() * 99 / 100);  // only zero-area triangles are left out
  CHECK(glb.json["cameras"].size() == loaded.cameras.size());
  CHECK(glb.json["extras"]["ibrr"]["source"] == kind);
}

}  // namespace

TEST_CASE("export: the Cornell box's glTF files pass the Khronos validator, store and lightmap", "[export][web]") {
  requireNode();
  const fs::path folder = test::outputDir("export_validate_cornell");
  exportAndValidate(folder, "cornell", "store");
  exportAndValidate(folder, "cornell", "lightmap");
}

namespace {

// A shared scene's export of a store or a lightmap (`kind`) against the validator: one test case each below, so
// that ctest runs them side by side (the conference room's 331K triangles take half a minute a file).
void validateSharedSceneExport(const char* scene, const char* kind) {
  requireNode();
  const fs::path folder = test::outputDir(std::string("export_validate_") + scene + "_" + kind);
  exportAndValidate(folder, (test::sceneDir() / (std::string(scene) + ".json")).string(), kind);
}

}  // namespace

TEST_CASE("export: Sibenik's glTF files pass the Khronos validator, store and lightmap", "[export][web]") {
  validateSharedSceneExport("sibenik", "store");
  validateSharedSceneExport("sibenik", "lightmap");
}
TEST_CASE("export: the conference room's glTF file of a store passes the Khronos validator", "[export][web]") {
  validateSharedSceneExport("conference", "store");
}
TEST_CASE("export: the conference room's glTF file of a lightmap passes the Khronos validator", "[export][web]") {
  validateSharedSceneExport("conference", "lightmap");
}

TEST_CASE("export: a lightmap's own texels, unchanged but for the 8-bit encoding", "[export]") {
  const fs::path folder = test::outputDir("export_lightmap_texels");
  const fs::path baked = smallBake(folder, "cornell", "lightmap");
  const fs::path glbPath = folder / "cornell.glb";
  REQUIRE(
      test::runIbrr({"export", "cornell", "--lightmap", baked.string(), "-o", glbPath.string(), "--exposure", "0.5"})
          .exitCode == 0);
  test::glContext();
  const scene::Scene scene = scene::loadScene(scene::resolveScenePath("cornell"));
  lightmap::LightmapAtlas atlas;
  const lightmap::Lightmap lightmap = lightmap::loadLightmap(baked, scene, &atlas);
  const lightmap::PatchList patches = lightmap::rasterizePatches(scene, atlas);
  const Glb glb = readGlb(glbPath);

  // The light texture: each valid texel is the lightmap's radiance through the same tone curve, exactly.
  const int lightTexture = glb.json["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]["index"];
  const int lightImage = glb.json["textures"][std::size_t(lightTexture)]["source"];
  const Rgb8 light = decodePng(glb.view(glb.json["images"][std::size_t(lightImage)]["bufferView"]));
  REQUIRE(light.width == atlas.width);
  REQUIRE(light.height == atlas.height);
  ToneMapping tone;
  tone.exposureStops = 0.5f;
  std::size_t differing = 0, valid = 0;
  for (std::size_t t = 0; t < patches.texelCount(); ++t) {
    if (!patches.valid[t]) continue;
    ++valid;
    for (int c = 0; c < 3; ++c)
      differing += light.bytes[3 * t + std::size_t(c)] != toneMapChannel(lightmap.radiance[t][c], tone);
  }
  CHECK(valid > 0);
  CHECK(differing == 0);

  // The linear incident radiance: the display's H, within a half float's rounding (2^-11 relative).
  const nlohmann::json& incident = glb.json["extras"]["ibrr"]["incidentRadiance"];
  REQUIRE(incident["width"] == atlas.width);
  const std::span<const std::uint8_t> halves = glb.view(incident["bufferView"]);
  REQUIRE(halves.size() == patches.texelCount() * 8);
  const std::vector<glm::vec3> expected = lightmap::displayIncidentRadiance(atlas, patches, lightmap.radiance);
  std::size_t outside = 0;
  for (std::size_t t = 0; t < expected.size(); ++t)
    for (int c = 0; c < 3; ++c) {
      Imath::half h;
      h.setBits(std::uint16_t(halves[8 * t + 2 * std::size_t(c)] | halves[8 * t + 2 * std::size_t(c) + 1] << 8));
      outside += std::abs(float(h) - expected[t][c]) > std::abs(expected[t][c]) * 0x1p-11f + 1e-7f;
    }
  CHECK(outside == 0);
}

namespace {

// Pixels away from silhouettes, creases and lights: the pixel and its 8 neighbours show the same normal and no
// emission. (The page rasterises the same triangles as `ibrr render`, but a pixel on an edge may fall to either
// side.)
std::vector<std::uint8_t> interiorMask(const Image& normals, const Image& emission) {
  std::vector<std::uint8_t> mask(normals.pixels.size(), 0);
  for (int y = 1; y + 1 < normals.height; ++y)
    for (int x = 1; x + 1 < normals.width; ++x) {
      bool interior = true;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const glm::vec3 step = normals.at(x + dx, y + dy) - normals.at(x, y);
          interior = interior && glm::dot(step, step) < 1e-4f && emission.at(x + dx, y + dy) == glm::vec3(0.0f);
        }
      mask[std::size_t(y) * std::size_t(normals.width) + std::size_t(x)] = interior;
    }
  return mask;
}

}  // namespace

TEST_CASE("export: the walkthrough page shows what ibrr render shows, and a key moves it", "[export][web]") {
  requireNode();
  INFO("needs Debian's chromium (ibrr.sh installs it)");
  REQUIRE(fs::exists("/usr/bin/chromium"));
  const fs::path folder = test::outputDir("export_page");
  const fs::path store = folder / "cornell.ibrr";
  REQUIRE(test::runIbrr({"bake", "cornell", "--paths", "512", "--ldc", "128", "-o", store.string(), "-q"}).exitCode ==
          0);
  const fs::path page = folder / "cornell.html";
  REQUIRE(test::runIbrr({"export", "cornell", "--store", store.string(), "-o", (folder / "cornell.glb").string(),
                         "--html", page.string()})
              .exitCode == 0);
  const std::string size = "256x256";
  REQUIRE(test::runIbrr({"render", "cornell", "--store", store.string(), "--size", size, "-o",
                         (folder / "expected.png").string()})
              .exitCode == 0);
  for (const auto& [method, file] : {std::pair{"normal", "normal.exr"}, {"emission", "emission.exr"}})
    REQUIRE(test::runIbrr({"render", "cornell", "--method", method, "--size", size, "-o", (folder / file).string()})
                .exitCode == 0);
  const nlohmann::json shot = nlohmann::json::parse(runCommand(
      "node " + (kWebTests / "page_shot.mjs").string() + " " + page.string() + " " + (folder / "actual.png").string() +
          " --width 256 --height 256 --camera 0 --press w --hold-ms 400 --after " + (folder / "moved.png").string(),
      folder));
  INFO(shot.dump());

  const Image actual = linearImage(readPng(folder / "actual.png"));
  const Image expected = linearImage(readPng(folder / "expected.png"));
  const std::vector<std::uint8_t> mask =
      interiorMask(readImage(folder / "normal.exr"), readImage(folder / "emission.exr"));
  const metrics::ErrorMetrics error = metrics::compareImages(actual, expected, mask);
  INFO("page against ibrr render, outside silhouettes and lights: " << metrics::formatMetrics(error));
  if (error.relativeRmse >= 0.05) {
    writeImage(actual, folder / "page_actual.png");
    writeImage(expected, folder / "page_expected.png");
    writeImage(metrics::errorHeatmap(actual, expected, mask), folder / "page_difference.png");
  }
  CHECK(error.pixelCount > actual.pixels.size() / 2);
  CHECK(error.relativeRmse < 0.05);

  // Holding W walks forward (0.2 scene diagonals a second): the view changes.
  const Image moved = linearImage(readPng(folder / "moved.png"));
  CHECK(metrics::compareImages(moved, actual).relativeRmse > 0.05);
}

TEST_CASE("export: bad input is refused by name, and nothing is written", "[export]") {
  const fs::path folder = test::outputDir("export_refusals");
  const fs::path inputs = test::outputDir("export_refusals_inputs");
  const fs::path store = smallBake(inputs, "cornell", "store");
  const fs::path furnace = smallBake(inputs, (test::sceneDir() / "furnace.json").string(), "store");
  const std::string out = (folder / "out.glb").string();
  test::checkRefusedByName(
      folder,
      {
          {{"export", "cornell", "--store", (inputs / "missing.ibrr").string(), "-o", out}, "missing.ibrr"},
          {{"export", "cornell", "--store", furnace.string(), "-o", out}, "furnace.ibrr"},
          {{"export", "cornell", "--store", store.string(), "-o", "/nonexistent-folder/out.glb"},
           "/nonexistent-folder"},
          {{"export", "cornell", "--store", store.string(), "-o", (folder / "out.gltf").string()}, "-o"},
          {{"export", "cornell", "--store", store.string(), "-o", out, "--html", (folder / "page.htm").string()},
           "--html"},
          {{"export", "cornell", "-o", out}, "--store"},
          {{"export", "cornell", "--store", store.string(), "--lightmap", "x.lightmap", "-o", out}, "--store"},
          {{"export", "cornell", "--store", store.string(), "-o", out, "--atlas", "4"}, "--atlas"},
          {{"export", "cornell", "--store", store.string(), "-o", out, "--tone", "aces"}, "--tone"},
          {{"export", "cornell", "--store", store.string(), "-o", store.string()}, "-o"},
      });
  // The page's template from a web folder without it: named, with the command that builds it.
  const test::CommandResult noPage = test::runIbrr(
      {"export", "cornell", "--store", store.string(), "-o", out, "--html", (folder / "page.html").string()},
      {"IBRR_WEB_DIR=" + (folder / "no-web").string()});
  CHECK(noPage.exitCode != 0);
  CHECK_THAT(noPage.err, Catch::Contains("page.html") && Catch::Contains("./ibrr.sh build"));
  // Memory is counted before it is spent: an 8192² light on an 8 GiB machine (ulimit -v) is refused at once.
  const std::string command = "ulimit -v 8388608; " + test::shellQuote(IBRR_EXECUTABLE) + " export cornell --store " +
                              test::shellQuote(store.string()) + " --atlas 8192 -o " + test::shellQuote(out) + " 2> " +
                              test::shellQuote((inputs / "memory_err.txt").string());
  CHECK(std::system(command.c_str()) != 0);
  CHECK_THAT(test::readText(inputs / "memory_err.txt"), Catch::Contains("needs about") && Catch::Contains("--atlas"));
  CHECK(fs::is_empty(folder));
}

TEST_CASE("export: Ctrl-C leaves no file", "[export]") {
  const fs::path inputs = test::outputDir("export_interrupt_inputs");
  const fs::path store = smallBake(inputs, "cornell", "store");
  test::checkInterruptedCleanly(
      test::outputDir("export_interrupt"),
      "export cornell --store " + test::shellQuote(store.string()) + " --atlas 4096 -o out.glb --html page.html", 1.0);
}

TEST_CASE("export: compare --export links each baked method's walkthrough page", "[export]") {
  const fs::path report = test::outputDir("export_compare") / "report";
  const test::CommandResult result = test::runIbrr({"compare", "cornell", "--methods", "ibrr,gather,keller",
                                                    "--quality", "smoke", "--export", "-o", report.string()});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  const std::string index = test::readText(report / "index.html");
  for (const char* method : {"ibrr", "gather"}) {
    INFO(method);
    const std::string page = test::readText(report / "pages" / (std::string(method) + ".html"));
    CHECK_THAT(page, Catch::Contains("id=\"ibrr-glb\""));
    CHECK_THAT(index, Catch::Contains("href=\"pages/" + std::string(method) + ".html\""));
  }
  CHECK(!fs::exists(report / "pages" / "keller.html"));  // Keller's light is computed per frame: nothing to export
}
