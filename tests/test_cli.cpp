// The `ibrr` command line: help, info and render, and every kind of bad input giving one line,
// a non-zero exit and an untouched output file.
#include "app/methods.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <stb_image.h>
#include <algorithm>
#include <cmath>
#include <regex>

using namespace ibrr;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {
int lineCount(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

// Runs a command that must fail: exit code non-zero, exactly one line on stderr containing every
// `mentions`, and `protectedFile` (created beforehand) left byte for byte as it was.
void expectCleanFailure(const std::vector<std::string>& arguments, const std::vector<std::string>& mentions,
                        const fs::path& protectedFile) {
  test::writeText(protectedFile, "precious earlier result");
  const test::CommandResult result = test::runIbrr(arguments);
  INFO("stderr: " << result.err);
  CHECK(result.exitCode != 0);
  CHECK(lineCount(result.err) == 1);
  CHECK(result.err.rfind("ibrr: error: ", 0) == 0);
  for (const std::string& mention : mentions) CHECK_THAT(result.err, Contains(mention));
  CHECK(test::readText(protectedFile) == "precious earlier result");
}
}  // namespace

TEST_CASE("ibrr --help lists the commands and each command has its own help", "[cli]") {
  const test::CommandResult help = test::runIbrr({"--help"});
  CHECK(help.exitCode == 0);
  CHECK_THAT(help.out, Contains("info") && Contains("bake") && Contains("render") && Contains("reference") &&
                           Contains("diff") && Contains("bench"));
  const test::CommandResult renderHelp = test::runIbrr({"render", "--help"});
  CHECK(renderHelp.exitCode == 0);
  CHECK_THAT(renderHelp.out,
             Contains("--method") && Contains("ibrr, keller, albedo, normal, emission") && Contains("Example"));
}

TEST_CASE("ibrr info reports the Cornell box", "[cli]") {
  const test::CommandResult result = test::runIbrr({"info", "cornell"});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  CHECK_THAT(result.out, Contains("triangles  32") && Contains("area 13650") && Contains("cornell"));
}

TEST_CASE("ibrr info describes a baked store, and refuses a broken one naming it", "[cli][gpu]") {
  const fs::path folder = test::outputDir("cli_info_store");
  const fs::path store = folder / "tiny.ibrr";
  fs::remove(store);
  const test::CommandResult bake = test::runIbrr(
      {"bake", "cornell", "--paths", "2", "--ldc", "16", "--hemicube", "8", "--indirect-hemicube", "4", "-o", store.string()});
  INFO(bake.err);
  REQUIRE(bake.exitCode == 0);
  const test::CommandResult info = test::runIbrr({"info", store.string()});
  INFO(info.err);
  REQUIRE(info.exitCode == 0);
  CHECK_THAT(info.out, Contains("R = 16") && Contains("hemicubes accumulated") && Contains("layers"));
  test::writeText(folder / "broken.ibrr", "not a store");
  const test::CommandResult broken = test::runIbrr({"info", (folder / "broken.ibrr").string()});
  CHECK(broken.exitCode == 1);
  CHECK_THAT(broken.err, Contains("broken.ibrr"));
}

TEST_CASE("ibrr render writes a PNG of the requested size", "[cli][gpu]") {
  const fs::path folder = test::outputDir("cli_render");
  const fs::path output = folder / "cornell.png";
  const test::CommandResult result =
      test::runIbrr({"render", "cornell", "--view", "albedo", "--size", "64x48", "-o", output.string()});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  CHECK_THAT(result.out, Contains(output.string()));
  int width = 0, height = 0, channels = 0;
  unsigned char* pixels = stbi_load(output.c_str(), &width, &height, &channels, 3);
  REQUIRE(pixels);
  CHECK(width == 64);
  CHECK(height == 48);
  // Red wall on the left at mid height (x ≈ 9..17 at this 4:3 aspect): sRGB of albedo
  // (0.63, 0.065, 0.05) is (208, 72, 63).
  const unsigned char* left = pixels + (24 * 64 + 13) * 3;
  CHECK(int(left[0]) == 208);
  CHECK(int(left[1]) == 72);
  stbi_image_free(pixels);
  // Nothing else was left in the folder (no temporary files).
  CHECK(std::distance(fs::directory_iterator(folder), fs::directory_iterator()) == 1);
}

TEST_CASE("bad input: one-line errors, non-zero exit, outputs untouched", "[cli][errors]") {
  const fs::path folder = test::outputDir("cli_errors");
  const fs::path output = folder / "out.png";
  test::writeText(folder / "tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  test::writeText(folder / "nan.obj", "v nan 0 0\nv 1 nan 0\nv 0 1 nan\nf 1 2 3\n");
  test::writeText(folder / "garbage.ply",
                  "ply\nformat binary_little_endian 1.0\nelement vertex 99999999\nend_header\n");
  test::writeText(folder / "typo.json", R"({"meshes": [{"path": "tri.obj", "scael": 2}]})");
  test::writeText(folder / "unreadable.json", R"({"meshes": [{"path": "garbage.ply"}]})");

  SECTION("missing scene file") {
    expectCleanFailure({"render", (folder / "absent.json").string(), "-o", output.string()},
                       {"absent.json", "not found"}, output);
  }
  SECTION("unreadable mesh") {
    expectCleanFailure({"render", (folder / "unreadable.json").string(), "-o", output.string()},
                       {"garbage.ply", "meshes[0].path"}, output);
  }
  SECTION("unknown manifest key") {
    expectCleanFailure({"render", (folder / "typo.json").string(), "-o", output.string()},
                       {"typo.json", "unknown key 'meshes[0].scael'"}, output);
  }
  SECTION("mesh with NaN vertices") {
    expectCleanFailure({"render", (folder / "nan.obj").string(), "-o", output.string()}, {"nan.obj", "NaN"}, output);
  }
  SECTION("output path in a missing folder") {
    const fs::path missing = folder / "missing" / "out.png";
    expectCleanFailure({"render", "cornell", "-o", missing.string()}, {"missing", "does not exist"}, output);
    CHECK_FALSE(fs::exists(missing));
  }
  SECTION("unknown view, camera and malformed size") {
    expectCleanFailure({"render", "cornell", "--method", "albdeo", "-o", output.string()}, {"albdeo", "albedo"},
                       output);
    expectCleanFailure({"render", "cornell", "--camera", "side", "-o", output.string()}, {"side", "cornell"}, output);
    expectCleanFailure({"render", "cornell", "--size", "64by64", "-o", output.string()}, {"--size", "WIDTHxHEIGHT"},
                       output);
    expectCleanFailure({"render", "cornell", "-o", (folder / "out.jpg").string()}, {"out.jpg", ".exr"}, output);
  }
  SECTION("a flag another render method reads is refused, naming the methods that read it (one row a method)") {
    const struct {
      const char* method;
      const char* flag;
      const char* value;
      const char* readers;
    } foreign[] = {{"ibrr", "--paths", "4", "--method keller reads it"},
                   {"keller", "--filter", "box", "--method ibrr reads it"},
                   {"albedo", "--holes", "h.png", "--method ibrr reads it"},
                   {"normal", "--lightmap", "x.lightmap", "--method lightmap reads it"},
                   {"emission", "--reconstruct", "cpu", "--method ibrr reads it"},
                   {"lightmap", "--store", "x.ibrr", "--method ibrr reads it"}};
    for (const display::RenderMethod* method : app::renderMethods())
      CHECK(std::any_of(std::begin(foreign), std::end(foreign), [&](const auto& row) { return row.method == method->name; }));
    for (const auto& row : foreign)
      expectCleanFailure({"render", "cornell", "--method", row.method, row.flag, row.value, "-o", output.string()},
                         {std::string(row.flag) + " is not a setting of --method " + row.method, row.readers}, output);
  }
  SECTION("Keller's light-path flags are refused for another method, naming the flag and the method") {
    expectCleanFailure({"render", "cornell", "--paths", "64", "-o", output.string()}, {"--paths", "keller", "albedo"},
                       output);
    expectCleanFailure({"render", "cornell", "--method", "albedo", "--bias-compensation", "off", "-o", output.string()},
                       {"--bias-compensation", "keller"}, output);
  }
  SECTION("non-finite numbers are refused, naming the flag") {
    // --time nan ran forever; --exposure nan and --scale nan were taken.
    expectCleanFailure({"reference", "cornell", "--time", "nan", "-o", output.string()}, {"--time", "nan"}, output);
    expectCleanFailure({"render", "cornell", "--exposure", "nan", "-o", output.string()}, {"--exposure", "nan"},
                       output);
    expectCleanFailure({"render", "cornell", "--eye", "nan,0,0", "--target", "0,0,0", "-o", output.string()},
                       {"--eye", "nan"}, output);
    expectCleanFailure({"render", "cornell", "--fov", "inf", "-o", output.string()}, {"--fov", "inf"}, output);
    // Finite as doubles, infinite as the float flags they are (found by fuzz_cli_numbers).
    expectCleanFailure({"render", "cornell", "--exposure", "1e39", "-o", output.string()}, {"--exposure", "range"},
                       output);
    expectCleanFailure({"render", "cornell", "--eye", "1e39,0,0", "--target", "0,0,0", "-o", output.string()},
                       {"--eye", "range"}, output);
    expectCleanFailure({"diff", output.string(), output.string(), "--scale", "nan"}, {"--scale", "nan"}, output);
  }
  SECTION("inputs must be regular files: a FIFO or a folder is refused, never read (a FIFO blocked forever)") {
    const fs::path fifo = folder / "pipe.json";
    fs::remove(fifo);
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    expectCleanFailure({"info", fifo.string()}, {"pipe.json", "FIFO"}, output);
    expectCleanFailure({"render", "cornell", "--store", fifo.string(), "-o", output.string()}, {"pipe.json", "FIFO"},
                       output);
    expectCleanFailure({"render", "cornell", "--store", folder.string(), "-o", output.string()},
                       {folder.filename().string(), "folder"}, output);
    expectCleanFailure({"diff", fifo.string(), output.string()}, {"pipe.json", "FIFO"}, output);
    fs::remove(fifo);
  }
  SECTION("bad bake options and store files") {
    const fs::path store = folder / "kept.ibrr";
    expectCleanFailure({"bake", "cornell", "--hemicube", "63", "-o", store.string()}, {"--hemicube 63", "even"}, store);
    expectCleanFailure({"bake", "cornell", "--ldc", "2", "-o", store.string()}, {"--ldc 2"}, store);
    expectCleanFailure({"bake", "cornell", "--warp", "gpus", "-o", store.string()}, {"--warp 'gpus'", "auto, cpu or gpu"},
                       store);
    expectCleanFailure({"bake", "cornell", "--method", "gather", "--warp", "gpu", "-o", (folder / "g.lightmap").string()},
                       {"--warp"}, store);
    expectCleanFailure({"bake", "cornell", "--direct", "matrix", "-o", store.string()},
                       {"--direct 'matrix'", "--method ibrr", "vpl, rays or auto"}, store);
    expectCleanFailure({"bake", "cornell", "--direct", "rays", "--direct-points", "0", "-o", store.string()},
                       {"--direct-points 0", "[1, 1024]"}, store);
    expectCleanFailure({"bake", "cornell", "--direct-samples", "2000", "-o", store.string()},
                       {"--direct-samples 2000", "[1, 1024]"}, store);
    expectCleanFailure({"bake", "cornell", "--indirect-ldc", "300", "-o", store.string()},
                       {"--indirect-ldc 300", "--ldc 256"}, store);
    expectCleanFailure({"bake", "cornell", "--warp", "gpu", "--gpu-batch", "3000", "-o", store.string()},
                       {"--gpu-batch", "3000", "2048"}, store);
    // A flag another method reads is refused, naming the methods that read it (the table in app/methods.hpp).
    const struct {
      const char* method;
      const char* flag;
      const char* value;
      const char* readers;
    } foreign[] = {{"ibrr", "--atlas", "32", "--method gather, progressive, stochastic or matrix read it"},
                   {"gather", "--paths", "4", "--method ibrr reads it"},
                   {"progressive", "--seed", "1", "--method ibrr, gather, stochastic or matrix read it"},
                   {"stochastic", "--tolerance", "0.1", "--method gather reads it"},
                   {"matrix", "--refine-near-lights", "2", "--method gather, progressive or stochastic read it"}};
    for (const auto& row : foreign)
      expectCleanFailure({"bake", "cornell", "--method", row.method, row.flag, row.value, "-o",
                          (folder / (std::string(row.method) + ".out")).string()},
                         {std::string(row.flag) + " is not a setting of --method " + row.method, row.readers}, store);
    expectCleanFailure({"bake", "cornell", "--method", "radiosity", "-o", store.string()},
                       {"--method 'radiosity'", "choose ibrr, gather, progressive, stochastic or matrix"}, store);
    // A method of the table without a bake (Keller's) is named with what to run instead.
    expectCleanFailure({"bake", "cornell", "--method", "keller", "-o", store.string()},
                       {"--method 'keller' has nothing to bake", "ibrr render --method keller"}, store);
    expectCleanFailure({"bake", "cornell", "-o", (folder / "missing" / "x.ibrr").string()}, {"does not exist"}, store);
    // `store` now holds text, not a store: rendering from it names the file and says to re-bake.
    expectCleanFailure({"render", "cornell", "--store", store.string(), "-o", output.string()},
                       {"kept.ibrr", "ibrr bake"}, output);
    expectCleanFailure({"render", "cornell", "--method", "ibrr", "-o", output.string()}, {"--store"}, output);
  }
  SECTION("bench --json: a missing folder is named before any measuring; other benchmarks refuse it") {
    const fs::path json = folder / "figures.json";
    expectCleanFailure({"bench", "store", "--quick", "--json", (folder / "missing" / "f.json").string()},
                       {"missing", "does not exist"}, json);
    expectCleanFailure({"bench", "rays", "--quick", "--json", json.string()}, {"--json", "ibrr bench store"}, json);
  }
  SECTION("bench ibrr: an unknown section, and a --shared-scenes folder that is not there") {
    const fs::path kept = folder / "kept.txt";
    expectCleanFailure({"bench", "ibrr", "--quick", "--sections", "bake,dispaly"}, {"--sections", "dispaly"}, kept);
    expectCleanFailure({"bench", "ibrr", "--quick", "--shared-scenes", (folder / "nowhere").string()},
                       {"--shared-scenes", "nowhere", "no such folder"}, kept);
  }
  SECTION("bench lightmap: a missing --out folder is named before any measuring; other benchmarks refuse its flags") {
    const fs::path kept = folder / "kept.txt";
    expectCleanFailure({"bench", "all", "--quick", "--out", (folder / "nowhere").string()},
                       {"--out", "nowhere", "no such folder"}, kept);
    expectCleanFailure({"bench", "store", "--quick", "--bounces", "4"}, {"--bounces", "ibrr bench lightmap"}, kept);
  }
  SECTION("no usable OpenGL") {
    // An empty list of EGL vendor libraries hides every GPU and Mesa's surfaceless platform.
    test::writeText(output, "precious earlier result");
    const test::CommandResult result = test::runIbrr({"render", "cornell", "-o", output.string()},
                                                     {"__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/vendor.json"});
    INFO("stderr: " << result.err);
    CHECK(result.exitCode == 3);
    CHECK(lineCount(result.err) == 1);
    CHECK_THAT(result.err, Contains("no usable GPU"));
    CHECK(test::readText(output) == "precious earlier result");
  }
  SECTION("a bad command line exits 2, whatever refuses it: the parser, a method's table, a setting's range") {
    for (const std::vector<std::string>& arguments :
         {std::vector<std::string>{"bake", "cornell", "--hemicube", "63", "-o", (folder / "x.ibrr").string()},
          {"bake", "cornell", "--splat", "round", "-o", (folder / "x.ibrr").string()},
          {"bake", "cornell", "--method", "gather", "--atlas", "4", "-o", (folder / "x.lightmap").string()},
          {"bake", "cornell", "--paths", "-3", "-o", (folder / "x.ibrr").string()},
          {"render", "cornell", "--tone", "sepia", "-o", output.string()},
          {"render", "cornell", "--method", "albdeo", "-o", output.string()},
          {"render", "cornell", "--method", "albedo", "--filter", "box", "-o", output.string()}}) {
      const test::CommandResult result = test::runIbrr(arguments);
      INFO(result.err);
      CHECK(result.exitCode == 2);
      CHECK(lineCount(result.err) == 1);
    }
    // A file that cannot be read is bad input, not a bad command line.
    CHECK(test::runIbrr({"render", "cornell", "--store", (folder / "absent.ibrr").string(), "-o", output.string()})
              .exitCode == 1);
  }
  SECTION("unknown flag") {
    const test::CommandResult result = test::runIbrr({"render", "cornell", "--sise", "4x4", "-o", output.string()});
    CHECK(result.exitCode == 2);
    CHECK(lineCount(result.err) == 1);
    CHECK_THAT(result.err, Contains("--sise"));
  }
}

TEST_CASE("ibrr bench ibrr --sections insertion times the CPU insertion alone at both levels", "[cli][gpu]") {
  const test::CommandResult result = test::runIbrr({"bench", "ibrr", "--quick", "--sections", "insertion"});
  INFO(result.out << result.err);
  REQUIRE(result.exitCode == 0);
  CHECK_THAT(result.out, !Contains("bake (") && !Contains("cpu warp"));  // the bake section did not run
  // "insertion at R = 256: 8 hemicubes (...), W writes per hemicube | 1 thread T ns per write | 2 threads U ns..."
  const std::regex line(R"(insertion at R = +(\d+): (\d+) hemicubes.*, (\d+) writes per hemicube \| 1 thread )"
                        R"(([0-9.]+) ns per write \| (\d+) threads ([0-9.]+) ns per write)");
  std::vector<std::pair<int, double>> writesPerHemicube;  // (R, writes)
  for (auto it = std::sregex_iterator(result.out.begin(), result.out.end(), line); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    CHECK(std::stoi(m[2]) == 8);  // --quick: 8 hemicubes
    const double oneThread = std::stod(m[4]), allThreads = std::stod(m[6]);
    CHECK((std::isfinite(oneThread) && oneThread > 0.0));
    CHECK((std::isfinite(allThreads) && allThreads > 0.0));
    writesPerHemicube.emplace_back(std::stoi(m[1]), std::stod(m[3]));
  }
  // The store's R and the bounces' level R/8: a finer level splits the same splats into at least as many pixels.
  REQUIRE(writesPerHemicube.size() == 2);
  CHECK(writesPerHemicube[0].first == 256);
  CHECK(writesPerHemicube[1].first == 32);
  CHECK(writesPerHemicube[1].second > 0.0);
  CHECK(writesPerHemicube[0].second >= writesPerHemicube[1].second);
}

TEST_CASE("Ctrl-C stops a bake cleanly: exit 130, no store and no temporary file left", "[cli][gpu]") {
  const fs::path folder = test::outputDir("cli_interrupt");
  const fs::path store = folder / "cornell.ibrr";
  // A bake long enough to be interrupted (tens of seconds), stopped after 1.5 s.
  test::checkInterruptedCleanly(folder, "bake cornell --paths 100000 -o " + store.string(), 1.5);
  CHECK_FALSE(fs::exists(store));
}

TEST_CASE("ibrr diff counts the dark pixels, outside the direct light's shadows too, and draws them", "[cli]") {
  // The reference: the Cornell box's albedo view; the test: the same with its left 8 columns at 40%.
  const fs::path folder = test::outputDir("cli_diff_dark");
  const fs::path reference = folder / "reference.exr", darkened = folder / "darkened.exr";
  const fs::path picture = folder / "dark.png";
  REQUIRE(test::runIbrr({"render", "cornell", "--view", "albedo", "--size", "32x32", "-o", reference.string()})
              .exitCode == 0);
  Image image = readImage(reference);
  std::size_t darkenedLit = 0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < 8; ++x)
      if (glm::dot(image.at(x, y), glm::vec3(0.2126f, 0.7152f, 0.0722f)) > 0.0f) {
        image.at(x, y) *= 0.4f;
        ++darkenedLit;
      }
  writeImage(image, darkened);
  const test::CommandResult result = test::runIbrr({"diff", darkened.string(), reference.string(), "--scene", "cornell",
                                                    "--dark-pixels", picture.string()});
  INFO(result.err);
  REQUIRE(result.exitCode == 0);
  CHECK_THAT(result.out, Contains("dark pixels") && Contains("(" + std::to_string(darkenedLit) + " of ") &&
                             Contains("outside shadows") && Contains(picture.string()));
  CHECK(fs::exists(picture));
}

TEST_CASE("memory is estimated before it is spent: a bake or reference too big for the machine is refused at once",
          "[cli][errors]") {
  // A 24 GiB machine (ulimit -v): --ldc 8192 ended in "internal error" from std::bad_alloc after
  // minutes; now it is refused before the store is allocated, naming what it needs.
  const fs::path folder = test::outputDir("cli_memory");
  const std::string ibrr = IBRR_EXECUTABLE;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bake cornell --ldc 8192 -o " + (folder / "big.ibrr").string(), "--ldc"},
      {"reference cornell --size 16384x16384 -o " + (folder / "big.exr").string(), "--size"},
  };
  for (const auto& [arguments, hint] : cases) {
    const std::string command = "ulimit -v 25165824; '" + ibrr + "' " + arguments + " 2>'" +
                                (folder / "err.txt").string() + "'; echo $? >'" + (folder / "code.txt").string() + "'";
    REQUIRE(std::system(command.c_str()) == 0);
    const std::string err = test::readText(folder / "err.txt");
    INFO(arguments << "\nstderr: " << err);
    CHECK(test::readText(folder / "code.txt") == "1\n");
    CHECK(lineCount(err) == 1);
    CHECK_THAT(err, Contains("needs about") && Contains("GiB available") && Contains(hint));
    CHECK_FALSE(fs::exists(folder / "big.ibrr"));
    CHECK_FALSE(fs::exists(folder / "big.exr"));
  }
}
