// Shader programs from files: includes, defines, and errors that name the file and line.
#include "gpu/shader.hpp"
#include "shaders/interface.glsl"
#include "test_support.hpp"
#include "util/error.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

using namespace ibrr;
namespace fs = std::filesystem;

namespace {
// Points IBRR_SHADER_DIR at a folder for the duration of a test.
struct ShaderFolderOverride {
  explicit ShaderFolderOverride(const fs::path& folder) { setenv("IBRR_SHADER_DIR", folder.c_str(), 1); }
  ~ShaderFolderOverride() { unsetenv("IBRR_SHADER_DIR"); }
};
}  // namespace

namespace {
// The switches a stage file tests with #ifdef / #ifndef, less the value defines it gives a default
// (`#ifndef GROUP` followed by `#define GROUP 64`).
std::vector<std::string> shaderSwitches(const fs::path& file) {
  const std::string text = test::readText(file);
  std::vector<std::string> switches;
  std::istringstream lines(text);
  std::string line, previousName;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string directive, name;
    words >> directive >> name;
    if (directive == "#define" && name == previousName)
      std::erase(switches, name);  // a default value, not a switch
    else if ((directive == "#ifdef" || directive == "#ifndef") &&
             std::find(switches.begin(), switches.end(), name) == switches.end())
      switches.push_back(name);
    previousName = directive == "#ifndef" ? name : "";
  }
  return switches;
}
}  // namespace

TEST_CASE("every shipped shader program compiles and links, with and without its switches", "[gpu][shader]") {
  test::glContext();
  // Each compute stage is a program of its own; each fragment stage links with the vertex stage of its name,
  // else with scene.vert (the scene's geometry). Every stage file is linked at least once.
  std::vector<fs::path> stages;
  for (const fs::directory_entry& entry : fs::directory_iterator(gpu::shaderFolder()))
    if (entry.path().extension() != ".glsl") stages.push_back(entry.path());
  std::sort(stages.begin(), stages.end());
  std::set<std::string> linked;
  int programs = 0;
  for (const fs::path& stage : stages) {
    std::vector<std::string> files;
    if (stage.extension() == ".comp") files = {stage.filename().string()};
    if (stage.extension() == ".frag") {
      fs::path vertex = stage;
      vertex.replace_extension(".vert");
      files = {fs::exists(vertex) ? vertex.filename().string() : "scene.vert", stage.filename().string()};
    }
    if (files.empty()) continue;
    std::vector<std::string> switches;
    for (const std::string& file : files)
      for (const std::string& name : shaderSwitches(gpu::shaderFolder() / file)) switches.push_back(name);
    for (const std::vector<std::string>& defines : {std::vector<std::string>{}, switches}) {
      INFO(files.back() << (defines.empty() ? "" : " with its switches defined"));
      const gpu::Program program = gpu::loadProgram(files, defines);
      CHECK(glIsProgram(program.id()));
      ++programs;
      if (switches.empty()) break;
    }
    linked.insert(files.begin(), files.end());
  }
  for (const fs::path& stage : stages) {
    INFO(stage.filename().string() << " is a stage no program of this test links");
    CHECK(linked.count(stage.filename().string()) == 1);
  }
  CHECK(programs >= int(stages.size()) - 4);  // the vertex stages link with their fragment stages
}

namespace {
// A binding point or uniform location a linked program must use: a shader storage block's binding, a sampler's
// texture unit or a uniform's location, by its GLSL name.
struct InterfaceEntry {
  const char* name;
  GLenum kind;  // GL_SHADER_STORAGE_BLOCK, or GL_UNIFORM (location, or a sampler's unit)
  int value;    // shaders/interface.glsl's
  bool sampler = false;
};

// The value `program` gives `entry`, or -1 when the program lacks it (inactive or misnamed).
int programValue(GLuint program, const InterfaceEntry& entry) {
  if (entry.kind == GL_SHADER_STORAGE_BLOCK) {
    const GLuint index = glGetProgramResourceIndex(program, GL_SHADER_STORAGE_BLOCK, entry.name);
    if (index == GL_INVALID_INDEX) return -1;
    const GLenum property = GL_BUFFER_BINDING;
    GLint binding = -1;
    glGetProgramResourceiv(program, GL_SHADER_STORAGE_BLOCK, index, 1, &property, 1, nullptr, &binding);
    return binding;
  }
  const GLint location = glGetProgramResourceLocation(program, GL_UNIFORM, entry.name);
  if (!entry.sampler || location < 0) return location;
  GLint unit = -1;
  glGetUniformiv(program, location, &unit);
  return unit;
}
}  // namespace

TEST_CASE("the linked programs use the bindings and locations of shaders/interface.glsl, which C++ includes",
          "[gpu][shader]") {
  test::glContext();
  const std::vector<InterfaceEntry> warpBuffers = {
      {"LayerOffsets", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_OFFSETS},
      {"LayerPlanes", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_PLANES},
      {"LayerSums", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_SUMS},
      {"LayerStamps", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_STAMPS},
      {"TouchedLayers", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_TOUCHED},
      {"LayerTotals", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_TOTALS},
      {"Control", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_CONTROL},
      {"ExtraHeads", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_EXTRA_HEADS},
      {"ExtraNext", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_EXTRA_NEXT},
      {"Births", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_BIRTHS},
      {"Misses", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_MISSES}};
  std::vector<InterfaceEntry> insert = warpBuffers;
  insert.insert(insert.end(), {{"u_atlasPosition", GL_UNIFORM, IBRR_T_WARP_POSITION, true},
                               {"u_atlasNormal", GL_UNIFORM, IBRR_T_WARP_NORMAL, true},
                               {"u_centre", GL_UNIFORM, IBRR_U_WARP_CENTRE},
                               {"u_resolution", GL_UNIFORM, IBRR_U_WARP_RESOLUTION},
                               {"u_rows", GL_UNIFORM, IBRR_U_WARP_ROWS},
                               {"u_sideFaceRows", GL_UNIFORM, IBRR_U_WARP_SIDE_FACE_ROWS},
                               {"u_clamp", GL_UNIFORM, IBRR_U_WARP_CLAMP},
                               {"u_hemicube", GL_UNIFORM, IBRR_U_WARP_HEMICUBE},
                               {"u_origin", GL_UNIFORM, IBRR_U_WARP_ORIGIN},
                               {"u_invPixelSize", GL_UNIFORM, IBRR_U_WARP_INV_PIXEL_SIZE},
                               {"u_ldcResolution", GL_UNIFORM, IBRR_U_WARP_LDC_RESOLUTION},
                               {"u_epsDistance", GL_UNIFORM, IBRR_U_WARP_EPS_DISTANCE},
                               {"u_minCos", GL_UNIFORM, IBRR_U_WARP_MIN_COS},
                               {"u_gaussian", GL_UNIFORM, IBRR_U_WARP_GAUSSIAN},
                               {"u_minArea", GL_UNIFORM, IBRR_U_WARP_MIN_AREA},
                               {"kMinFootprintCos", GL_UNIFORM, IBRR_U_WARP_MIN_FOOTPRINT_COS},
                               {"kSplatCoverage", GL_UNIFORM, IBRR_U_WARP_SPLAT_COVERAGE},
                               {"kMaxHalfExtent", GL_UNIFORM, IBRR_U_WARP_MAX_HALF_EXTENT},
                               {"kGaussianCutoff2", GL_UNIFORM, IBRR_U_WARP_GAUSSIAN_CUTOFF2},
                               {"kEdgeSlack", GL_UNIFORM, IBRR_U_WARP_EDGE_SLACK},
                               {"u_missPass", GL_UNIFORM, IBRR_U_WARP_MISS_PASS},
                               {"kEdgeNormalCos", GL_UNIFORM, IBRR_U_WARP_EDGE_NORMAL_COS},
                               {"kEdgeMeetFootprints2", GL_UNIFORM, IBRR_U_WARP_EDGE_MEET_FOOTPRINTS2},
                               {"kMaxEdgeReach", GL_UNIFORM, IBRR_U_WARP_MAX_EDGE_REACH},
                               {"kEdgeSweep", GL_UNIFORM, IBRR_U_WARP_EDGE_SWEEP}});
  const std::vector<InterfaceEntry> flush = {{"LayerSums", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_SUMS},
                                             {"TouchedLayers", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_TOUCHED},
                                             {"LayerTotals", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_TOTALS},
                                             {"Control", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_CONTROL},
                                             {"u_power", GL_UNIFORM, IBRR_U_FLUSH_POWER},
                                             {"u_pixelArea", GL_UNIFORM, IBRR_U_FLUSH_PIXEL_AREA}};
  const std::vector<InterfaceEntry> scene = {
      {"u_objectToWorld", GL_UNIFORM, IBRR_U_OBJECT_TO_WORLD},
      {"u_normalToWorld", GL_UNIFORM, IBRR_U_NORMAL_TO_WORLD},
      {"u_viewProjection", GL_UNIFORM, IBRR_U_VIEW_PROJECTION},
      {"u_albedo", GL_UNIFORM, IBRR_U_ALBEDO},
      {"u_emission", GL_UNIFORM, IBRR_U_EMISSION},
      {"u_hasAlbedoTexture", GL_UNIFORM, IBRR_U_HAS_ALBEDO_TEXTURE},
      {"u_materialIndex", GL_UNIFORM, IBRR_U_MATERIAL_INDEX},
      {"u_albedoTexture", GL_UNIFORM, IBRR_T_ALBEDO, true}};
  std::vector<InterfaceEntry> gbuffer = scene, hemicube = scene;
  gbuffer.push_back({"u_eye", GL_UNIFORM, IBRR_U_GBUFFER_EYE});
  hemicube.insert(hemicube.end(), {{"u_centre", GL_UNIFORM, IBRR_U_HEMICUBE_CENTRE},
                                   {"u_axis", GL_UNIFORM, IBRR_U_HEMICUBE_AXIS},
                                   {"u_profile", GL_UNIFORM, IBRR_U_HEMICUBE_PROFILE},
                                   {"u_spotCos", GL_UNIFORM, IBRR_U_HEMICUBE_SPOT_COS}});
  const std::vector<InterfaceEntry> reconstruct = {
      {"LdcOffsets", GL_SHADER_STORAGE_BLOCK, IBRR_B_LDC_OFFSETS},
      {"LdcPlanes", GL_SHADER_STORAGE_BLOCK, IBRR_B_LDC_PLANES},
      {"LdcRadiosity", GL_SHADER_STORAGE_BLOCK, IBRR_B_LDC_RADIOSITY},
      {"u_ldcOrigin", GL_UNIFORM, IBRR_U_LDC_ORIGIN},
      {"u_ldcInvPixel", GL_UNIFORM, IBRR_U_LDC_INV_PIXEL},
      {"u_ldcResolution", GL_UNIFORM, IBRR_U_LDC_RESOLUTION},
      {"u_ldcEpsDistance", GL_UNIFORM, IBRR_U_LDC_EPS_DISTANCE},
      {"u_ldcMinCos", GL_UNIFORM, IBRR_U_LDC_MIN_COS},
      {"u_ldcFilter", GL_UNIFORM, IBRR_U_LDC_FILTER},
      {"u_ldcFilterRadius", GL_UNIFORM, IBRR_U_LDC_FILTER_RADIUS},
      {"u_position", GL_UNIFORM, IBRR_T_GBUFFER_POSITION, true},
      {"u_normal", GL_UNIFORM, IBRR_T_GBUFFER_NORMAL, true},
      {"u_albedo", GL_UNIFORM, IBRR_T_GBUFFER_ALBEDO, true},
      {"u_emission", GL_UNIFORM, IBRR_T_GBUFFER_EMISSION, true},
      {"u_output", GL_UNIFORM, IBRR_I_RECONSTRUCT_OUTPUT, true}};
  const std::vector<InterfaceEntry> keller = {
      {"u_position", GL_UNIFORM, IBRR_T_GBUFFER_POSITION, true},
      {"u_normal", GL_UNIFORM, IBRR_T_GBUFFER_NORMAL, true},
      {"u_albedo", GL_UNIFORM, IBRR_T_GBUFFER_ALBEDO, true},
      {"u_atlasPosition", GL_UNIFORM, IBRR_T_KELLER_ATLAS_POSITION, true},
      {"u_accumulation", GL_UNIFORM, IBRR_I_KELLER_ACCUMULATION, true},
      {"u_centre", GL_UNIFORM, IBRR_U_KELLER_CENTRE},
      {"u_axis", GL_UNIFORM, IBRR_U_KELLER_AXIS},
      {"u_profile", GL_UNIFORM, IBRR_U_KELLER_PROFILE},
      {"u_spotCos", GL_UNIFORM, IBRR_U_KELLER_SPOT_COS},
      {"u_power", GL_UNIFORM, IBRR_U_KELLER_POWER},
      {"u_clamp", GL_UNIFORM, IBRR_U_KELLER_CLAMP},
      {"u_faceCount", GL_UNIFORM, IBRR_U_KELLER_FACE_COUNT},
      {"u_resolution", GL_UNIFORM, IBRR_U_KELLER_RESOLUTION},
      {"u_biasScale", GL_UNIFORM, IBRR_U_KELLER_BIAS_SCALE},
      {"u_biasMin", GL_UNIFORM, IBRR_U_KELLER_BIAS_MIN},
      {"u_faceFirstRow[0]", GL_UNIFORM, IBRR_U_KELLER_FACE_FIRST_ROW},
      {"u_faceRows[0]", GL_UNIFORM, IBRR_U_KELLER_FACE_ROWS},
      {"u_faceViewProjection[0]", GL_UNIFORM, IBRR_U_KELLER_FACE_VIEW_PROJECTION}};
  const std::vector<InterfaceEntry> present = {
      {"u_radiance", GL_UNIFORM, IBRR_T_PRESENT_RADIANCE, true},
      {"u_viewportOrigin", GL_UNIFORM, IBRR_U_PRESENT_VIEWPORT_ORIGIN},
      {"u_viewportSize", GL_UNIFORM, IBRR_U_PRESENT_VIEWPORT_SIZE},
      {"u_exposureScale", GL_UNIFORM, IBRR_U_PRESENT_EXPOSURE_SCALE},
      {"u_curve", GL_UNIFORM, IBRR_U_PRESENT_CURVE}};
  const struct {
    std::vector<std::string> files;
    const std::vector<InterfaceEntry>& entries;
  } programs[] = {{{"ldc_insert.comp"}, insert},
                  {{"ldc_flush.comp"}, flush},
                  {{"scene.vert", "gbuffer.frag"}, gbuffer},
                  {{"scene.vert", "hemicube.frag"}, hemicube},
                  {{"ibrr_reconstruct.comp"}, reconstruct},
                  {{"keller_accumulate.comp"}, keller},
                  {{"viewer_display.vert", "viewer_display.frag"}, present}};
  int checked = 0;
  for (const auto& row : programs) {
    const gpu::Program program = gpu::loadProgram(row.files);
    for (const InterfaceEntry& entry : row.entries) {
      const int value = programValue(program.id(), entry);
      if (value < 0 && entry.kind == GL_UNIFORM) continue;  // inactive in this program (hemicube.frag reads no albedo)
      INFO(row.files.back() << ": " << entry.name << " is at " << value << " in the linked program, "
                            << entry.value << " in shaders/interface.glsl");
      CHECK(value == entry.value);
      ++checked;
    }
  }
  CHECK(checked >= 90);  // every buffer, sampler and image, and all but a few inactive uniforms (96 on llvmpipe)
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
