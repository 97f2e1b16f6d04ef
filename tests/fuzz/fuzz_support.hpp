#pragma once
// Shared by the libFuzzer targets in tests/fuzz: loaders that take a path get the input through a
// scratch folder of the process's own, inputs that stand for several files are split at a marker,
// and the lightmap, matrix and view-script files are read against one fixture scene.
#include "scene/scene.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

namespace ibrr::fuzz {

// Between the files of a multi-file input (an OBJ and its MTL, a .lightmap and its EXR, ...).
inline constexpr std::string_view kFileSeparator = "\n@@ibrr-fuzz-next-file@@\n";

// The input as text (the bytes as they are; JSON and OBJ readers see any byte).
inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Sets up a fuzz target's process: quiet logs (warnings would flood the run), the scratch folder.
void initialize();

// The process's scratch folder, under $TMPDIR or /dev/shm (made by initialize(), removed at exit).
const std::filesystem::path& scratchFolder();

// Writes `bytes` to scratchFolder()/name and returns its path. The file is rewritten in place, so it
// keeps its inode from one input to the next and the loaders' record of the files they read
// (util/input_file.hpp) does not grow over a run.
std::filesystem::path writeScratchFile(const std::string& name, std::string_view bytes);

// Copies a file of the source tree (e.g. "scenes/cornell.obj") into the scratch folder.
void copyIntoScratch(const std::string& sourceRelative);

// The text before the first `separator` and the text after it (empty when there is no separator).
std::pair<std::string_view, std::string_view> splitAt(std::string_view input,
                                                      std::string_view separator = kFileSeparator);

// The fixture scene, the shipped Cornell box (scenes/cornell.json), loaded once. The seeds of the
// lightmap and matrix targets carry its fingerprint (make_seeds.cpp).
const scene::Scene& fixtureScene();

}  // namespace ibrr::fuzz
