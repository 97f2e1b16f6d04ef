// Every command example of README.md runs as written. The examples are read from the README itself:
// each `ibrr ...` or `mpirun ...` line in backticks or in a code block that names a real argument (not a
// placeholder such as SCENE, FILE or N, nor a bare `ibrr render`). They run in README order, in two halves of
// a folder each; a folder holds what they read (a small store, matrix, reference and render named as the README
// names them, a hostfile, scene.json, the conference room's store); paths under /shared/ are that folder.
//
// An example that ends within kRunSeconds must exit 0. One that is still working then (a default bake, a
// comparison, a benchmark, a window) gets Ctrl-C, and must stop cleanly: exit 130 with "interrupted" (mpirun
// ends its ranks itself: any exit), no error printed before it, no temporary file left, and every file of the
// folder as it was: an interrupted `ibrr bake cornell -o cornell.ibrr` keeps the store that was there.
//
// It opens windows (`ibrr view`), so CTest runs it under xvfb-run (tests/CMakeLists.txt).
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
using namespace ibrr;

namespace {

constexpr double kRunSeconds = 2.0;

std::vector<std::string> words(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> out;
  for (std::string word; stream >> word;) out.push_back(word);
  return out;
}

// A runnable example: after `ibrr` (and any global option with its value, e.g. --threads 4) comes a command
// and then a positional argument; no word is a placeholder (upper case: SCENE, FILE, X.ibrr, N) or syntax
// ([...], a|b, ...).
bool isRunnableExample(const std::string& line) {
  static const std::regex placeholder(R"((^|[^a-z])[A-Z]{1,}([^a-z]|$))");
  if (line.find('[') != std::string::npos || line.find('|') != std::string::npos ||
      line.find("...") != std::string::npos)
    return false;
  const std::vector<std::string> all = words(line);
  std::size_t at = 0;
  if (all[0] == "mpirun")
    while (at < all.size() && all[at] != "ibrr") ++at;
  for (std::size_t k = at; k < all.size(); ++k)
    if (std::regex_search(all[k], placeholder)) return false;
  std::size_t command = at + 1;
  while (command < all.size() && all[command].rfind("--", 0) == 0) command += 2;  // global options
  return command + 1 < all.size() && all[command + 1][0] != '-';
}

// Every `ibrr ...`/`mpirun ...` in backticks, and every such line of a code block, in README order.
std::vector<std::string> readmeExamples(const std::string& readme) {
  std::vector<std::string> found;
  bool inBlock = false;
  std::istringstream lines(readme);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) {
      inBlock = !inBlock;
      continue;
    }
    if (inBlock) {
      const std::string trimmed = line.substr(std::min(line.find_first_not_of(' '), line.size()));
      if (trimmed.rfind("ibrr ", 0) == 0 || trimmed.rfind("mpirun ", 0) == 0)
        found.push_back(trimmed.substr(0, trimmed.find("  #")));
      continue;
    }
    static const std::regex span("`((ibrr|mpirun) [^`]+)`");
    for (std::sregex_iterator it(line.begin(), line.end(), span), end; it != end; ++it) found.push_back((*it)[1]);
  }
  std::vector<std::string> runnable;
  for (const std::string& example : found)
    if (isRunnableExample(example)) runnable.push_back(example);
  return runnable;
}

// Runs a shell command in `folder` with the built `ibrr` first on the PATH, as a user who installed it has it
// (mpirun may run as root here, as CI does).
test::CommandResult runInFolder(const fs::path& folder, const std::string& command) {
  const std::string line = "cd " + test::shellQuote(folder.string()) +
                           " && export PATH=" + test::shellQuote(fs::path(IBRR_EXECUTABLE).parent_path().string()) +
                           ":\"$PATH\" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 && " + command +
                           " >out.txt 2>err.txt </dev/null";
  const int status = std::system(line.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::readText(folder / "out.txt"),
          test::readText(folder / "err.txt")};
}

// What the examples read, made small, under the names the README gives them.
void prepareInputs(const fs::path& folder) {
  for (const char* command :
       {"ibrr bake cornell --paths 16 --ldc 64 -o cornell.ibrr",
        "ibrr bake cornell --method matrix --atlas 16 --hemicube 16 --save-matrix cornell.ffmatrix -o m.lightmap",
        "ibrr reference cornell --size 256x256 --spp 2 -o ref.exr",
        "ibrr render cornell --store cornell.ibrr --size 256x256 -o ibrr.exr"}) {
    const test::CommandResult result = runInFolder(folder, command);
    INFO(command << "\n" << result.err);
    REQUIRE(result.exitCode == 0);
  }
  for (const char* file : {"cornell.obj", "cornell.mtl"}) fs::copy_file(test::sceneDir() / file, folder / file);
  fs::copy_file(test::sceneDir() / "cornell.json", folder / "scene.json");
  fs::create_directory_symlink(test::sceneDir(), folder / "scenes");
  test::writeText(folder / "hosts", "localhost slots=8\n");
  if (fs::exists(test::sharedScenesDir() / "conference")) {
    const std::string bake =
        "ibrr bake scenes/conference.json --paths 2 --ldc 32 --hemicube 32 "
        "--indirect-hemicube 16 --bias-compensation off -o conference.ibrr";
    const test::CommandResult result = runInFolder(folder, bake);
    INFO(result.err);
    REQUIRE(result.exitCode == 0);
  }
}

// Every file and folder under `folder` (but the logs), with each file's bytes.
std::map<std::string, std::string> folderContents(const fs::path& folder) {
  std::map<std::string, std::string> contents;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(folder)) {
    const std::string name = fs::relative(entry.path(), folder).string();
    if (name == "out.txt" || name == "err.txt") continue;
    contents[name] = entry.is_regular_file() ? test::readText(entry) : std::string("(not a file)");
  }
  return contents;
}

// Runs the examples whose place in README order is `half` (0: the first half, 1: the second), in a folder of
// their own with the inputs made again: two cases that ctest runs side by side, each well inside a minute.
void runExamples(int half) {
  const std::vector<std::string> all = readmeExamples(test::readText(test::sourceDir() / "README.md"));
  REQUIRE(all.size() >= 12);  // the commands table alone gives one or two a command
  const std::size_t middle = all.size() / 2;
  const std::vector<std::string> examples(half == 0 ? all.begin() : all.begin() + std::ptrdiff_t(middle),
                                          half == 0 ? all.begin() + std::ptrdiff_t(middle) : all.end());
  const fs::path folder = test::outputDir(half == 0 ? "readme_examples_first" : "readme_examples_second");
  prepareInputs(folder);
  for (std::string example : examples) {
    const bool mpirun = example.rfind("mpirun", 0) == 0;
#ifndef IBRR_TEST_MPIRUN
    if (mpirun) {
      WARN("not run (no MPI build or mpirun): " << example);
      continue;
    }
#endif
    if (example.find("conference") != std::string::npos && !fs::exists(test::sharedScenesDir() / "conference")) {
      WARN("not run (no shared scenes): " << example);
      continue;
    }
    example = std::regex_replace(example, std::regex("/shared/"), "");
    const std::map<std::string, std::string> before = folderContents(folder);
    const auto start = std::chrono::steady_clock::now();
    const test::CommandResult result =
        runInFolder(folder, "timeout -s INT --preserve-status " + std::to_string(kRunSeconds) + " " + example);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Exit 0 soon after the signal is an example that finished as Ctrl-C came; exit 0 long after it, one
    // that ignored Ctrl-C (fails below: it must exit 130).
    const bool interrupted = seconds >= kRunSeconds && !(result.exitCode == 0 && seconds < kRunSeconds + 1.0);
    std::printf("%-100s %s after %.1f s, exit %d\n", example.c_str(), interrupted ? "interrupted" : "ended", seconds,
                result.exitCode);
    INFO(example << "\n" << (interrupted ? "interrupted after " : "ended after ") << seconds << " s\n" << result.err);
    if (!interrupted) {
      CHECK(result.exitCode == 0);
      continue;
    }
    if (!mpirun) {
      CHECK(result.exitCode == 130);
      CHECK(result.err.find("interrupted") != std::string::npos);
    }
    CHECK(result.err.find("error") == std::string::npos);
    CHECK(folderContents(folder) == before);  // nothing half-written, nothing clobbered, no temporary file
  }
}

}  // namespace

TEST_CASE("every command example of README.md runs: the first half", "[.readme_examples_first]") { runExamples(0); }

TEST_CASE("every command example of README.md runs: the second half", "[.readme_examples_second]") { runExamples(1); }
