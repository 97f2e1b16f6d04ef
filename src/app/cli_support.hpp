#pragma once
// Helpers shared by the subcommands: option parsing for common types and scene loading with the
// standard messages.
#include "app/method_flags.hpp"
#include "bake/bake.hpp"
#include "scene/scene.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace ibrr::app {

// Parses "WxH" (e.g. 512x512); throws ibrr::Error naming the flag on a malformed value.
scene::ImageSize parseImageSize(const std::string& text, const std::string& flag = "--size");

// Resolves a scene argument (path or built-in name) and loads it, printing a one-line summary.
scene::Scene loadSceneArgument(const std::string& argument);

// A CLI11 check that a floating-point flag's value (each value, for a list) is a finite number within a
// float's range: CLI11 reads "nan" and "inf" as numbers, its range checks let NaN through, and 1e39 is
// finite as a double but infinite in a float flag.
const CLI::Validator& finiteNumber();

// The light-path and hemicube flags of an IBRR bake, Keller's frame and the viewer's bake (--paths, --seed,
// --max-bounces, --hemicube, --indirect-hemicube, --clamp), bound to `b`.
void declareLightPathFlags(MethodFlags& flags, bake::BakeOptions& b);
// --bias-compensation on|off, --bias-rays, --bias-passes (bake/bias_compensation.hpp).
void declareBiasCompensationFlags(MethodFlags& flags, bake::BakeOptions& b);
// --bias-compensation on|off alone, with its help text (render --method keller).
void declareBiasCompensationSwitch(MethodFlags& flags, bake::BakeOptions& b, const std::string& help);

// What the STEM.json that `ibrr reference` writes beside STEM.exr says of the picture: its scene and camera.
struct ReferenceSidecar {
  std::string scene;       // "" when there is no sidecar, or it names none
  std::string camera;      // likewise
  bool malformed = false;  // a STEM.json that is not that JSON
};
// Reads the sidecar of `reference` (its extension replaced by .json); none (or a FIFO, which would block)
// gives empty names.
ReferenceSidecar readReferenceSidecar(const std::filesystem::path& reference);

// --atlas S and --texel-density D of the commands that build a lightmap atlas (bake, export): the value, or
// ibrr::OptionError naming the flag when it is out of range (lightmap::kMinAtlasTargetSize..kMaxAtlasTargetSize; D > 0).
int atlasSideFlag(int side);
float texelDensityFlag(float density);

// "a, b or c".
std::string listOfNames(std::span<const std::string_view> names);
// The refusal of `flag` given with --method `chosen`, which the methods `readers` read.
CLI::ValidationError foreignFlagError(const CLI::App& command, const std::string& flag, std::string_view chosen,
                                      std::span<const std::string_view> readers);

// Adds the SCENE positional argument (required) with the standard help text.
CLI::Option* addSceneArgument(CLI::App& command, std::string& scene);

}  // namespace ibrr::app
