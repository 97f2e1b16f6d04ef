// Shader programs from files: includes, defines, and errors that name the file and line.
#include "gpu/shader.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace ibrr;
namespace fs = std::filesystem;

namespace {
// Points IBRR_SHADER_DIR at a folder for the duration of a test.
struct ShaderFolderOverride {
  explicit ShaderFolderOverride(const fs::path& folder) { setenv("IBRR_SHADER_DIR", folder.c_str(), 1); }
  ~ShaderFolderOverride() { unsetenv("IBRR_SHADER_DIR"); }
};
}  // namespace

TEST_CASE("every shipped shader program compiles and links", "[gpu][shader]") {
  test::glContext();
  const gpu::Program gbuffer = gpu::loadProgram({"scene.vert", "gbuffer.frag"});
  CHECK(glIsProgram(gbuffer.id()));
}

TEST_CASE("a compile error names the included file and its line", "[gpu][shader]") {
  test::glContext();
  const fs::path folder = test::outputDir("shader_error");
  test::writeText(folder / "common.glsl", "// helper\nfloat helper(float x) {\n  return x * undefined_symbol;\n}\n");
  test::writeText(
      folder / "broken.frag",
      "#version 450 core\n#include \"common.glsl\"\nout vec4 o_color;\nvoid main() { o_color = vec4(helper(1.0)); }\n");
  ShaderFolderOverride override(folder);
  try {
    (void)gpu::loadProgram({"broken.frag"});
    FAIL("a broken shader compiled");
  } catch (const Error& error) {
    const std::string message = error.what();
    INFO(message);
    CHECK(message.find("broken.frag") != std::string::npos);
    CHECK(message.find("common.glsl:3:") != std::string::npos);
  }
}

TEST_CASE("a compile error in the stage file itself names its line", "[gpu][shader]") {
  test::glContext();
  const fs::path folder = test::outputDir("shader_error_stage");
  test::writeText(folder / "bad.frag",
                  "#version 450 core\nout vec4 o_color;\nvoid main() {\n  o_color = vec3(1.0)\n}\n");
  ShaderFolderOverride override(folder);
  try {
    (void)gpu::loadProgram({"bad.frag"});
    FAIL("a broken shader compiled");
  } catch (const Error& error) {
    const std::string message = error.what();
    INFO(message);
    // The missing semicolon is reported on line 4 or 5 depending on the compiler.
    CHECK((message.find("bad.frag:4:") != std::string::npos || message.find("bad.frag:5:") != std::string::npos));
  }
}

TEST_CASE("log lines of Mesa and NVIDIA compilers are mapped to file names", "[shader]") {
  const std::vector<std::string> files{"main.frag", "lib.glsl"};
  CHECK(gpu::mapShaderLog("1:7(12): error: `x' undeclared", files) == "lib.glsl:7:12: error: `x' undeclared");
  CHECK(gpu::mapShaderLog("0(3) : error C1008: undefined variable", files) ==
        "main.frag:3: error C1008: undefined variable");
}

TEST_CASE("defines follow #version and line numbers stay those of the file", "[shader]") {
  const fs::path folder = test::outputDir("shader_defines");
  test::writeText(folder / "a.comp", "#version 450 core\nlayout(local_size_x = 1) in;\nvoid main() {}\n");
  ShaderFolderOverride override(folder);
  const gpu::ShaderSource source = gpu::preprocessShader(folder / "a.comp", {"TILE 8"});
  CHECK(source.text.rfind("#version 450 core\n#define TILE 8\n#line 2 0\n", 0) == 0);
  CHECK(source.fileNames == std::vector<std::string>{"a.comp"});
  test::writeText(folder / "missing.frag", "#version 450 core\n#include \"nowhere.glsl\"\n");
  CHECK_THROWS_WITH(gpu::preprocessShader(folder / "missing.frag"),
                    Catch::Contains("nowhere.glsl") && Catch::Contains("missing.frag:2"));
}
