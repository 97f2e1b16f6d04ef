// The display of any solver's lightmap (`ibrr render --lightmap FILE`), or of a form-factor matrix relit with its
// lights moved (`--matrix FILE --move-light N:DX,DY,DZ`, lightmap/matrix.hpp) without recomputing the matrix: a row
// of the method table of its own, which the four lightmap solvers' results and compare entries are shown with.
#include "app/cli_support.hpp"
#include "app/methods.hpp"
#include "lightmap/lightmap_file.hpp"
#include "lightmap/matrix.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

namespace ibrr::app {

const display::RenderMethod kLightmapDisplay{
    "lightmap", "a solved texel lightmap (--lightmap), sampled bilinearly after dilation", false, true, false,
    display::makeLightmapPass};

namespace {

// The relit lightmap's summary line: the matrix, the lights moved and the relight's timing.
void printRelightSummary(const std::string& matrixFile, const lightmap::MatrixSolution& solution,
                         lightmap::MatrixStorage storage, std::span<const glm::vec3> lightOffsets,
                         const lightmap::RelightTiming& timing) {
  std::string moved;
  for (std::size_t l = 0; l < lightOffsets.size(); ++l)
    if (lightOffsets[l] != glm::vec3(0.0f)) {
      char text[96];
      std::snprintf(text, sizeof text, "%s%zu by (%g, %g, %g)", moved.empty() ? "" : ", ", l,
                    double(lightOffsets[l].x), double(lightOffsets[l].y), double(lightOffsets[l].z));
      moved += text;
    }
  std::printf(
      "relit from %s (%zu patches, k = %d, %s) without recomputing it; lights moved: %s\n"
      "relight: %.2f ms (emission vector %.2f ms, GPU product %.2f ms, transfer %.2f ms)\n",
      matrixFile.c_str(), solution.size(), solution.bounces, lightmap::matrixStorageName(storage),
      moved.empty() ? "none" : moved.c_str(), timing.directMs + timing.productMs + timing.transferMs,
      timing.directMs, timing.productMs, timing.transferMs);
}

// What `ibrr render --method lightmap` reads: a lightmap file, or a saved matrix and the light moves to relight.
class LightmapRenderInputs final : public RenderInputs {
public:
  void declareFlags(MethodFlags& flags) override {
    flags.option("--lightmap", m_lightmapFile,
                 "solved texel lightmap (.lightmap, from 'ibrr bake --method gather, progressive, stochastic or "
                 "matrix'); implies --method lightmap");
    flags.option("--matrix", m_matrixFile,
                 "saved form-factor matrix (from 'ibrr bake --method matrix --save-matrix FILE'): relight it (with "
                 "--move-light) and render the lightmap, without recomputing the matrix");
    flags.list("--move-light", m_moves,
               "with --matrix: translate light N by DX,DY,DZ scene units (N:DX,DY,DZ, repeatable; lights are numbered "
               "as 'ibrr bake --method matrix' lists them: surface lights, then point, then spot)");
  }
  void check(const MethodFlags&) const override {
    const bool relit = !m_matrixFile.empty();
    if (relit && !m_lightmapFile.empty())
      throw OptionError("--matrix relights a lightmap; give --matrix FILE or --lightmap FILE, not both");
    if (!m_moves.empty() && !relit)
      throw OptionError(
          "--move-light needs --matrix FILE (make one with 'ibrr bake SCENE --method matrix --save-matrix FILE -o "
          "X.lightmap')");
    if (m_lightmapFile.empty() && !relit)
      throw OptionError(
          "--method lightmap needs a lightmap: --lightmap FILE (make one with 'ibrr bake SCENE --method gather -o "
          "FILE.lightmap')");
  }
  void load(const scene::Scene& scene, display::RenderSettings& settings) override {
    if (m_matrixFile.empty()) {
      m_lightmap = lightmap::loadLightmap(m_lightmapFile, scene, &m_atlas);  // refuses another scene's
      settings.lightmap = &m_lightmap;
      settings.lightmapAtlas = &m_atlas;
      return;
    }
    m_solution = std::make_shared<lightmap::MatrixSolution>(lightmap::loadMatrix(m_matrixFile, scene));
    m_offsets = lightmap::parseLightMoves(m_moves, lightmap::matrixLights(scene));
    if (m_solution->direct == lightmap::MatrixDirect::Matrix && !m_moves.empty())
      throw Error("--move-light: " + m_matrixFile +
                  " was computed with --direct matrix, where the emitters are patches and cannot move; bake it with "
                  "--direct rays");
  }
  const scene::Scene* prepareOnGpu(const scene::Scene& scene, display::RenderSettings& settings) override;
  void printSummary(const display::RenderOutput&) const override {
    if (m_solution) printRelightSummary(m_matrixFile, *m_solution, m_storage, m_offsets, m_timing);
  }

private:
  std::string m_lightmapFile, m_matrixFile;
  std::vector<std::string> m_moves;
  lightmap::Lightmap m_lightmap;
  lightmap::LightmapAtlas m_atlas;
  lightmap::PatchList m_patches;
  std::shared_ptr<lightmap::MatrixSolution> m_solution;
  std::vector<glm::vec3> m_offsets;
  lightmap::RelightTiming m_timing;
  lightmap::MatrixStorage m_storage = lightmap::MatrixStorage::Dense;
  std::optional<scene::Scene> m_movedScene;  // the scene with its lights where the relight put them
};

const scene::Scene* LightmapRenderInputs::prepareOnGpu(const scene::Scene& scene, display::RenderSettings& settings) {
  if (!m_solution) return nullptr;
  m_atlas = lightmap::buildAtlas(scene, m_solution->atlasOptions);
  m_patches = lightmap::rasterizePatches(scene, m_atlas);
  m_storage = lightmap::relightStorage(*m_solution);
  const auto relighter = lightmap::relighterFor(scene, m_solution, m_atlas, m_patches, m_matrixFile);
  // The first relight pays the GL's first-use costs (llvmpipe compiles the compute shaders on first dispatch); the
  // one timed and shown is the second, what each later relight costs.
  (void)relighter->relight(m_offsets);
  m_timing = relighter->relight(m_offsets);
  m_lightmap = lightmap::matrixLightmap(*m_solution, relighter->readRadiance());
  settings.lightmap = &m_lightmap;
  settings.lightmapAtlas = &m_atlas;
  settings.lightmapPatches = &m_patches;
  // The moved lights are drawn where they went: the display draws the atlas's world-space vertices, so those move
  // too (their lightmap UVs, and so their texels, stay).
  if (std::none_of(m_offsets.begin(), m_offsets.end(), [](glm::vec3 o) { return o != glm::vec3(0.0f); }))
    return nullptr;
  m_movedScene = lightmap::translateLights(scene, m_offsets);
  m_atlas = lightmap::translateAtlasLights(scene, m_atlas, m_offsets);
  return &*m_movedScene;
}

}  // namespace

const Method kLightmapMethod = {
    "lightmap", kLightmapDisplay.summary, nullptr, false, {}, &kLightmapDisplay,
    [] { return std::unique_ptr<RenderInputs>(std::make_unique<LightmapRenderInputs>()); }};

}  // namespace ibrr::app
