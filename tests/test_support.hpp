#pragma once
// Shared helpers for the GPU and application tests.
#include "gpu/context.hpp"
#include "scene/scene.hpp"
#include "util/image.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ibrr::test {

std::filesystem::path sourceDir();        // the repository root
std::filesystem::path sceneDir();         // <root>/scenes
std::filesystem::path sharedScenesDir();  // <root>/../shared/scenes (may not exist)
// A fresh, empty folder for one test's files under the build tree.
std::filesystem::path outputDir(const std::string& testName);

// The process-wide headless GL context (created on first use, current on this thread).
gpu::Context& glContext();

void writeText(const std::filesystem::path& path, const std::string& text);
std::string readText(const std::filesystem::path& path);

// The text as one shell word (single-quoted).
std::string shellQuote(const std::string& text);

struct CommandResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};
// Runs the built `ibrr` executable with the arguments (shell-quoted here), with extra environment
// variables ("NAME=value") if given.
CommandResult runIbrr(const std::vector<std::string>& arguments, const std::vector<std::string>& environment = {});

// Runs each command, which must fail with its flag named on stderr; nothing may be written to
// `folder` (the commands' outputs point there).
struct RefusedCommand {
  std::vector<std::string> arguments;
  std::string named;
};
void checkRefusedByName(const std::filesystem::path& folder, const std::vector<RefusedCommand>& commands);

// Starts `ibrr ARGUMENTS` (a shell word list) in `folder`, sends it SIGINT after `seconds` and
// checks a clean stop: exit code 130, "nothing was written" on stderr, and no file in `folder`
// but its logs (out.txt, err.txt, code.txt): no output, no temporary file.
void checkInterruptedCleanly(const std::filesystem::path& folder, const std::string& arguments, double seconds = 2.0);

// Compares images pixel by pixel: a pixel matches when every channel differs by at most
// `absoluteTolerance`. When the fraction of mismatching pixels exceeds `allowedMismatch`,
// writes <name>_actual/_expected/_difference (.png and .exr) to `folder` and returns false.
struct ImageComparison {
  bool passed = false;
  double mismatchFraction = 0.0;
  std::string report;
};
ImageComparison compareImages(const Image& actual, const Image& expected, float absoluteTolerance,
                              double allowedMismatch, const std::filesystem::path& folder, const std::string& name);

// A CPU ray caster for test expectations: the material property seen through each pixel centre
// (first hit of a brute-force ray–triangle test over every triangle), black where nothing is hit.
// Emission is one-sided: only where the ray meets the triangle's front face.
enum class CastProperty { Albedo, Emission };
Image rayCast(const scene::Scene& scene, const scene::Camera& camera, int width, int height,
                       CastProperty property);

}  // namespace ibrr::test
