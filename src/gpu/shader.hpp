#pragma once
// Shader programs from GLSL files in shaders/, one file per stage named by its extension (.vert,
// .geom, .frag, .comp). A line `#include "name.glsl"` is replaced by that file (relative to the
// shader folder, each file at most once per stage). Compile and link errors are reported as
// ibrr::Error with the *file name and line* of the offending source, not the concatenated text.
#include "gpu/resources.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ibrr::gpu {

// The folder holding the GLSL files: $IBRR_SHADER_DIR if set, else the source tree's shaders/.
std::filesystem::path shaderFolder();

struct ShaderSource {
  std::string text;                    // with #line directives
  std::vector<std::string> fileNames;  // index = GLSL source-string number used in #line
};

// Reads a stage file and expands its includes. `defines` are inserted after #version as
// `#define NAME VALUE` lines ("NAME VALUE" or "NAME").
ShaderSource preprocessShader(const std::filesystem::path& file, const std::vector<std::string>& defines = {});

// Rewrites a driver's info log so that "0:12(5): error" (Mesa) or "0(12) : error" (NVIDIA)
// reads "gbuffer.frag:12: error".
std::string mapShaderLog(const std::string& log, const std::vector<std::string>& fileNames);

// Compiles and links the stages (file names relative to shaderFolder(), or absolute paths).
Program loadProgram(const std::vector<std::string>& stageFiles, const std::vector<std::string>& defines = {});

}  // namespace ibrr::gpu
