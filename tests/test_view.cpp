// `ibrr view`: the script format, screenshot naming, bad input, and (under xvfb-run, tag
// [.view_window]) scripted runs whose screenshots must equal `ibrr render` of the same camera,
// store and reconstruction path.
#include "app/methods.hpp"
#include "ibrr/store_file.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"
#include "viewer/first_person_camera.hpp"
#include "viewer/screenshot.hpp"
#include "viewer/view_script.hpp"

#include <catch2/catch.hpp>
#include <stb_image.h>

#include <algorithm>
#include <cmath>

using namespace ibrr;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// A tiny Cornell store (a fraction of a second to bake) in a folder of the calling test case's own:
// CTest runs test cases as parallel processes, so none may share (or clear) another's folder.
fs::path tinyCornellStore(const std::string& testName) {
  const fs::path folder = test::outputDir(testName + "_store");
  const fs::path path = folder / "cornell_tiny.ibrr";
  const test::CommandResult bake = test::runIbrr({"bake", "cornell", "--paths", "16", "--ldc", "48", "--hemicube", "32",
                                                  "--indirect-hemicube", "16", "-o", path.string()});
  INFO(bake.err);
  REQUIRE(bake.exitCode == 0);
  return path;
}

// Passes when every channel of every pixel is within `relative` of the expected value, relative
// to the expected image's largest value (radiance near 0 has no meaningful relative error);
// writes actual/expected/difference images on failure.
void requireSameImage(const Image& actual, const Image& expected, float relative,
                      const fs::path& folder, const std::string& name) {
  float largest = 0.0f;
  for (const glm::vec3& p : expected.pixels) largest = std::max({largest, p.r, p.g, p.b});
  REQUIRE(largest > 0.0f);
  const test::ImageComparison comparison = test::compareImages(actual, expected, relative * largest, 0.0, folder, name);
  INFO(name << ": " << comparison.report);
  CHECK(comparison.passed);
}

std::pair<int, int> pngSize(const fs::path& path) {
  int width = 0, height = 0, channels = 0;
  REQUIRE(stbi_info(path.c_str(), &width, &height, &channels) == 1);
  return {width, height};
}

std::string lastLine(const std::string& text) {
  const std::size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

TEST_CASE("view scripts: keyframes are exact at their frames and linear between", "[view]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  const fs::path folder = test::outputDir("view_script");
  test::writeText(folder / "walk.json", R"({
    "keyframes": [ { "frame": 2, "camera": "cornell" },
                   { "frame": 12, "eye": [100, 300, -200], "target": [278, 200, 300], "fov": 60 } ],
    "screenshots": [ { "frame": 12, "name": "side", "method": "albedo", "filter": "box" } ] })");
  const viewer::ViewScript script = viewer::loadViewScript(folder / "walk.json", scene);
  const scene::Camera& cornell = scene.camera("cornell");
  REQUIRE(script.keyframes.size() == 2);
  CHECK(script.lastFrame() == 12);
  // Before the first keyframe the camera holds; at a keyframe it is that camera, bit for bit.
  for (int frame : {0, 2}) {
    const scene::Camera camera = *script.cameraAt(frame);
    CHECK(camera.eye == cornell.eye);
    CHECK(camera.target == cornell.target);
    CHECK(camera.verticalFovDegrees == cornell.verticalFovDegrees);
  }
  const scene::Camera end = *script.cameraAt(12);
  CHECK(end.eye == glm::vec3(100, 300, -200));
  CHECK(end.verticalFovDegrees == 60.0f);
  // Halfway (frame 7): the mean of the two keyframes.
  const scene::Camera middle = *script.cameraAt(7);
  CHECK(middle.eye.x == Approx(0.5f * (cornell.eye.x + 100.0f)));
  CHECK(middle.target.z == Approx(0.5f * (cornell.target.z + 300.0f)));
  CHECK(middle.verticalFovDegrees == Approx(0.5f * (cornell.verticalFovDegrees + 60.0f)));
  CHECK(script.cameraAt(100)->eye == end.eye);
  REQUIRE(script.screenshots.size() == 1);
  CHECK(script.screenshots[0].method == "albedo");
  CHECK(script.screenshots[0].filter == "box");

  SECTION("an unknown key is refused, naming the file and the key") {
    test::writeText(folder / "typo.json", R"({"keyframes": [{"frame": 0, "eyes": [0, 0, 0]}]})");
    CHECK_THROWS_WITH(viewer::loadViewScript(folder / "typo.json", scene),
                      Contains("typo.json") && Contains("keyframes[0].eyes"));
  }
  SECTION("an unknown camera is refused, naming the cameras there are") {
    test::writeText(folder / "camera.json", R"({"keyframes": [{"frame": 0, "camera": "kitchen"}]})");
    CHECK_THROWS_WITH(viewer::loadViewScript(folder / "camera.json", scene),
                      Contains("keyframes[0].camera") && Contains("cornell"));
  }
  SECTION("keyframes out of order are refused") {
    test::writeText(folder / "order.json", R"({"keyframes": [{"frame": 5}, {"frame": 5}]})");
    CHECK_THROWS_WITH(viewer::loadViewScript(folder / "order.json", scene), Contains("keyframes[1].frame"));
  }
  // Found by tests/fuzz/fuzz_view_script: "1e999" escaped the loader as nlohmann's out_of_range (not a
  // parse_error). Found beside it: 1e39 became an infinite float offset, light 4294967296 light 0.
  SECTION("numbers beyond range are refused, naming the file and the key") {
    test::writeText(folder / "huge.json", R"({"keyframes": [{"frame": 0, "eye": [1e999, 0, 0]}]})");
    CHECK_THROWS_WITH(viewer::loadViewScript(folder / "huge.json", scene),
                      Contains("huge.json") && Contains("not valid JSON"));
    test::writeText(folder / "offset.json", R"({"lights": [{"frame": 0, "light": 0, "offset": [1e39, 0, 0]}]})");
    CHECK_THROWS_WITH(viewer::loadViewScript(folder / "offset.json", scene), Contains("lights[0].offset"));
    test::writeText(folder / "wrap.json", R"({"lights": [{"frame": 0, "light": 4294967296, "offset": [1, 0, 0]}]})");
    CHECK_THROWS_WITH(viewer::loadViewScript(folder / "wrap.json", scene), Contains("lights[0].light"));
  }
  SECTION("a window screenshot is a flag: true or false") {
    test::writeText(folder / "window.json", R"({"screenshots": [{"frame": 0, "window": true}, {"frame": 1}]})");
    const viewer::ViewScript shots = viewer::loadViewScript(folder / "window.json", scene);
    REQUIRE(shots.screenshots.size() == 2);
    CHECK(shots.screenshots[0].window);
    CHECK_FALSE(shots.screenshots[1].window);
    test::writeText(folder / "window_bad.json", R"({"screenshots": [{"frame": 0, "window": "yes"}]})");
    CHECK_THROWS_WITH(viewer::loadViewScript(folder / "window_bad.json", scene),
                      Contains("window_bad.json") && Contains("screenshots[0].window"));
  }
}

TEST_CASE("view camera: WASD moves along the view, the mouse turns towards where it moves", "[view]") {
  scene::Camera start;
  start.eye = {0, 0, 0};
  start.target = {0, 0, 10};  // looking along +z, up +y: screen right is cross(forward, up) = -x
  viewer::FirstPersonCamera walker(100.0f);
  CHECK(walker.speed() == Approx(viewer::FirstPersonCamera::kWalkDiagonalsPerSecond * 100.0f));
  walker.setCamera(start);
  walker.move({0, 0, 1}, 0.5f, false);  // W for half a second
  CHECK(walker.camera().eye.z == Approx(0.5f * walker.speed()));
  CHECK(walker.camera().target - walker.camera().eye == start.target - start.eye);  // direction kept
  walker.move({1, 0, 0}, 1.0f, true);                                               // D, running
  CHECK(walker.camera().eye.x == Approx(-viewer::FirstPersonCamera::kRunFactor * walker.speed()));
  walker.setCamera(start);
  walker.turn(100.0f, 0.0f);  // mouse right: turn right, towards -x
  const glm::vec3 right = glm::normalize(walker.camera().target - walker.camera().eye);
  CHECK(right.x < -0.2f);
  CHECK(right.y == Approx(0.0f).margin(1e-6));
  CHECK(glm::length(walker.camera().target - walker.camera().eye) == Approx(10.0f));  // focus distance kept
  walker.turn(0.0f, 100.0f);                                                          // mouse down: look down
  CHECK(walker.camera().target.y < walker.camera().eye.y);
  walker.turn(0.0f, -1e6f);  // never over the pole
  const glm::vec3 up = glm::normalize(walker.camera().target - walker.camera().eye);
  CHECK(up.y == Approx(std::sin(viewer::FirstPersonCamera::kMaxPitchRadians)));
  const float speed = walker.speed();
  walker.scaleSpeed(2.0f);  // two wheel steps up
  CHECK(walker.speed() ==
        Approx(speed * viewer::FirstPersonCamera::kScrollFactor * viewer::FirstPersonCamera::kScrollFactor));
}

TEST_CASE("view screenshots: names never reuse a stem that has a PNG or an EXR", "[view]") {
  const fs::path folder = test::outputDir("view_screenshot_names");
  CHECK(viewer::unusedScreenshotStem(folder, "shot") == folder / "shot");
  test::writeText(folder / "shot.exr", "earlier");
  CHECK(viewer::unusedScreenshotStem(folder, "shot") == folder / "shot-1");
  test::writeText(folder / "shot-1.png", "earlier");
  CHECK(viewer::unusedScreenshotStem(folder, "shot") == folder / "shot-2");
  const std::string stamp = viewer::timestampedScreenshotName();
  CHECK(stamp.rfind("ibrr-view-", 0) == 0);
  CHECK(stamp.size() == std::string("ibrr-view-20261122-114502").size());
}

TEST_CASE("ibrr view: bad input gives one line naming the file or flag and a non-zero exit", "[view][cli]") {
  const fs::path folder = test::outputDir("view_errors");
  SECTION("a missing store") {
    const test::CommandResult result = test::runIbrr({"view", "cornell", "--store", (folder / "absent.ibrr").string()});
    INFO(result.err);
    CHECK(result.exitCode == 1);
    CHECK_THAT(result.err, Contains("absent.ibrr") && Contains("ibrr bake"));
  }
  SECTION("a store baked for another scene") {
    const test::CommandResult result = test::runIbrr(
        {"view", (test::sceneDir() / "furnace.json").string(), "--store", tinyCornellStore("view_errors").string()});
    INFO(result.err);
    CHECK(result.exitCode == 1);
    CHECK_THAT(result.err, Contains("cornell_tiny.ibrr"));
    CHECK_THAT(lastLine(result.err), Contains("scene"));
  }
  SECTION("no display: use xvfb-run or ibrr render") {
    const test::CommandResult result =
        test::runIbrr({"view", "cornell", "--store", tinyCornellStore("view_errors").string(), "--frames", "1"},
                      {"DISPLAY=", "WAYLAND_DISPLAY="});
    INFO(result.err);
    CHECK(result.exitCode == 3);
    CHECK_THAT(result.err, Contains("xvfb-run") && Contains("ibrr render") && Contains("--offscreen"));
  }
  SECTION("--offscreen without --frames or --script: nothing would end the run") {
    const test::CommandResult result =
        test::runIbrr({"view", "cornell", "--store", tinyCornellStore("view_errors").string(), "--offscreen"});
    INFO(result.err);
    CHECK(result.exitCode == 1);
    CHECK_THAT(lastLine(result.err), Contains("--offscreen") && Contains("--frames") && Contains("--script"));
  }
  SECTION("a script with an unknown method") {
    test::writeText(folder / "bad.json", R"({"screenshots": [{"frame": 0, "method": "radiosity"}]})");
    const test::CommandResult result =
        test::runIbrr({"view", "cornell", "--store", tinyCornellStore("view_errors").string(), "--script",
                       (folder / "bad.json").string()});
    INFO(result.err);
    CHECK(result.exitCode == 1);
    CHECK_THAT(result.err, Contains("radiosity") && Contains("ibrr"));
  }
}

// Hidden from the ordinary run (it needs a display): CTest runs it under xvfb-run.
namespace {

// A scripted run's screenshots must equal `ibrr render` of the same camera, store, filter and
// reconstruction path (`path`: gpu or cpu), in a window or (offscreen) in a framebuffer.
void checkScriptedScreenshots(const std::string& path, bool offscreen) {
  const std::string runName = std::string(offscreen ? "view_offscreen_" : "view_scripted_") + path;
  const fs::path folder = test::outputDir(runName);
  const std::string store = tinyCornellStore(offscreen ? "view_offscreen" : "view_scripted").string();
  test::writeText(folder / "script.json", R"({
    "keyframes": [ { "frame": 0, "camera": "cornell" },
                   { "frame": 2, "eye": [100, 300, -200], "target": [278, 200, 300], "fov": 60 } ],
    "screenshots": [ { "frame": 0, "name": "front" },
                     { "frame": 2, "name": "side", "filter": "box" },
                     { "frame": 3, "name": "side_albedo", "method": "albedo" },
                     { "frame": 3, "name": "window", "window": true } ] })");
  std::vector<std::string> view = {"view",
                                   "cornell",
                                   "--store",
                                   store,
                                   "--reconstruct",
                                   path,
                                   "--script",
                                   (folder / "script.json").string(),
                                   "--size",
                                   "96x64",
                                   "--screenshot-dir",
                                   folder.string(),
                                   "--timings",
                                   (folder / "timings.csv").string()};
  if (offscreen) view.push_back("--offscreen");
  const test::CommandResult run = test::runIbrr(view);
  INFO(run.out << run.err);
  REQUIRE(run.exitCode == 0);
  CHECK_THAT(run.out, Contains("frames: 3 at 96x64"));  // 4 frames, the first left out of the medians

  struct Expectation {
    std::string name;
    std::vector<std::string> renderArguments;
  };
  const std::vector<std::string> side = {"--eye", "100,300,-200", "--target", "278,200,300", "--fov", "60"};
  std::vector<Expectation> expectations = {
      {"front", {"--method", "ibrr", "--camera", "cornell", "--filter", "bilinear", "--reconstruct", path}},
      {"side", {"--method", "ibrr", "--filter", "box", "--reconstruct", path}},
      {"side_albedo", {"--method", "albedo"}},
  };
  for (std::size_t i = 1; i < expectations.size(); ++i)
    expectations[i].renderArguments.insert(expectations[i].renderArguments.end(), side.begin(), side.end());
  for (const Expectation& expectation : expectations) {
    std::vector<std::string> render = {"render", "cornell", "--size",
                                       "96x64",  "-o",      (folder / (expectation.name + "_render.exr")).string()};
    if (expectation.name != "side_albedo") render.insert(render.end(), {"--store", store});
    render.insert(render.end(), expectation.renderArguments.begin(), expectation.renderArguments.end());
    const test::CommandResult rendered = test::runIbrr(render);
    INFO(rendered.err);
    REQUIRE(rendered.exitCode == 0);
    REQUIRE(fs::exists(folder / (expectation.name + ".png")));
    requireSameImage(readImage(folder / (expectation.name + ".exr")),
                     readImage(folder / (expectation.name + "_render.exr")), 1e-3f, folder,
                     runName + "_" + expectation.name);
  }
  // The window as shown (read back before the swap, or from the offscreen framebuffer): a PNG only.
  CHECK(pngSize(folder / "window.png") == std::make_pair(96, 64));
  CHECK_FALSE(fs::exists(folder / "window.exr"));
  // The timings CSV: a header, the column names and one row per frame.
  const std::string timings = test::readText(folder / "timings.csv");
  CHECK(std::count(timings.begin(), timings.end(), '\n') == 2 + 4);
  CHECK_THAT(timings, Contains("ibrr/" + path));

  // A second run never overwrites: its screenshots get the next free names.
  const test::CommandResult again = test::runIbrr(view);
  INFO(again.err);
  REQUIRE(again.exitCode == 0);
  CHECK(fs::exists(folder / "front-1.png"));
  CHECK(fs::exists(folder / "front-1.exr"));
  requireSameImage(readImage(folder / "front-1.exr"), readImage(folder / "front.exr"), 0.0f, folder,
                   runName + "_front_again");
}

}  // namespace

TEST_CASE("ibrr view: scripted screenshots under Xvfb equal ibrr render of the same camera", "[.view_window]") {
  checkScriptedScreenshots(GENERATE(std::string("gpu"), std::string("cpu")), false);
}

// --offscreen needs no display: the same scripted run on a headless EGL context, in the main suite.
TEST_CASE("ibrr view --offscreen: scripted screenshots equal ibrr render of the same camera", "[view]") {
  checkScriptedScreenshots(GENERATE(std::string("gpu"), std::string("cpu")), true);
}

namespace {

// Without --store the viewer bakes one (progress drawn on its surface), saves it, and uses it on
// the next run instead of baking again.
void checkBakeInViewer(bool offscreen) {
  const fs::path folder = test::outputDir(offscreen ? "view_bake_offscreen" : "view_bake");
  const fs::path store = folder / "baked.ibrr";
  std::vector<std::string> view = {
      "view",       "cornell", "--bake-output",       store.string(), "--paths", "8",     "--ldc",    "32",
      "--hemicube", "16",      "--indirect-hemicube", "16",           "--size",  "64x64", "--frames", "2"};
  if (offscreen) view.push_back("--offscreen");
  const test::CommandResult first = test::runIbrr(view);
  INFO(first.err);
  REQUIRE(first.exitCode == 0);
  REQUIRE(fs::exists(store));
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  CHECK(loadStore(store, scene.fingerprint()).vplCount() > 0);
  const auto written = fs::last_write_time(store);
  const test::CommandResult second = test::runIbrr(view);
  INFO(second.err);
  REQUIRE(second.exitCode == 0);
  CHECK_THAT(second.err, Contains("using the store baked earlier"));
  CHECK(fs::last_write_time(store) == written);
}

}  // namespace

TEST_CASE("ibrr view without a store bakes one in the window, saves it and uses it next time", "[.view_window]") {
  checkBakeInViewer(false);
}

TEST_CASE("ibrr view --offscreen without a store bakes one, saves it and uses it next time", "[view]") {
  checkBakeInViewer(true);
}

TEST_CASE("ibrr view shows each --lightmap as a method, as ibrr render draws it", "[.view_window]") {
  const fs::path folder = test::outputDir("view_lightmap");
  const fs::path lightmap = folder / "tiny.lightmap";
  const test::CommandResult bake = test::runIbrr(
      {"bake", "cornell", "--method", "gather", "--atlas", "32", "--iterations", "2", "-o", lightmap.string()});
  INFO(bake.err);
  REQUIRE(bake.exitCode == 0);
  test::writeText(folder / "script.json",
                  R"({"screenshots": [{"frame": 1, "name": "lightmap", "method": "lightmap"}]})");
  const test::CommandResult view = test::runIbrr(
      {"view", "cornell", "--store", tinyCornellStore("view_lightmap").string(), "--lightmap", lightmap.string(),
       "--script", (folder / "script.json").string(), "--size", "96x64", "--screenshot-dir", folder.string()});
  INFO(view.err);
  REQUIRE(view.exitCode == 0);
  const test::CommandResult render = test::runIbrr({"render", "cornell", "--lightmap", lightmap.string(), "--size",
                                                    "96x64", "-o", (folder / "lightmap_render.exr").string()});
  INFO(render.err);
  REQUIRE(render.exitCode == 0);
  requireSameImage(readImage(folder / "lightmap.exr"), readImage(folder / "lightmap_render.exr"),
                   1e-3f, folder, "view_lightmap");
}

namespace {

// A region of an 8-bit PNG as an image of values in [0, 1] (the display values, not radiance).
Image pngRegion(const fs::path& path, int x0, int y0, int width, int height) {
  int fileWidth = 0, fileHeight = 0, channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &fileWidth, &fileHeight, &channels, 3);
  REQUIRE(pixels != nullptr);
  Image region(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        region.at(x, y)[c] = float(pixels[(std::size_t(y0 + y) * std::size_t(fileWidth) + std::size_t(x0 + x)) * 3 +
                                          std::size_t(c)]) /
                             255.0f;
  stbi_image_free(pixels);
  return region;
}

}  // namespace

// A "window" screenshot is the framebuffer as shown: the view tone-mapped by the present pass
// (which must equal the PNG writer's tone mapping) with the ImGui overlay drawn over it.
TEST_CASE("ibrr view --offscreen: a window screenshot is the view's PNG with the overlay over it", "[view]") {
  const fs::path folder = test::outputDir("view_window_shot");
  const std::string store = tinyCornellStore("view_window_shot").string();
  test::writeText(folder / "script.json", R"({
    "keyframes": [ { "frame": 0, "camera": "cornell" } ],
    "screenshots": [ { "frame": 1, "name": "view" }, { "frame": 1, "name": "ui", "window": true } ] })");
  const test::CommandResult run =
      test::runIbrr({"view", "cornell", "--store", store, "--offscreen", "--script", (folder / "script.json").string(),
                     "--size", "1280x720", "--screenshot-dir", folder.string()});
  INFO(run.out << run.err);
  REQUIRE(run.exitCode == 0);
  CHECK_FALSE(fs::exists(folder / "ui.exr"));  // display values only
  REQUIRE(pngSize(folder / "ui.png") == std::make_pair(1280, 720));
  REQUIRE(pngSize(folder / "view.png") == std::make_pair(1280, 720));
  // The bottom-right corner lies clear of the menu bar and the panel (top left): the same bytes as
  // the view's PNG, up to one level of rounding between the shader's and the CPU's sRGB encoding.
  const test::ImageComparison corner =
      test::compareImages(pngRegion(folder / "ui.png", 960, 540, 320, 180),
                          pngRegion(folder / "view.png", 960, 540, 320, 180), 1.01f / 255.0f, 0.0, folder, "corner");
  INFO(corner.report);
  CHECK(corner.passed);
  // The top left holds the overlay: most of it differs from the view.
  const test::ImageComparison overlay =
      test::compareImages(pngRegion(folder / "ui.png", 0, 0, 200, 100), pngRegion(folder / "view.png", 0, 0, 200, 100),
                          1.01f / 255.0f, 1.0, folder, "overlay");
  CHECK(overlay.mismatchFraction > 0.5);
}

TEST_CASE("ibrr view: a script's light moves need --matrix and a light it has", "[view][cli]") {
  const fs::path folder = test::outputDir("view_light_moves");
  test::writeText(folder / "moves.json", R"({"lights": [{"frame": 1, "light": 0, "offset": [50, 0, 0]}]})");
  test::writeText(folder / "bad.json", R"({"lights": [{"frame": 1, "light": 0, "offset": [50, 0]}]})");
  const std::string store = tinyCornellStore("view_light_moves").string();
  const test::CommandResult noMatrix =
      test::runIbrr({"view", "cornell", "--store", store, "--script", (folder / "moves.json").string()});
  CHECK(noMatrix.exitCode != 0);
  CHECK_THAT(noMatrix.err, Contains("--matrix"));
  const test::CommandResult malformed =
      test::runIbrr({"view", "cornell", "--store", store, "--script", (folder / "bad.json").string()});
  CHECK(malformed.exitCode != 0);
  CHECK_THAT(malformed.err, Contains("bad.json") && Contains("lights[0].offset"));
}

TEST_CASE("ibrr view --matrix relights a moved light as ibrr render --matrix --move-light draws it",
          "[.view_window]") {
  const fs::path folder = test::outputDir("view_matrix");
  const fs::path matrix = folder / "tiny.ffmatrix";
  const test::CommandResult bake =
      test::runIbrr({"bake", "cornell", "--method", "matrix", "--atlas", "32", "--hemicube", "16", "--light-samples",
                     "32", "--save-matrix", matrix.string(), "-o", (folder / "tiny.lightmap").string()});
  INFO(bake.err);
  REQUIRE(bake.exitCode == 0);
  // Frame 1 at the baked place, then light 0 moved by 50 mm along x before frame 2 is drawn.
  test::writeText(folder / "script.json", R"({"screenshots": [{"frame": 1, "name": "still", "method": "lightmap"},
                                                             {"frame": 2, "name": "moved"}],
                                             "lights": [{"frame": 2, "light": 0, "offset": [50, 0, 0]}]})");
  const test::CommandResult view =
      test::runIbrr({"view", "cornell", "--store", tinyCornellStore("view_matrix").string(), "--matrix",
                     matrix.string(), "--script", (folder / "script.json").string(), "--size", "96x64",
                     "--screenshot-dir", folder.string()});
  INFO(view.err);
  REQUIRE(view.exitCode == 0);
  for (const char* name : {"still", "moved"}) {
    std::vector<std::string> arguments = {"render", "cornell", "--matrix", matrix.string(), "--size", "96x64", "-o",
                                          (folder / (std::string(name) + "_render.exr")).string()};
    if (std::string(name) == "moved") arguments.insert(arguments.end(), {"--move-light", "0:50,0,0"});
    const test::CommandResult render = test::runIbrr(arguments);
    INFO(render.err);
    REQUIRE(render.exitCode == 0);
    requireSameImage(readImage(folder / (std::string(name) + ".exr")),
                     readImage(folder / (std::string(name) + "_render.exr")), 1e-3f, folder,
                     std::string("view_matrix_") + name);
  }
  // The move changed the picture (the light itself is above this view: its light on the walls moved).
  const Image still = readImage(folder / "still.exr");
  const Image moved = readImage(folder / "moved.exr");
  REQUIRE(still.pixels.size() == moved.pixels.size());
  double difference = 0.0, reference = 0.0;
  for (std::size_t i = 0; i < still.pixels.size(); ++i) {
    difference += double(glm::dot(moved.pixels[i] - still.pixels[i], moved.pixels[i] - still.pixels[i]));
    reference += double(glm::dot(still.pixels[i], still.pixels[i]));
  }
  CHECK(std::sqrt(difference / reference) > 0.05);  // measured 16% relative RMS
}

namespace {

// The readbacks column of a --timings CSV, one entry per frame, with its method.
std::vector<std::pair<std::string, long>> readbacksPerFrame(const fs::path& timings) {
  std::vector<std::pair<std::string, long>> frames;
  std::istringstream lines(test::readText(timings));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("frame,", 0) == 0) continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    REQUIRE(fields.size() == 7);
    frames.emplace_back(fields[1], std::stol(fields[6]));
  }
  return frames;
}

}  // namespace

TEST_CASE("ibrr view --offscreen shows a lightmap and IBRR without reading a texture back, as ibrr render draws them",
          "[view]") {
  const fs::path folder = test::outputDir("view_readbacks");
  const fs::path lightmap = folder / "tiny.lightmap";
  const test::CommandResult bake = test::runIbrr(
      {"bake", "cornell", "--method", "gather", "--atlas", "32", "--iterations", "2", "-o", lightmap.string()});
  INFO(bake.err);
  REQUIRE(bake.exitCode == 0);
  // The camera moves every frame, so every frame draws the view again.
  test::writeText(folder / "script.json", R"({"keyframes": [{"frame": 0, "camera": "cornell"},
      {"frame": 4, "eye": [300, 260, -700], "target": [260, 280, 0], "fov": 45}],
      "screenshots": [{"frame": 0, "name": "first"}]})");
  const std::string store = tinyCornellStore("view_readbacks").string();
  for (const auto& [method, reconstruct, expected] :
       {std::tuple{"lightmap", "gpu", "lightmap"}, std::tuple{"ibrr", "gpu", "ibrr/gpu"},
        std::tuple{"ibrr", "cpu", "ibrr/cpu"}}) {
    INFO(expected);
    const fs::path timings = folder / (std::string(method) + "_" + reconstruct + ".csv");
    const test::CommandResult view = test::runIbrr(
        {"view", "cornell", "--offscreen", "--store", store, "--lightmap", lightmap.string(), "--method", method,
         "--reconstruct", reconstruct, "--script", (folder / "script.json").string(), "--size", "96x64",
         "--screenshot-dir", folder.string(), "--timings", timings.string()});
    INFO(view.err);
    REQUIRE(view.exitCode == 0);
    const auto frames = readbacksPerFrame(timings);
    REQUIRE(frames.size() == 5);
    for (std::size_t frame = 0; frame < frames.size(); ++frame) {
      const auto& [shown, readbacks] = frames[frame];
      INFO("frame " << frame);
      CHECK(shown == expected);
      // The CPU reconstruction reads the G-buffer back by design: it shows that the count counts. A lightmap's
      // first frame sets its display up, reading the patch list back once.
      if (std::string(reconstruct) == "cpu")
        CHECK(readbacks >= 1);
      else if (std::string(method) == "lightmap" && frame == 0)
        CHECK(readbacks == 1);
      else
        CHECK(readbacks == 0);
    }
    if (std::string(method) == "lightmap") {  // the GPU-only view is ibrr render's picture
      const test::CommandResult render = test::runIbrr({"render", "cornell", "--lightmap", lightmap.string(), "--size",
                                                        "96x64", "-o", (folder / "lightmap_render.exr").string()});
      INFO(render.err);
      REQUIRE(render.exitCode == 0);
      requireSameImage(readImage(folder / "first.exr"), readImage(folder / "lightmap_render.exr"),
                       1e-3f, folder, "view_readbacks");
    }
  }
}

// The viewer draws every method through the same RenderPass objects as `ibrr render` (display/render_methods): for
// every row of the table, the offscreen viewer's screenshot is ibrr render's image of the same camera, bit for bit.
TEST_CASE("ibrr view --offscreen draws every method of the table exactly as ibrr render does", "[view]") {
  const fs::path folder = test::outputDir("view_every_method");
  const fs::path lightmap = folder / "tiny.lightmap";
  const test::CommandResult bake = test::runIbrr(
      {"bake", "cornell", "--method", "gather", "--atlas", "32", "--iterations", "2", "-o", lightmap.string()});
  INFO(bake.err);
  REQUIRE(bake.exitCode == 0);
  const std::string store = tinyCornellStore("view_every_method").string();
  test::writeText(folder / "script.json", R"({"keyframes": [{"frame": 0, "camera": "cornell"}],
      "screenshots": [{"frame": 0, "name": "frame"}]})");
  for (const app::Method* row : app::methods()) {
    if (!row->display) continue;
    const display::RenderMethod& method = *row->display;
    const std::string name(method.name);
    app::MethodFlags renderFlags;  // the flags of `ibrr render` this display declares
    if (row->makeRenderInputs) row->makeRenderInputs()->declareFlags(renderFlags);
    INFO(name);
    // What each method's inputs are given as, on both commands.
    std::vector<std::string> inputs = {"--store", store, "--lightmap", lightmap.string()};
    std::vector<std::string> renderInputs;
    if (method.needsStore) renderInputs = {"--store", store};
    if (method.needsLightmap) renderInputs = {"--lightmap", lightmap.string()};
    if (renderFlags.find("--paths")) {  // a few VPLs
      inputs.insert(inputs.end(), {"--keller-paths", "8"});
      renderInputs.insert(renderInputs.end(), {"--paths", "8"});
    }
    const fs::path shots = folder / name;
    fs::create_directories(shots);
    std::vector<std::string> view = {"view",     "cornell", "--offscreen", "--method", name,
                                     "--script", (folder / "script.json").string(), "--size", "96x64",
                                     "--screenshot-dir", shots.string()};
    view.insert(view.end(), inputs.begin(), inputs.end());
    const test::CommandResult viewed = test::runIbrr(view);
    INFO(viewed.err);
    REQUIRE(viewed.exitCode == 0);
    std::vector<std::string> render = {"render", "cornell", "--method", name, "--camera", "cornell", "--size",
                                       "96x64",  "-o",      (shots / "render.exr").string()};
    render.insert(render.end(), renderInputs.begin(), renderInputs.end());
    const test::CommandResult rendered = test::runIbrr(render);
    INFO(rendered.err);
    REQUIRE(rendered.exitCode == 0);
    const Image frame = readImage(shots / "frame.exr"), expected = readImage(shots / "render.exr");
    const test::ImageComparison comparison = test::compareImages(frame, expected, 0.0f, 0.0, shots, "view_" + name);
    INFO(comparison.report);
    CHECK(comparison.passed);
  }
}
