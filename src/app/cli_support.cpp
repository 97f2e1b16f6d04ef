#include "app/cli_support.hpp"

#include "lightmap/atlas.hpp"
#include "scene/load.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>

namespace ibrr::app {

scene::ImageSize parseImageSize(const std::string& text, const std::string& flag) {
  const auto separator = text.find_first_of("xX");
  scene::ImageSize size{0, 0};
  if (separator != std::string::npos) {
    const char* begin = text.data();
    const auto widthResult = std::from_chars(begin, begin + separator, size.width);
    const auto heightResult = std::from_chars(begin + separator + 1, begin + text.size(), size.height);
    if (widthResult.ec == std::errc() && widthResult.ptr == begin + separator && heightResult.ec == std::errc() &&
        heightResult.ptr == begin + text.size() && size.width >= 1 && size.height >= 1 && size.width <= 16384 &&
        size.height <= 16384)
      return size;
  }
  throw Error(flag + " '" + text + "': expected WIDTHxHEIGHT with each in [1, 16384], e.g. 512x512");
}

const CLI::Validator& finiteNumber() {
  static const CLI::Validator check(
      [](std::string& text) -> std::string {
        double value = 0.0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
          return "'" + text + "' is not a finite number";
        // The flags are floats: 1e39 is finite as a double but infinite once CLI11 stores it.
        if (std::fabs(value) > double(std::numeric_limits<float>::max()))
          return "'" + text + "' is beyond a float's range (about ±3.4e38)";
        return {};
      },
      "FINITE");
  return check;
}

scene::Scene loadSceneArgument(const std::string& argument) {
  scene::Scene scene = scene::loadScene(scene::resolveScenePath(argument));
  verbose(scene.sourcePath.string() + ": " + std::to_string(scene.triangleCount()) + " triangles, " +
          std::to_string(scene.emitters().size()) + " emissive triangles");
  return scene;
}

void declareLightPathFlags(MethodFlags& flags, bake::BakeOptions& b) {
  flags.option("--paths", b.paths, "light paths (particles) shot from the lights");
  flags.option("--seed", b.seed, "light-path sampling seed");
  flags.option("--max-bounces", b.maxBounces, "reflections after which a light path stops");
  flags.option("--hemicube", b.hemicubeResolution, "H: hemicube resolution for VPLs on the lights (even)");
  flags.option("--indirect-hemicube", b.indirectHemicubeResolution,
               "h: hemicube resolution for VPLs after a bounce (even); a surface narrower than a hemicube pixel's "
               "footprint gets the light only of the VPLs whose samples hit it, so raise it (128, 256) for finely "
               "detailed scenes (the Sibenik nave: 128 brings its energy within 2%)");
  flags.option("--clamp", b.geometryClamp,
               "upper bound on the geometry term cosθx·cosθi/(π r²) against bright corners, in 1/scene-unit²; 0 = off "
               "(unbiased), negative = automatic: 1/(π r²) at r = 4.5% of the scene diagonal (27% for a bake with "
               "bias compensation, 9% for Keller's compensated frame)");
}

void declareBiasCompensationSwitch(MethodFlags& flags, bake::BakeOptions& b, const std::string& help) {
  flags.choice(
      "--bias-compensation",
      [&b](const std::string& value) {
        if (value != "on" && value != "off") throw OptionError("--bias-compensation '" + value + "': choose on or off");
        b.biasCompensation = value == "on";
      },
      b.biasCompensation ? "on" : "off", help);
}

void declareBiasCompensationFlags(MethodFlags& flags, bake::BakeOptions& b) {
  declareBiasCompensationSwitch(flags, b,
                                "on: after the warp, add to every layer the light the clamp removed there (Kollig & "
                                "Keller 2004), traced from the layer with Embree, and clamp at six times the distance; "
                                "off: the clamped store");
  flags.option("--bias-rays", b.biasRays,
               "bias compensation: points per layer in the first pass (a quarter in later passes), each with one "
               "cosine ray and one light sample; 4x on the bounces' level, where the default bake estimates it");
  flags.option("--bias-passes", b.biasPasses,
               "bias compensation: 1 reads the light of nearby surfaces from the clamped store; pass k adds what the "
               "light pass k-1 added causes in turn (the recursion, a step further each)");
}

int atlasSideFlag(int side) {
  if (side < lightmap::kMinAtlasTargetSize || side > lightmap::kMaxAtlasTargetSize)
    throw OptionError("--atlas " + std::to_string(side) + ": give an atlas side in [" +
                std::to_string(lightmap::kMinAtlasTargetSize) + ", " + std::to_string(lightmap::kMaxAtlasTargetSize) +
                "] texels");
  return side;
}

float texelDensityFlag(float density) {
  if (!(density > 0.0f) || !std::isfinite(density))
    throw OptionError("--texel-density " + std::to_string(density) + ": give texels per scene unit > 0");
  return density;
}

std::string listOfNames(std::span<const std::string_view> names) {
  std::string list;
  for (std::size_t k = 0; k < names.size(); ++k)
    list += std::string(k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + std::string(names[k]);
  return list;
}

CLI::ValidationError foreignFlagError(const CLI::App& command, const std::string& flag, std::string_view chosen,
                                      std::span<const std::string_view> readers) {
  return CLI::ValidationError(flag + " is not a setting of --method " + std::string(chosen) + "; --method " +
                              listOfNames(readers) + (readers.size() == 1 ? " reads" : " read") + " it (see ibrr " +
                              command.get_name() + " --help)");
}

CLI::Option* addSceneArgument(CLI::App& command, std::string& scene) {
  return command
      .add_option("SCENE", scene,
                  "scene: a .json manifest, a mesh file (OBJ, PLY, glTF, ...), or a built-in name (cornell, furnace)")
      ->required();
}

ReferenceSidecar readReferenceSidecar(const std::filesystem::path& reference) {
  std::filesystem::path settings = reference;
  settings.replace_extension(".json");
  std::error_code error;
  if (!std::filesystem::is_regular_file(settings, error)) return {};  // none (a FIFO would block)
  std::ifstream in(settings);
  if (!in) return {};
  try {
    const nlohmann::json json = nlohmann::json::parse(in);
    return {json.value("scene", std::string()), json.value("camera", std::string()), false};
  } catch (const nlohmann::json::exception&) {
    return {"", "", true};
  }
}

}  // namespace ibrr::app
