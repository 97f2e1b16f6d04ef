#include "lightmap/lightmap_file.hpp"

#include "ibrr/checksum.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/image.hpp"
#include "util/input_file.hpp"

#include <nlohmann/json.hpp>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace ibrr::lightmap {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormatName = "ibrr lightmap";

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, value);
  return text;
}

// A required key of a given JSON type, or an ibrr::Error naming the file and the key.
const json& requireKey(const json& object, const char* key, json::value_t type, const fs::path& path,
                       const char* typeName) {
  const auto it = object.find(key);
  const bool numberOk = type == json::value_t::number_float && it != object.end() && it->is_number();
  const bool integerOk = type == json::value_t::number_integer && it != object.end() && it->is_number_integer();
  if (it == object.end() || !(it->type() == type || numberOk || integerOk))
    throw Error(path.string() + ": key '" + key + "' is missing or not " + typeName +
                "; the file is damaged or from another program: bake it again");
  return *it;
}

// FNV-1a 64 of the radiance as float32 RGB in texel order (what the EXR holds).
std::uint64_t radianceChecksum(const std::vector<glm::vec3>& radiance) {
  return fnv1a64(std::as_bytes(std::span(radiance)));
}

// A key holding 16 hex digits, as a number.
std::uint64_t requireHexKey(const json& object, const char* key, const fs::path& path) {
  const std::string text =
      requireKey(object, key, json::value_t::string, path, "a string of 16 hex digits").get<std::string>();
  char* end = nullptr;
  const std::uint64_t value = std::strtoull(text.c_str(), &end, 16);
  if (text.size() != 16 || end != text.c_str() + 16)
    throw Error(path.string() + ": key '" + key + "' is not 16 hex digits; bake the lightmap again");
  return value;
}

}  // namespace

fs::path lightmapImagePath(const fs::path& lightmapPath) {
  fs::path image = lightmapPath;
  image += ".exr";
  return image;
}

void stageLightmap(OutputSet& outputs, const fs::path& path, const Lightmap& lightmap) {
  if (lightmap.width <= 0 || lightmap.height <= 0 ||
      lightmap.radiance.size() != std::size_t(lightmap.width) * std::size_t(lightmap.height))
    throw Error(path.string() + ": cannot save a lightmap of " + std::to_string(lightmap.radiance.size()) +
                " texels as " + std::to_string(lightmap.width) + "×" + std::to_string(lightmap.height));
  IBRR_CHECK(lightmap.atlasFingerprint != 0,
             path.string() + ": a lightmap carries the atlasFingerprint() of the atlas it was solved on");
  checkOutputFile(path);
  checkOutputFile(lightmapImagePath(path));
  json settings;
  try {
    settings = lightmap.settingsJson.empty() ? json::object() : json::parse(lightmap.settingsJson);
  } catch (const json::exception&) {
    settings = lightmap.settingsJson;  // kept as text when it is not JSON
  }
  const fs::path imagePath = lightmapImagePath(path);
  const json metadata = {
      {"format", kFormatName},
      {"version", kLightmapFormatVersion},
      {"method", lightmap.method},
      {"settings", settings},
      {"sceneFingerprint", hex64(lightmap.sceneFingerprint)},
      {"atlas",
       {{"texelsPerUnit", lightmap.atlasOptions.texelsPerUnit},
        {"targetSize", lightmap.atlasOptions.targetSize},
        {"paddingTexels", lightmap.atlasOptions.paddingTexels},
        {"chartNormalCosine", lightmap.atlasOptions.chartNormalCosine},
        {"emitterRefinement", lightmap.atlasOptions.emitterRefinement}}},
      {"atlasFingerprint", hex64(lightmap.atlasFingerprint)},
      {"width", lightmap.width},
      {"height", lightmap.height},
      {"radiance", imagePath.filename().string()},
      {"radianceChecksum", hex64(radianceChecksum(lightmap.radiance))},
  };
  Image image(lightmap.width, lightmap.height);
  image.pixels = lightmap.radiance;       // image row y = atlas texel row y
  stageImage(outputs, image, imagePath);
  outputs.stage(path, [&](const fs::path& temporary) {
    std::ofstream out(temporary);
    out << metadata.dump(2) << '\n';
    out.close();
    if (!out) throw Error(temporary.string() + ": could not write the lightmap metadata (disk full?)");
  });
}

void saveLightmap(const fs::path& path, const Lightmap& lightmap) {
  OutputSet outputs;  // the metadata and its data file are written both or neither
  stageLightmap(outputs, path, lightmap);
  outputs.commit();
}

Lightmap loadLightmap(const fs::path& path, const scene::Scene& scene, LightmapAtlas* atlasOut) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw Error(path.string() + ": lightmap file not found; bake one with 'ibrr bake SCENE --method gather -o " +
                path.filename().string() + "'");
  recordInput(path, "lightmap file");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  json metadata;
  try {
    metadata = json::parse(text.str());
  } catch (const json::parse_error& error) {
    throw Error(path.string() + ": not a lightmap file (malformed JSON at byte " + std::to_string(error.byte) +
                "); give the .lightmap file that 'ibrr bake --method gather' wrote, not its .exr");
  } catch (const json::exception& error) {  // a number beyond a double's range ("1e392"): out_of_range
    throw Error(path.string() + ": not a lightmap file (" + error.what() + "); bake it again");
  }
  if (!metadata.is_object() || metadata.value("format", json()) != kFormatName)
    throw Error(path.string() + ": not a lightmap file (key 'format' is not \"" + kFormatName +
                "\"); give the .lightmap file that 'ibrr bake --method gather' wrote");
  const int version = requireKey(metadata, "version", json::value_t::number_integer, path, "an integer").get<int>();
  if (version != kLightmapFormatVersion)
    throw Error(path.string() + ": lightmap format version " + std::to_string(version) + ", this ibrr reads " +
                std::to_string(kLightmapFormatVersion) + "; bake it again with this version");

  Lightmap lightmap;
  lightmap.method = requireKey(metadata, "method", json::value_t::string, path, "a string").get<std::string>();
  const auto settings = metadata.find("settings");
  lightmap.settingsJson = settings == metadata.end() ? "{}"
                          : settings->is_string()    ? settings->get<std::string>()
                                                     : settings->dump();
  lightmap.sceneFingerprint = requireHexKey(metadata, "sceneFingerprint", path);
  const std::string fingerprint = hex64(lightmap.sceneFingerprint);
  if (lightmap.sceneFingerprint != scene.fingerprint())
    throw Error(path.string() + ": this lightmap was baked for another scene (fingerprint " + fingerprint +
                ", this scene " + hex64(scene.fingerprint()) + "); bake one for " +
                (scene.sourcePath.empty() ? std::string("this scene") : scene.sourcePath.filename().string()));
  const json& atlas = requireKey(metadata, "atlas", json::value_t::object, path, "an object");
  lightmap.atlasOptions.texelsPerUnit =
      requireKey(atlas, "texelsPerUnit", json::value_t::number_float, path, "a number").get<float>();
  lightmap.atlasOptions.targetSize =
      requireKey(atlas, "targetSize", json::value_t::number_integer, path, "an integer").get<int>();
  lightmap.atlasOptions.paddingTexels =
      requireKey(atlas, "paddingTexels", json::value_t::number_integer, path, "an integer").get<int>();
  lightmap.atlasOptions.chartNormalCosine =
      requireKey(atlas, "chartNormalCosine", json::value_t::number_float, path, "a number").get<float>();
  // Optional: lightmaps baked before the refinement near lights existed have a uniform density.
  if (atlas.contains("emitterRefinement"))
    lightmap.atlasOptions.emitterRefinement =
        requireKey(atlas, "emitterRefinement", json::value_t::number_integer, path, "an integer").get<int>();
  lightmap.width = requireKey(metadata, "width", json::value_t::number_integer, path, "an integer").get<int>();
  lightmap.height = requireKey(metadata, "height", json::value_t::number_integer, path, "an integer").get<int>();
  if (lightmap.width <= 0 || lightmap.height <= 0 || lightmap.width > 16384 || lightmap.height > 16384)
    throw Error(path.string() + ": keys 'width' and 'height' must be in [1, 16384]; bake the lightmap again");
  const std::string imageName =
      requireKey(metadata, "radiance", json::value_t::string, path, "a file name").get<std::string>();
  const fs::path imagePath = path.parent_path() / imageName;
  if (!fs::is_regular_file(imagePath, ec))
    throw Error(path.string() + ": its radiance image " + imagePath.string() +
                " is missing; keep the .lightmap and its .exr together, or bake again");
  Image image;
  try {
    image = readImage(imagePath, std::pair(lightmap.width, lightmap.height));
  } catch (const Error& error) {
    throw Error(path.string() + ": its radiance image cannot be read (" + error.what() + "); bake again");
  }
  for (const glm::vec3& value : image.pixels)
    if (!(std::isfinite(value.x) && std::isfinite(value.y) && std::isfinite(value.z)))
      throw Error(path.string() + ": its radiance image has non-finite texels; bake again");
  if (radianceChecksum(image.pixels) != requireHexKey(metadata, "radianceChecksum", path))
    throw Error(path.string() + ": its radiance image " + imagePath.filename().string() +
                " does not match the checksum in the metadata (damaged, or from another bake); bake again");
  lightmap.radiance = std::move(image.pixels);

  LightmapAtlas rebuilt;
  try {
    rebuilt = buildAtlas(scene, lightmap.atlasOptions);
  } catch (const Error& error) {
    throw Error(path.string() + ": key 'atlas' does not give an atlas (" + error.what() + "); bake again");
  }
  if (rebuilt.width != lightmap.width || rebuilt.height != lightmap.height)
    throw Error(path.string() + ": the atlas rebuilt from its options is " + std::to_string(rebuilt.width) + "×" +
                std::to_string(rebuilt.height) + " texels, the file's is " + std::to_string(lightmap.width) + "×" +
                std::to_string(lightmap.height) + " (made by another version of the atlas code); bake again");
  lightmap.atlasFingerprint = requireHexKey(metadata, "atlasFingerprint", path);
  if (atlasFingerprint(rebuilt) != lightmap.atlasFingerprint)
    throw Error(path.string() + ": the atlas rebuilt from its options is laid out differently from the one it was "
                "baked on (atlas fingerprint " + hex64(atlasFingerprint(rebuilt)) + ", the file's " +
                hex64(lightmap.atlasFingerprint) + "; another version of the atlas code); bake again");
  if (atlasOut) *atlasOut = std::move(rebuilt);
  return lightmap;
}

}  // namespace ibrr::lightmap
