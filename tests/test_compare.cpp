// `ibrr compare`: the report holds every method, its figures are finite and match the images it
// wrote, the same seed gives the same figures, and a browser shows its images and table.
#include "app/methods.hpp"
#include "compare/compare.hpp"
#include "metrics/metrics.hpp"
#include "rays/embree_scene.hpp"
#include "rays/pinhole.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"
#include "util/image.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <regex>

using namespace ibrr;
namespace fs = std::filesystem;

namespace {

// Every implemented method, in the order the report lists them.
std::vector<std::string> implementedMethods() {
  std::vector<std::string> names;
  for (const compare::MethodRunner& runner : app::compareRunners()) names.emplace_back(runner.name);
  return names;
}

// Runs a smoke-quality comparison of every method on the Cornell box into `folder`.
nlohmann::json runSmokeComparison(const fs::path& folder) {
  const test::CommandResult result =
      test::runIbrr({"compare", "cornell", "--quality", "smoke", "--size", "32x32", "--seed", "3", "-o", folder.string()});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  return nlohmann::json::parse(test::readText(folder / "results.json"));
}

// The JSON without the keys that hold times, which differ from run to run.
nlohmann::json withoutTimes(nlohmann::json json) {
  if (json.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [key, value] : json.items()) {
      const bool isTime = key.find("econds") != std::string::npos || key.find("Milliseconds") != std::string::npos;
      if (!isTime) out[key] = withoutTimes(value);
    }
    return out;
  }
  if (json.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (auto& value : json) out.push_back(withoutTimes(value));
    return out;
  }
  return json;
}

void requireFiniteNumbers(const nlohmann::json& json, const std::string& path) {
  if (json.is_number()) {
    INFO(path);
    CHECK(std::isfinite(json.get<double>()));
  } else if (json.is_object()) {
    for (auto& [key, value] : json.items()) requireFiniteNumbers(value, path + "." + key);
  } else if (json.is_array()) {
    for (std::size_t i = 0; i < json.size(); ++i) requireFiniteNumbers(json[i], path + "[" + std::to_string(i) + "]");
  }
}

}  // namespace

TEST_CASE("compare: results.json has every method with finite figures and settings, and a rerun gives the same figures",
          "[compare][gpu]") {
  const fs::path folder = test::outputDir("compare");
  const std::vector<std::string> kMethods = implementedMethods();
  REQUIRE(kMethods.size() >= 3);  // ibrr, keller, gather at least
  const nlohmann::json first = runSmokeComparison(folder / "run1");
  requireFiniteNumbers(first, "results");
  CHECK(first["settings"]["quality"] == "smoke");
  CHECK(first["settings"]["seed"] == 3);
  REQUIRE(first["methods"].size() == kMethods.size());
  const scene::Scene cornell = scene::loadScene(test::sceneDir() / "cornell.json");
  const rays::EmbreeScene embree(cornell);
  const std::vector<std::uint8_t> emitterMask = rays::maskOutEmitters(embree, cornell.camera("cornell"), 32, 32);
  for (std::size_t m = 0; m < kMethods.size(); ++m) {
    const nlohmann::json& method = first["methods"][m];
    INFO(kMethods[m]);
    CHECK(method["method"] == kMethods[m]);
    CHECK(method["settings"].is_object());
    CHECK_FALSE(method["settings"].empty());
    CHECK(method["bytes"].get<double>() > 0);
    CHECK_FALSE(method["convergence"].empty());
    REQUIRE(method["cameras"].size() == 1);
    const nlohmann::json& camera = method["cameras"][0];
    CHECK(camera["camera"] == "cornell");
    // The recorded error is the error of the image the report holds.
    const Image image = readImage(folder / "run1" / camera["image"].get<std::string>());
    const Image reference =
        readImage(folder / "run1" / first["references"][0]["image"].get<std::string>());
    CHECK(image.width == 32);
    // Recomputed from the two images with the emitter mask ibrr diff --mask emitters uses.
    const double recomputed = metrics::compareImages(image, reference, emitterMask).relativeRmse;
    CHECK(recomputed == Approx(camera["relRmse"].get<double>()).epsilon(1e-9));
    CHECK(camera["relRmse"].get<double>() > 0.0);
    CHECK(camera["relRmse"].get<double>() < 1.5);  // smoke settings are coarse, but each method must be close
  }
  const nlohmann::json second = runSmokeComparison(folder / "run2");
  CHECK(withoutTimes(first) == withoutTimes(second));
  CHECK(test::readText(folder / "run1" / "results.csv").find("ibrr,cornell,") != std::string::npos);
}

TEST_CASE("compare: headless Chromium shows every image and the table of the report", "[compare][gpu]") {
  const fs::path folder = test::outputDir("compare_browser");
  const std::vector<std::string> kMethods = implementedMethods();
  (void)runSmokeComparison(folder / "report");
  const fs::path chromium = "/usr/bin/chromium";
  INFO("needs Debian's chromium (ibrr.sh installs it)");
  REQUIRE(fs::exists(chromium));
  const fs::path dom = folder / "dom.html";
  const std::string command =
      chromium.string() +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
      "--disable-component-update --disable-sync --virtual-time-budget=10000 --user-data-dir=" +
      (folder / "chromium-profile").string() + " --dump-dom file://" + fs::absolute(folder / "report/index.html").string() +
      " > " + dom.string() + " 2> " + (folder / "chromium.log").string();
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string html = test::readText(dom);
  // One reference and, per method, the picture and its error image: all decoded by the browser.
  const std::size_t images = 1 + 2 * kMethods.size();
  CHECK(html.find("images-loaded\">" + std::to_string(images) + " of " + std::to_string(images)) != std::string::npos);
  CHECK(html.find("<table id=\"figures\">") != std::string::npos);
  for (const std::string& method : kMethods) CHECK(html.find("<tr><td>" + method + "</td><td>cornell</td>") != std::string::npos);
  CHECK(html.find("<svg id=\"convergence\"") != std::string::npos);
  const std::regex curve("class=\"curve\" data-method=\"[a-z-]+\"");
  CHECK(std::distance(std::sregex_iterator(html.begin(), html.end(), curve), std::sregex_iterator()) ==
        std::ptrdiff_t(kMethods.size()));
}

TEST_CASE("compare: bad arguments fail before any work with one clear message", "[compare]") {
  const fs::path folder = test::outputDir("compare_errors");
  auto expectError = [&](const std::vector<std::string>& arguments, const std::string& message) {
    const test::CommandResult result = test::runIbrr(arguments);
    INFO(result.err);
    CHECK(result.exitCode != 0);
    CHECK(result.err.find(message) != std::string::npos);
    CHECK_FALSE(fs::exists(folder / "never"));
  };
  expectError({"compare", "cornell", "--methods", "ibrr,radiosity", "-o", (folder / "never").string()},
              "unknown method 'radiosity'");
  expectError({"compare", "cornell", "--quality", "best", "-o", (folder / "never").string()}, "--quality 'best'");
  expectError({"compare", "cornell", "-o", (folder / "missing/never").string()}, "does not exist");
  expectError({"compare", "cornell", "--camera", "nowhere", "-o", (folder / "never").string()}, "nowhere");
}
