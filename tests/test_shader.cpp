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
  GLenum kind;  // GL_SHADER_STORAGE_BLOCK, GL_UNIFORM (location, or a sampler's unit) or GL_PROGRAM_INPUT (location)
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
  if (entry.kind == GL_PROGRAM_INPUT) return glGetProgramResourceLocation(program, GL_PROGRAM_INPUT, entry.name);
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
      {"Misses", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_MISSES},
      {"WarpHemicubes", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_HEMICUBES},
      {"MissHeads", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_MISS_HEADS},
      {"MissedPixels", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_MISSED_PIXELS}};
  std::vector<InterfaceEntry> open = warpBuffers;
  open.insert(open.end(), {{"u_epsDistance", GL_UNIFORM, IBRR_U_OPEN_EPS_DISTANCE},
                           {"u_minCos", GL_UNIFORM, IBRR_U_OPEN_MIN_COS}});
  std::vector<InterfaceEntry> insert = warpBuffers;
  insert.insert(insert.end(), {{"u_atlasPosition", GL_UNIFORM, IBRR_T_WARP_POSITION, true},
                               {"u_atlasNormal", GL_UNIFORM, IBRR_T_WARP_NORMAL, true},
                               {"u_firstHemicube", GL_UNIFORM, IBRR_U_WARP_FIRST_HEMICUBE},
                               {"u_group", GL_UNIFORM, IBRR_U_WARP_GROUP},
                               {"u_clamp", GL_UNIFORM, IBRR_U_WARP_CLAMP},
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
                                             {"WarpHemicubes", GL_SHADER_STORAGE_BLOCK, IBRR_B_WARP_HEMICUBES},
                                             {"u_firstHemicube", GL_UNIFORM, IBRR_U_FLUSH_FIRST_HEMICUBE},
                                             {"u_hemicubes", GL_UNIFORM, IBRR_U_FLUSH_HEMICUBES},
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
  hemicube.insert(hemicube.end(), {{"a_view", GL_PROGRAM_INPUT, IBRR_A_VIEW},
                                   {"HemicubeFaces", GL_SHADER_STORAGE_BLOCK, IBRR_B_HEMICUBE_FACES},
                                   {"HemicubeSources", GL_SHADER_STORAGE_BLOCK, IBRR_B_HEMICUBE_SOURCES}});
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
  // The lightmap solvers' programs.
  const std::vector<InterfaceEntry> patches = {
      {"TriangleDepth", GL_SHADER_STORAGE_BLOCK, IBRR_B_PATCHES_TRIANGLE_DEPTH},
      {"u_atlasSize", GL_UNIFORM, IBRR_U_PATCHES_ATLAS_SIZE}};
  std::vector<InterfaceEntry> lightmapDisplay = scene;
  lightmapDisplay.insert(lightmapDisplay.end(), {{"u_incidentRadiance", GL_UNIFORM, IBRR_T_LIGHTMAP_INCIDENT, true},
                                                 {"u_atlasSize", GL_UNIFORM, IBRR_U_LIGHTMAP_ATLAS_SIZE}});
  const std::vector<InterfaceEntry> gather = {{"FaceMatrices", GL_SHADER_STORAGE_BLOCK, IBRR_B_GATHER_FACE_MATRICES},
                                              {"u_firstEntry", GL_UNIFORM, IBRR_U_GATHER_FIRST_ENTRY},
                                              {"u_seen", GL_UNIFORM, IBRR_T_GATHER_SEEN, true}};
  const std::vector<InterfaceEntry> gatherCull = {
      {"FaceMatrices", GL_SHADER_STORAGE_BLOCK, IBRR_B_GATHER_FACE_MATRICES},
      {"Chunks", GL_SHADER_STORAGE_BLOCK, IBRR_B_GATHER_CHUNKS},
      {"Commands", GL_SHADER_STORAGE_BLOCK, IBRR_B_GATHER_COMMANDS},
      {"u_firstEntry", GL_UNIFORM, IBRR_U_GATHER_FIRST_ENTRY},
      {"u_chunks", GL_UNIFORM, IBRR_U_GATHER_CHUNKS},
      {"u_slots", GL_UNIFORM, IBRR_U_GATHER_SLOTS}};
  const std::vector<InterfaceEntry> reduce = {{"Multiplier", GL_SHADER_STORAGE_BLOCK, IBRR_B_REDUCE_MULTIPLIER},
                                              {"Patches", GL_SHADER_STORAGE_BLOCK, IBRR_B_REDUCE_PATCHES},
                                              {"u_hemicubes", GL_UNIFORM, IBRR_T_REDUCE_HEMICUBES, true},
                                              {"u_base", GL_UNIFORM, IBRR_T_REDUCE_BASE, true},
                                              {"u_output", GL_UNIFORM, IBRR_I_REDUCE_OUTPUT, true},
                                              {"u_firstEntry", GL_UNIFORM, IBRR_U_REDUCE_FIRST_ENTRY},
                                              {"u_resolution", GL_UNIFORM, IBRR_U_REDUCE_RESOLUTION}};
  const std::vector<InterfaceEntry> shootSelect = {
      {"Receivers", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RECEIVERS},
      {"Residual", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RESIDUAL},
      {"ClusterFirst", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_CLUSTER_FIRST},
      {"Partials", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_PARTIALS},
      {"Result", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RESULT},
      {"ClusterTexels", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_CLUSTER_TEXELS},
      {"ClusterResidual", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_CLUSTER_RESIDUAL},
      {"u_count", GL_UNIFORM, IBRR_U_SHOOT_SELECT_COUNT}};
  const std::vector<InterfaceEntry> shootUpdate = {
      {"Receivers", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RECEIVERS},
      {"Residual", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RESIDUAL},
      {"ClusterFirst", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_CLUSTER_FIRST},
      {"Result", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RESULT},
      {"ClusterTexels", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_CLUSTER_TEXELS},
      {"ClusterResidual", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_CLUSTER_RESIDUAL},
      {"Radiance", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RADIANCE},
      {"Axes", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_AXES},
      {"LastShot", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_LAST_SHOT},
      {"Subset", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_SUBSET},
      {"u_hemisphere", GL_UNIFORM, IBRR_T_SHOOT_HEMISPHERE, true},
      {"u_shooter", GL_UNIFORM, IBRR_U_SHOOT_SHOOTER},
      {"u_toShooter", GL_UNIFORM, IBRR_U_SHOOT_TO_SHOOTER},
      {"u_count", GL_UNIFORM, IBRR_U_SHOOT_COUNT},
      {"u_area", GL_UNIFORM, IBRR_U_SHOOT_AREA},
      {"u_depthEpsilon", GL_UNIFORM, IBRR_U_SHOOT_DEPTH_EPSILON},
      {"u_nearRadius", GL_UNIFORM, IBRR_U_SHOOT_NEAR_RADIUS}};
  const std::vector<InterfaceEntry> shootZero = {
      {"Residual", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RESIDUAL},
      {"ClusterFirst", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_CLUSTER_FIRST},
      {"Result", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_RESULT},
      {"ClusterTexels", GL_SHADER_STORAGE_BLOCK, IBRR_B_SHOOT_CLUSTER_TEXELS}};
  const std::vector<InterfaceEntry> hemisphere = {{"u_shooter", GL_UNIFORM, IBRR_U_HEMISPHERE_SHOOTER},
                                                  {"u_toShooter", GL_UNIFORM, IBRR_U_HEMISPHERE_TO_SHOOTER},
                                                  {"u_nearFar", GL_UNIFORM, IBRR_U_HEMISPHERE_NEAR_FAR}};
  const std::vector<InterfaceEntry> stochasticPower = {
      {"Receivers", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_RECEIVERS},
      {"Source", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_RADIANCE},
      {"Pyramid", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_PYRAMID},
      {"AtlasTexel", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_ATLAS_TEXEL},
      {"u_count", GL_UNIFORM, IBRR_U_STOCHASTIC_POWER_COUNT}};
  const std::vector<InterfaceEntry> stochasticPyramid = {
      {"Pyramid", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_PYRAMID},
      {"u_input", GL_UNIFORM, IBRR_U_STOCHASTIC_PYRAMID_INPUT},
      {"u_output", GL_UNIFORM, IBRR_U_STOCHASTIC_PYRAMID_OUTPUT}};
  const std::vector<InterfaceEntry> stochasticSelect = {
      {"Receivers", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_RECEIVERS},
      {"Source", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_RADIANCE},
      {"Pyramid", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_PYRAMID},
      {"CompactOf", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_COMPACT_OF},
      {"Levels", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_LEVELS},
      {"Random", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_RANDOM},
      {"Shots", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_SHOTS},
      {"ClusterFirst", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_CLUSTER_FIRST},
      {"ClusterTexels", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_CLUSTER_TEXELS},
      {"MemberShots", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_MEMBER_SHOTS},
      {"u_shooters", GL_UNIFORM, IBRR_U_STOCHASTIC_SELECT_SHOOTERS},
      {"u_levels", GL_UNIFORM, IBRR_U_STOCHASTIC_SELECT_LEVELS},
      {"u_maxMembers", GL_UNIFORM, IBRR_U_STOCHASTIC_SELECT_MAX_MEMBERS}};
  const std::vector<InterfaceEntry> stochasticUpdate = {
      {"Receivers", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_RECEIVERS},
      {"Emission", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_EMISSION},
      {"Axes", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_AXES},
      {"Radiance", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_RADIANCE},
      {"Shots", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_SHOTS},
      {"ShotFrames", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_FRAMES},
      {"Iterate", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_ITERATE},
      {"ClusterTexels", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_CLUSTER_TEXELS},
      {"MemberShots", GL_SHADER_STORAGE_BLOCK, IBRR_B_STOCHASTIC_MEMBER_SHOTS},
      {"u_hemisphere", GL_UNIFORM, IBRR_T_STOCHASTIC_HEMISPHERE, true},
      {"u_count", GL_UNIFORM, IBRR_U_STOCHASTIC_COUNT},
      {"u_shooters", GL_UNIFORM, IBRR_U_STOCHASTIC_SHOOTERS},
      {"u_iteration", GL_UNIFORM, IBRR_U_STOCHASTIC_ITERATION},
      {"u_depthEpsilon", GL_UNIFORM, IBRR_U_STOCHASTIC_DEPTH_EPSILON},
      {"u_nearFieldSides", GL_UNIFORM, IBRR_U_STOCHASTIC_NEAR_FIELD_SIDES},
      {"u_storeIterate", GL_UNIFORM, IBRR_U_STOCHASTIC_STORE_ITERATE},
      {"u_maxMembers", GL_UNIFORM, IBRR_U_STOCHASTIC_MAX_MEMBERS}};
  const std::vector<InterfaceEntry> matrixProduct = {{"Input", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_INPUT},
                                                     {"Output", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_OUTPUT},
                                                     {"Accumulate", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_ACCUMULATE},
                                                     {"u_count", GL_UNIFORM, IBRR_U_MATRIX_COUNT},
                                                     {"u_accumulate", GL_UNIFORM, IBRR_U_MATRIX_ACCUMULATE}};
  std::vector<InterfaceEntry> matrixDense = matrixProduct, matrixBc1 = matrixProduct;
  matrixDense.insert(matrixDense.end(), {{"Matrix0", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_DENSE},
                                         {"Matrix1", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_DENSE + 1},
                                         {"Matrix2", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_DENSE + 2}});
  matrixBc1.insert(matrixBc1.end(), {{"RowOrder", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_ROW_ORDER},
                                     {"ColumnOrder", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_COLUMN_ORDER},
                                     {"RowScale", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_ROW_SCALE},
                                     {"ExactStart", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_EXACT_START},
                                     {"ExactColumn", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_EXACT_COLUMN},
                                     {"ExactValue", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_EXACT_VALUE},
                                     {"u_padded", GL_UNIFORM, IBRR_U_MATRIX_PADDED},
                                     {"u_logRange", GL_UNIFORM, IBRR_U_MATRIX_LOG_RANGE}});
  std::vector<InterfaceEntry> bc1Software = matrixBc1, bc1Hardware = matrixBc1;
  bc1Software.push_back({"Blocks", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_BLOCKS});
  bc1Hardware.push_back({"u_blocks", GL_UNIFORM, IBRR_T_MATRIX_BLOCKS, true});
  const std::vector<InterfaceEntry> matrixTransfer = {
      {"Input", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_INPUT},
      {"Accumulate", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_ACCUMULATE},
      {"PatchTexel", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_PATCH_TEXEL},
      {"Emission", GL_SHADER_STORAGE_BLOCK, IBRR_B_MATRIX_EMISSION},
      {"u_atlas", GL_UNIFORM, IBRR_I_MATRIX_ATLAS, true},
      {"u_count", GL_UNIFORM, IBRR_U_MATRIX_COUNT},
      {"u_width", GL_UNIFORM, IBRR_U_MATRIX_WIDTH},
      {"u_directWeight", GL_UNIFORM, IBRR_U_MATRIX_DIRECT_WEIGHT}};
  // A row's defines switch on the declarations that its plain program lacks.
  const struct {
    std::vector<std::string> files;
    const std::vector<InterfaceEntry>& entries;
    std::vector<std::string> defines = {};
  } programs[] = {{{"ldc_insert.comp"}, insert},
                  {{"ldc_open.comp"}, open},
                  {{"ldc_flush.comp"}, flush},
                  {{"scene.vert", "gbuffer.frag"}, gbuffer},
                  {{"hemicube.vert", "hemicube.frag"}, hemicube},
                  {{"ibrr_reconstruct.comp"}, reconstruct},
                  {{"keller_accumulate.comp"}, keller},
                  {{"viewer_display.vert", "viewer_display.frag"}, present},
                  {{"lightmap_patches.vert", "lightmap_patches.frag"}, patches},
                  {{"lightmap_display.vert", "lightmap_display.frag"}, lightmapDisplay},
                  {{"lightmap_gather.vert", "lightmap_gather.frag"}, gather},
                  {{"lightmap_gather_cull.comp"}, gatherCull},
                  {{"lightmap_reduce.comp"}, reduce},
                  {{"lightmap_shoot_select.comp"}, shootSelect},
                  {{"lightmap_shoot_update.comp"}, shootUpdate, {"RECORD_SHOT", "SUBSET"}},
                  {{"lightmap_shoot_zero.comp"}, shootZero},
                  {{"lightmap_shoot_hemisphere.vert", "lightmap_shoot_hemisphere.frag"}, hemisphere},
                  {{"lightmap_stochastic_power.comp"}, stochasticPower},
                  {{"lightmap_stochastic_pyramid.comp"}, stochasticPyramid},
                  {{"lightmap_stochastic_select.comp"}, stochasticSelect},
                  {{"lightmap_stochastic_update.comp"}, stochasticUpdate},
                  {{"lightmap_matrix_dense.comp"}, matrixDense},
                  {{"lightmap_matrix_bc1.comp"}, bc1Software},
                  {{"lightmap_matrix_bc1.comp"}, bc1Hardware, {"HARDWARE_BC1"}},
                  {{"lightmap_matrix_transfer.comp"}, matrixTransfer}};
  int checked = 0;
  std::set<std::string> covered;
  for (const auto& row : programs) {
    const gpu::Program program = gpu::loadProgram(row.files, row.defines);
    covered.insert(row.files.begin(), row.files.end());
    std::string label = row.files.back();
    for (const std::string& define : row.defines) label += " -D" + define;
    for (const InterfaceEntry& entry : row.entries) {
      const int value = programValue(program.id(), entry);
      if (value < 0 && entry.kind == GL_UNIFORM) continue;  // inactive in this program (hemicube.frag reads no albedo)
      INFO(label << ": " << entry.name << " is at " << value << " in the linked program, " << entry.value
                 << " in shaders/interface.glsl");
      CHECK(value == entry.value);
      ++checked;
    }
  }
  CHECK(checked >= 225);  // every buffer, sampler and image, and all but a few inactive uniforms (233 on llvmpipe)
  // Every stage file is in a row: a new program cannot go unchecked.
  for (const fs::directory_entry& file : fs::directory_iterator(gpu::shaderFolder())) {
    INFO(file.path().filename().string() << " is a stage no row of this test checks");
    CHECK((file.path().extension() == ".glsl" || covered.count(file.path().filename().string()) == 1));
  }
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
