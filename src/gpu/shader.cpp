#include "gpu/shader.hpp"

#include "util/error.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#ifndef IBRR_SHADER_DIR
#define IBRR_SHADER_DIR "shaders"
#endif

namespace ibrr::gpu {

namespace fs = std::filesystem;

fs::path shaderFolder() {
  if (const char* overridden = std::getenv("IBRR_SHADER_DIR")) return overridden;
  return IBRR_SHADER_DIR;
}

namespace {

fs::path resolveShaderPath(const std::string& name) {
  const fs::path path(name);
  return path.is_absolute() ? path : shaderFolder() / path;
}

std::string readText(const fs::path& path, const std::string& requestedBy) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path.string() + ": shader file not found" +
                (requestedBy.empty() ? "" : " (included by " + requestedBy + ")") +
                "; set IBRR_SHADER_DIR to the project's shaders/ folder");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Appends `file` to out, expanding #include lines; each file is included at most once per stage.
void expand(const fs::path& file, const std::string& requestedBy, ShaderSource& out, std::set<std::string>& included,
            bool isStage, const std::vector<std::string>& defines) {
  const int fileIndex = int(out.fileNames.size());
  out.fileNames.push_back(file.filename().string());
  const std::string text = readText(file, requestedBy);
  std::istringstream lines(text);
  std::string line;
  int lineNumber = 0;
  bool versionSeen = false;
  static const std::regex includePattern(R"(^\s*#\s*include\s+\"([^\"]+)\"\s*$)");
  if (!isStage) out.text += "#line 1 " + std::to_string(fileIndex) + "\n";
  while (std::getline(lines, line)) {
    ++lineNumber;
    std::smatch match;
    if (isStage && !versionSeen && line.rfind("#version", 0) == 0) {
      // #version must come first; the defines and the file's own numbering follow it.
      versionSeen = true;
      out.text += line + "\n";
      for (const std::string& define : defines) out.text += "#define " + define + "\n";
      out.text += "#line " + std::to_string(lineNumber + 1) + " " + std::to_string(fileIndex) + "\n";
    } else if (std::regex_match(line, match, includePattern)) {
      const fs::path includePath = shaderFolder() / match[1].str();
      const std::string key = fs::weakly_canonical(includePath).string();
      if (!included.count(key)) {
        included.insert(key);
        expand(includePath, file.filename().string() + ":" + std::to_string(lineNumber), out, included, false, defines);
      }
      out.text += "#line " + std::to_string(lineNumber + 1) + " " + std::to_string(fileIndex) + "\n";
    } else {
      out.text += line + "\n";
    }
  }
  if (isStage && !versionSeen) throw Error(file.string() + ":1: a shader stage must start with '#version 450 core'");
}

GLenum stageFor(const fs::path& file) {
  const std::string extension = file.extension().string();
  if (extension == ".vert") return GL_VERTEX_SHADER;
  if (extension == ".geom") return GL_GEOMETRY_SHADER;
  if (extension == ".frag") return GL_FRAGMENT_SHADER;
  if (extension == ".comp") return GL_COMPUTE_SHADER;
  if (extension == ".tesc") return GL_TESS_CONTROL_SHADER;
  if (extension == ".tese") return GL_TESS_EVALUATION_SHADER;
  throw Error(file.string() + ": unknown shader stage (use .vert, .geom, .frag, .comp, .tesc, .tese)");
}

std::string infoLog(GLuint object, bool isProgram) {
  GLint length = 0;
  isProgram ? glGetProgramiv(object, GL_INFO_LOG_LENGTH, &length) : glGetShaderiv(object, GL_INFO_LOG_LENGTH, &length);
  std::string log(std::size_t(std::max(length, 1)), '\0');
  isProgram ? glGetProgramInfoLog(object, length, nullptr, log.data())
            : glGetShaderInfoLog(object, length, nullptr, log.data());
  log.resize(std::strlen(log.c_str()));
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log;
}

}  // namespace

ShaderSource preprocessShader(const fs::path& file, const std::vector<std::string>& defines) {
  ShaderSource source;
  std::set<std::string> included;
  expand(file, "", source, included, true, defines);
  return source;
}

std::string mapShaderLog(const std::string& log, const std::vector<std::string>& fileNames) {
  // Mesa: "0:12(5): error: ..."; NVIDIA: "0(12) : error C1008: ..."
  static const std::regex mesa(R"((\d+):(\d+)\((\d+)\):)");
  static const std::regex nvidia(R"((\d+)\((\d+)\) :)");
  std::string result;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    auto name = [&](const std::string& index) {
      const std::size_t i = std::stoul(index);
      return i < fileNames.size() ? fileNames[i] : "source " + index;
    };
    if (std::regex_search(line, match, mesa) && match.position(0) == 0)
      line = name(match[1]) + ":" + match[2].str() + ":" + match[3].str() + ":" + match.suffix().str();
    else if (std::regex_search(line, match, nvidia) && match.position(0) == 0)
      line = name(match[1]) + ":" + match[2].str() + ":" + match.suffix().str();
    result += (result.empty() ? "" : "\n") + line;
  }
  return result;
}

Program loadProgram(const std::vector<std::string>& stageFiles, const std::vector<std::string>& defines) {
  Program program(glCreateProgram());
  std::vector<Shader> shaders;
  for (const std::string& name : stageFiles) {
    const fs::path file = resolveShaderPath(name);
    const GLenum stage = stageFor(file);
    const ShaderSource source = preprocessShader(file, defines);
    Shader shader(glCreateShader(stage));
    const char* text = source.text.c_str();
    glShaderSource(shader.id(), 1, &text, nullptr);
    glCompileShader(shader.id());
    GLint compiled = GL_FALSE;
    glGetShaderiv(shader.id(), GL_COMPILE_STATUS, &compiled);
    if (!compiled)
      throw Error("shader compile error in " + file.string() + ":\n" +
                  mapShaderLog(infoLog(shader.id(), false), source.fileNames));
    glAttachShader(program.id(), shader.id());
    shaders.push_back(std::move(shader));
  }
  glLinkProgram(program.id());
  GLint linked = GL_FALSE;
  glGetProgramiv(program.id(), GL_LINK_STATUS, &linked);
  std::string names;
  for (const std::string& name : stageFiles) names += (names.empty() ? "" : " + ") + name;
  if (!linked) throw Error("shader link error in " + names + ":\n" + infoLog(program.id(), true));
  for (const Shader& shader : shaders) glDetachShader(program.id(), shader.id());
  return program;
}

}  // namespace ibrr::gpu
