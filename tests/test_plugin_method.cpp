// A method added from one file and one table row: "flat", a constant radiance on every surface. Its bake writes the
// radiance (--radiance) to a small text file, its display reads that file back (--flat FILE) and draws the radiance
// wherever the camera's G-buffer has a surface, and its compare entry renders every camera. This file is the only
// one that names it: registered with app::addMethod, it runs through ibrr bake, ibrr render, ibrr compare and the
// offscreen viewer, in this process.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "app/methods.hpp"
#include "compare/method_run.hpp"
#include "display/gbuffer.hpp"
#include "display/uploaded_image.hpp"
#include "ibrr/store_file.hpp"
#include "test_support.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <optional>

using namespace ibrr;
namespace fs = std::filesystem;

namespace {

// The radiance a flat bake writes, "R G B"; the display shows this where it has no file (the viewer).
constexpr float kDefaultFlatRadiance = 0.25f;

class FlatBake final : public app::BakeMethod {
public:
  void declareFlags(app::MethodFlags& flags) override {
    flags.option("--radiance", m_radiance, "the radiance every surface shows");
  }
  void run(const app::BakeRun& run) override {
    if (!(m_radiance >= 0.0f)) throw Error("--radiance must be ≥ 0");
    writeFileAtomically(run.output, [&](const fs::path& temporary) {
      std::ofstream(temporary) << m_radiance << " " << m_radiance << " " << m_radiance << "\n";
    });
  }

private:
  float m_radiance = 1.0f;
};

// The camera's G-buffer, and the radiance where it has a surface.
class FlatPass final : public display::RenderPass {
public:
  explicit FlatPass(const display::PassInputs& inputs) : m_inputs(inputs) {}
  display::FrameTimes draw(const scene::Camera& camera, int width, int height, int supersample) override {
    display::GBuffer gbuffer(width, height);
    gbuffer.render(m_inputs.geometry, m_inputs.scene, camera, supersample);
    const auto* given = std::any_cast<glm::vec3>(&m_inputs.settings.methodInputs);
    const glm::vec3 radiance = given ? *given : glm::vec3(kDefaultFlatRadiance);
    Image image(width, height);
    const std::vector<std::uint8_t> covered = gbuffer.coverage();
    for (std::size_t i = 0; i < covered.size(); ++i) image.pixels[i] = covered[i] ? radiance : glm::vec3(0.0f);
    m_image.upload(std::move(image));
    return {};
  }
  GLuint texture() const override { return m_image.texture(); }
  display::RenderOutput read() const override {
    display::RenderOutput output;
    output.image = m_image.image();
    return output;
  }

private:
  const display::PassInputs m_inputs;
  display::UploadedImage m_image;
};

std::unique_ptr<display::RenderPass> makeFlatPass(const display::PassInputs& inputs) {
  return std::make_unique<FlatPass>(inputs);
}

const display::RenderMethod kFlatDisplay{"flat", "a constant radiance on every surface (--flat FILE)", false, false,
                                         true, makeFlatPass};

class FlatRenderInputs final : public app::RenderInputs {
public:
  void declareFlags(app::MethodFlags& flags) override {
    flags.option("--flat", m_file, "the radiance file of 'ibrr bake --method flat'");
  }
  void check(const app::MethodFlags&) const override {
    if (m_file.empty()) throw Error("--method flat needs --flat FILE");
  }
  void load(const scene::Scene&, display::RenderSettings& settings) override {
    glm::vec3 radiance(0.0f);
    std::ifstream in(m_file);
    if (!(in >> radiance.r >> radiance.g >> radiance.b)) throw Error(m_file + ": not a flat radiance file");
    settings.methodInputs = radiance;
  }

private:
  std::string m_file;
};

compare::MethodResult compareFlat(const compare::MethodContext& context) {
  compare::MethodResult result;
  result.summary = "a constant radiance";
  result.bytesWhat = "radiance";
  display::RenderSettings settings;
  settings.methodInputs = glm::vec3(kDefaultFlatRadiance);
  for (std::size_t c = 0; c < context.cameras.size(); ++c)
    result.cameras.push_back(compare::renderCamera(context, c, kFlatDisplay, settings, false));
  result.convergence.push_back({0.0, compare::meanRelativeRmse(result), "one frame"});
  return result;
}

const app::Method kFlatMethod = {
    "flat",
    "a constant radiance",
    [] { return std::unique_ptr<app::BakeMethod>(std::make_unique<FlatBake>()); },
    false,
    {{"flat", "a constant radiance on every surface", compareFlat}},
    &kFlatDisplay,
    [] { return std::unique_ptr<app::RenderInputs>(std::make_unique<FlatRenderInputs>()); }};

}  // namespace

TEST_CASE("a method from one file and one table row runs through bake, render, compare and the viewer",
          "[plugin][gpu]") {
  static const bool added = (app::addMethod(kFlatMethod), true);  // once per process
  (void)added;
  CHECK_THROWS_WITH(app::addMethod(kFlatMethod), Catch::Contains("'flat' is in the table"));
  const fs::path folder = test::outputDir("plugin_method");
  const std::string radiance = (folder / "flat.txt").string();
  REQUIRE(app::runCommandLine({"ibrr", "bake", "cornell", "--method", "flat", "--radiance", "0.5", "-o", radiance}) ==
          0);
  CHECK(test::readText(radiance) == "0.5 0.5 0.5\n");
  // A flag of another method is refused, and the flat method's flag with another.
  CHECK(app::runCommandLine({"ibrr", "bake", "cornell", "--method", "flat", "--paths", "4", "-o", radiance}) == 2);
  CHECK(app::runCommandLine({"ibrr", "bake", "cornell", "--radiance", "2", "-o", (folder / "x.ibrr").string()}) == 2);

  // ibrr render: the radiance on every covered pixel, nothing elsewhere.
  const fs::path rendered = folder / "flat.exr";
  REQUIRE(app::runCommandLine({"ibrr", "render", "cornell", "--method", "flat", "--flat", radiance, "--size", "48x32",
                               "-o", rendered.string()}) == 0);
  const fs::path albedo = folder / "albedo.exr";
  REQUIRE(app::runCommandLine({"ibrr", "render", "cornell", "--size", "48x32", "-o", albedo.string()}) == 0);
  const Image flat = readImage(rendered), shapes = readImage(albedo);
  REQUIRE(flat.pixels.size() == shapes.pixels.size());
  std::size_t covered = 0;
  for (std::size_t i = 0; i < flat.pixels.size(); ++i) {
    const bool surface = shapes.pixels[i] != glm::vec3(0.0f);
    covered += surface ? 1 : 0;
    if (surface) CHECK(flat.pixels[i] == glm::vec3(0.5f));
  }
  CHECK(covered > flat.pixels.size() / 2);

  // ibrr compare: its row in the report.
  const fs::path report = folder / "report";
  REQUIRE(app::runCommandLine({"ibrr", "compare", "cornell", "--methods", "flat", "--quality", "smoke", "--size",
                               "32x32", "--reference-spp", "4", "-o", report.string()}) == 0);
  CHECK_THAT(test::readText(report / "results.json"), Catch::Contains("\"flat\""));

  // The offscreen viewer: its mode, drawn with the default radiance (the viewer reads no --flat file).
  const fs::path store = folder / "tiny.ibrr";
  REQUIRE(app::runCommandLine({"ibrr", "bake", "cornell", "--paths", "8", "--ldc", "32", "--hemicube", "16",
                               "--indirect-hemicube", "16", "-o", store.string()}) == 0);
  test::writeText(folder / "script.json", R"({"screenshots": [{"frame": 0, "name": "view"}]})");
  REQUIRE(app::runCommandLine({"ibrr", "view", "cornell", "--offscreen", "--store", store.string(), "--method", "flat",
                               "--script", (folder / "script.json").string(), "--size", "48x32", "--screenshot-dir",
                               folder.string()}) == 0);
  const Image viewed = readImage(folder / "view.exr");
  REQUIRE(viewed.pixels.size() == shapes.pixels.size());
  for (std::size_t i = 0; i < viewed.pixels.size(); ++i)
    if (shapes.pixels[i] != glm::vec3(0.0f)) CHECK(viewed.pixels[i] == glm::vec3(kDefaultFlatRadiance));
}
