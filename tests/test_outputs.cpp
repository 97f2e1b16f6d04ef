// Nothing is lost: no command writes over one of its inputs, outputs are replaced all or nothing
// under unique temporary names, special and read-only outputs are refused, symbolic links are
// written through, and SIGINT / SIGTERM / SIGKILL during a command leave every earlier output as
// it was. Each case runs the built `ibrr` and compares every byte of its folder before and after.
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

using namespace ibrr;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// Every entry under a folder: a regular file by its bytes, a link by its target, else its kind.
using FolderSnapshot = std::map<std::string, std::string>;

FolderSnapshot snapshot(const fs::path& folder) {
  FolderSnapshot entries;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const std::string name = fs::relative(entry.path(), folder).string();
    if (entry.is_symlink())
      entries[name] = "link to " + fs::read_symlink(entry.path()).string();
    else if (entry.is_regular_file()) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      entries[name] = "file " + bytes.str();
    } else
      entries[name] = entry.is_directory() ? "folder" : "special";
  }
  return entries;
}

// The names that differ between two snapshots, for the failure message.
std::string differences(const FolderSnapshot& before, const FolderSnapshot& after) {
  std::string names;
  for (const auto& [name, content] : before)
    if (!after.count(name) || after.at(name) != content) names += " " + name + (after.count(name) ? "(changed)" : "(gone)");
  for (const auto& [name, content] : after)
    if (!before.count(name)) names += " " + name + "(new)";
  return names;
}

int lineCount(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

// The inputs every case draws on, made once per test case in `folder`: the Cornell box as a
// manifest with its OBJ and MTL, a small store, two reference images, a gather lightmap with its
// data file, and links to them.
void makeInputs(const fs::path& folder) {
  for (const char* name : {"cornell.json", "cornell.obj", "cornell.mtl"})
    fs::copy_file(test::sceneDir() / name, folder / name);
  const auto run = [&](const std::vector<std::string>& arguments) {
    const test::CommandResult result = test::runIbrr(arguments);
    INFO(result.err);
    REQUIRE(result.exitCode == 0);
  };
  const std::string scene = (folder / "cornell.json").string();
  run({"-q", "bake", scene, "--paths", "4", "--ldc", "32", "-o", (folder / "s.ibrr").string()});
  run({"-q", "reference", scene, "--size", "16x16", "--spp", "1", "-o", (folder / "a.exr").string()});
  run({"-q", "reference", scene, "--size", "16x16", "--spp", "1", "--seed", "1", "-o", (folder / "b.exr").string()});
  run({"-q", "bake", scene, "--method", "gather", "--atlas", "16", "--hemicube", "16", "--iterations", "1", "-o",
       (folder / "g.lightmap").string()});
  fs::create_symlink("cornell.json", folder / "link.json");
  fs::create_hard_link(folder / "cornell.obj", folder / "hard.ibrr");
}

struct RefusalRow {
  std::vector<std::string> arguments;  // "@" at the start of an argument stands for the folder
  std::string mention;                 // a part of the one-line message
};

std::vector<std::string> expand(const std::vector<std::string>& arguments, const fs::path& folder) {
  std::vector<std::string> expanded;
  for (const std::string& argument : arguments)
    expanded.push_back(argument.rfind('@', 0) == 0 ? (folder / argument.substr(1)).string() : argument);
  return expanded;
}

// Runs a command that must be refused: non-zero exit, one line naming `mention`, and every byte of
// `folder` as it was (no output, no temporary file).
void checkRefusedUntouched(const fs::path& folder, const RefusalRow& row, int exitCode = 1) {
  const FolderSnapshot before = snapshot(folder);
  std::vector<std::string> arguments = expand(row.arguments, folder);
  arguments.insert(arguments.begin(), "-q");  // errors only: the refusal is the one line
  const test::CommandResult result = test::runIbrr(arguments);
  INFO("ibrr " << Catch::Detail::stringify(row.arguments) << "\nstderr: " << result.err);
  CHECK(result.exitCode == exitCode);
  CHECK(lineCount(result.err) == 1);
  CHECK_THAT(result.err, Contains(row.mention));
  const FolderSnapshot after = snapshot(folder);
  INFO("changed:" << differences(before, after));
  CHECK(after == before);
}

// Starts `ibrr` in the background, waits for `trigger` (a shell condition, polled every 50 ms for at
// most 60 s), sends `signal` and returns the exit code; stdout and stderr go to `logs`.
int runAndSignal(const fs::path& folder, const fs::path& logs, const std::vector<std::string>& arguments,
                 const std::string& environment, const std::string& trigger, const std::string& signal) {
  std::string command = "cd '" + folder.string() + "' && (env " + environment + " '" + IBRR_EXECUTABLE + "'";
  for (const std::string& argument : arguments) command += " '" + argument + "'";
  command += " >'" + (logs / "out.txt").string() + "' 2>'" + (logs / "err.txt").string() + "' & pid=$!; " +
             "for i in $(seq 1200); do " + trigger + " && break; sleep 0.05; done; kill -" + signal +
             " $pid; wait $pid; echo $? >'" + (logs / "code.txt").string() + "')";
  for (const char* log : {"out.txt", "err.txt", "code.txt"}) fs::remove(logs / log);
  REQUIRE(std::system(command.c_str()) == 0);
  return std::stoi(test::readText(logs / "code.txt"));
}

// True (as a shell condition) once a hidden temporary output exists in the folder.
constexpr const char* kTemporaryExists = "ls -A | grep -q '^\\..*\\.tmp-'";

}  // namespace

TEST_CASE("no command writes onto one of its inputs: -o set to each input and derived name is refused", "[cli][gpu][errors]") {
  const fs::path folder = test::outputDir("outputs_inputs");
  makeInputs(folder);
  const std::vector<RefusalRow> rows = {
      // The settings sidecar STEM.json of `reference -o STEM.exr` was written over the manifest.
      {{"reference", "@cornell.json", "--spp", "1", "--size", "8x8", "-o", "@cornell.exr"}, "scene manifest"},
      {{"bake", "@cornell.json", "--paths", "4", "-o", "@cornell.json"}, "scene manifest"},
      {{"bake", "@cornell.obj", "--paths", "4", "-o", "@cornell.obj"}, "mesh file"},
      {{"bake", "@cornell.json", "--paths", "4", "-o", "@cornell.obj"}, "mesh file"},
      {{"bake", "@cornell.json", "--paths", "4", "-o", "@cornell.mtl"}, "file the mesh reads"},
      // Another name for the same file: a symbolic link, a hard link.
      {{"bake", "@cornell.json", "--paths", "4", "-o", "@link.json"}, "scene manifest"},
      {{"bake", "@cornell.json", "--paths", "4", "-o", "@hard.ibrr"}, "mesh file"},
      {{"bake", "@cornell.json", "--method", "gather", "--atlas", "16", "-o", "@cornell.obj"}, "mesh file"},
      {{"bake", "@cornell.json", "--method", "matrix", "--atlas", "16", "--save-matrix", "@cornell.mtl", "-o",
        "@m.lightmap"},
       "file the mesh reads"},
      {{"diff", "@a.exr", "@b.exr", "-o", "@a.exr"}, "image"},
      {{"diff", "@a.exr", "@b.exr", "--dark-pixels", "@b.exr"}, "image"},
      // The lightmap's data file is an input of its own.
      {{"render", "@cornell.json", "--lightmap", "@g.lightmap", "--size", "8x8", "-o", "@g.lightmap.exr"}, "image"},
      {{"view", "@cornell.json", "--offscreen", "--frames", "1", "--store", "@s.ibrr", "--timings", "@s.ibrr"},
       "store file"},
      {{"view", "@cornell.json", "--offscreen", "--frames", "1", "--bake-output", "@cornell.obj"}, "cornell.obj"},
      // A report folder that holds the inputs was moved aside and deleted.
      {{"compare", "@cornell.json", "--methods", "ibrr", "--reference", "@a.exr", "-o", "@"}, "not an ibrr report"},
  };
  for (const RefusalRow& row : rows) checkRefusedUntouched(folder, row);

  // And every command with each of its inputs in turn as its output (a wrong extension is refused
  // too, naming the file: what matters is that no byte changes).
  const std::vector<std::string> sceneFiles = {"cornell.json", "cornell.obj", "cornell.mtl", "link.json", "hard.ibrr"};
  struct Command {
    std::vector<std::string> arguments;  // the output flag and its value are appended
    std::vector<std::string> inputs;
    std::string outputFlag = "-o";
  };
  std::vector<Command> commands = {
      {{"reference", "@cornell.json", "--spp", "1", "--size", "8x8"}, sceneFiles},
      {{"render", "@cornell.json", "--store", "@s.ibrr", "--size", "8x8"}, {"cornell.json", "cornell.obj", "s.ibrr"}},
      {{"render", "@cornell.json", "--lightmap", "@g.lightmap", "--size", "8x8"}, {"g.lightmap", "g.lightmap.exr"}},
      {{"diff", "@a.exr", "@b.exr"}, {"a.exr", "b.exr"}},
      {{"view", "@cornell.json", "--offscreen", "--frames", "1", "--store", "@s.ibrr"},
       {"cornell.json", "cornell.mtl", "s.ibrr"},
       "--timings"},
  };
  commands.push_back({{"bake", "@cornell.json", "--paths", "4"}, sceneFiles});
  for (const char* method : {"gather", "progressive", "stochastic", "matrix"})
    commands.push_back({{"bake", "@cornell.json", "--method", method, "--atlas", "16"}, sceneFiles});
  for (const Command& command : commands)
    for (const std::string& input : command.inputs) {
      RefusalRow row{command.arguments, input};
      row.arguments.push_back(command.outputFlag);
      row.arguments.push_back("@" + input);
      checkRefusedUntouched(folder, row);
    }
}

TEST_CASE("outputs: unique temporary names, links written through, special and read-only files refused", "[cli][gpu][errors]") {
  const fs::path folder = test::outputDir("outputs_files");
  for (const char* name : {"cornell.json", "cornell.obj", "cornell.mtl"})
    fs::copy_file(test::sceneDir() / name, folder / name);
  const std::string scene = (folder / "cornell.json").string();
  const auto bake = [&](const std::string& output) {
    return test::runIbrr({"-q", "bake", scene, "--paths", "4", "--ldc", "32", "-o", (folder / output).string()});
  };

  SECTION("a user's file named like a fixed temporary name is never touched") {
    test::writeText(folder / "x.ibrr.tmp", "mine");
    REQUIRE(bake("x.ibrr").exitCode == 0);
    CHECK(test::readText(folder / "x.ibrr.tmp") == "mine");
    CHECK(test::runIbrr({"info", (folder / "x.ibrr").string()}).exitCode == 0);
  }
  SECTION("a symbolic link is written through: the link stays, its target is the new store") {
    fs::create_symlink("target.ibrr", folder / "link.ibrr");  // dangling until the bake
    REQUIRE(bake("link.ibrr").exitCode == 0);
    CHECK(fs::is_symlink(fs::symlink_status(folder / "link.ibrr")));
    CHECK(test::runIbrr({"info", (folder / "target.ibrr").string()}).exitCode == 0);
    REQUIRE(bake("link.ibrr").exitCode == 0);  // and again, over the existing target
    CHECK(fs::is_symlink(fs::symlink_status(folder / "link.ibrr")));
  }
  SECTION("read-only, device, FIFO and folder outputs are refused and stay as they were") {
    test::writeText(folder / "locked.ibrr", "read-only");
    fs::permissions(folder / "locked.ibrr", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    checkRefusedUntouched(folder, {{"bake", scene, "--paths", "4", "-o", "@locked.ibrr"}, "read-only"});
    REQUIRE(mkfifo((folder / "pipe.ibrr").c_str(), 0600) == 0);
    checkRefusedUntouched(folder, {{"bake", scene, "--paths", "4", "-o", "@pipe.ibrr"}, "FIFO"});
    fs::create_directory(folder / "folder.ibrr");
    checkRefusedUntouched(folder, {{"bake", scene, "--paths", "4", "-o", "@folder.ibrr"}, "folder"});
    // As root, `-o /dev/full` replaced the device node with a regular file. The same device is made
    // here (as root), so that a faulty build replaces this copy and not the system's.
    const fs::path device = folder / "full.ibrr";
    if (mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) {
      checkRefusedUntouched(folder, {{"bake", scene, "--paths", "4", "-o", "@full.ibrr"}, "device"});
      struct stat info {};
      REQUIRE(stat(device.c_str(), &info) == 0);
      CHECK(S_ISCHR(info.st_mode));
    } else {
      WARN("not root: the device-node case is left out (mknod: " << std::strerror(errno) << ")");
    }
    fs::permissions(folder / "locked.ibrr", fs::perms::owner_write, fs::perm_options::add);
  }
  SECTION("a report folder of the user's that is not an ibrr report is never replaced") {
    fs::create_directory(folder / "mine");
    test::writeText(folder / "mine" / "notes.txt", "keep");
    checkRefusedUntouched(folder, {{"compare", scene, "--methods", "ibrr", "-o", "@mine"}, "not an ibrr report"});
  }
}

TEST_CASE("SIGINT and SIGTERM during a store write: exit 130 / 143, the earlier store intact, no temporary file", "[cli][gpu][signals]") {
  const fs::path folder = test::outputDir("outputs_signals");
  const fs::path logs = test::outputDir("outputs_signals_logs");
  for (const char* name : {"cornell.json", "cornell.obj", "cornell.mtl"})
    fs::copy_file(test::sceneDir() / name, folder / name);
  const std::vector<std::string> bake = {"bake", "cornell.json", "--paths", "4", "--ldc", "32", "-o", "s.ibrr"};
  REQUIRE(test::runIbrr({"-q", "bake", (folder / "cornell.json").string(), "--paths", "8", "--ldc", "32", "-o",
                         (folder / "s.ibrr").string()})
              .exitCode == 0);
  const FolderSnapshot before = snapshot(folder);
  // The hook holds the finished temporary file before its rename: the signal comes while the
  // output is being written (this run's store differs from the earlier one: 4 paths, not 8).
  for (const auto& [signal, code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    INFO("SIG" << signal);
    CHECK(runAndSignal(folder, logs, bake, "IBRR_TEST_HOLD_OUTPUT_SECONDS=60", kTemporaryExists, signal) == code);
    CHECK_THAT(test::readText(logs / "err.txt"), Contains("nothing was written"));
    const FolderSnapshot after = snapshot(folder);
    INFO("changed:" << differences(before, after));
    CHECK(after == before);
  }
  SECTION("SIGKILL leaves the earlier store intact (the temporary file is all that can remain)") {
    CHECK(runAndSignal(folder, logs, bake, "IBRR_TEST_HOLD_OUTPUT_SECONDS=60", kTemporaryExists, "KILL") == 137);
    FolderSnapshot after = snapshot(folder);
    std::erase_if(after, [](const auto& entry) { return entry.first.find(".tmp-") != std::string::npos; });
    CHECK(after == before);
  }
  SECTION("without the signal the same command replaces the store") {
    CHECK(test::runIbrr({"-q", "bake", (folder / "cornell.json").string(), "--paths", "4", "--ldc", "32", "-o",
                         (folder / "s.ibrr").string()})
              .exitCode == 0);
    CHECK(snapshot(folder) != before);
  }
}

TEST_CASE("SIGINT and SIGTERM during reference, compare and the viewer: the earlier outputs intact, no temporary file", "[cli][gpu][signals]") {
  const fs::path folder = test::outputDir("outputs_signals_long");
  const fs::path logs = test::outputDir("outputs_signals_long_logs");
  for (const char* name : {"cornell.json", "cornell.obj", "cornell.mtl"})
    fs::copy_file(test::sceneDir() / name, folder / name);
  REQUIRE(test::runIbrr({"-q", "reference", (folder / "cornell.json").string(), "--size", "8x8", "--spp", "1", "-o",
                         (folder / "ref.exr").string()})
              .exitCode == 0);
  REQUIRE(test::runIbrr({"-q", "bake", (folder / "cornell.json").string(), "--paths", "4", "--ldc", "32", "-o",
                         (folder / "s.ibrr").string()})
              .exitCode == 0);
  fs::create_directory(folder / "report");  // an earlier report, to be kept
  test::writeText(folder / "report" / "index.html", "<html>earlier</html>");
  test::writeText(folder / "report" / "results.json", "{}");
  const FolderSnapshot before = snapshot(folder);
  const std::vector<std::vector<std::string>> commands = {
      {"reference", "cornell.json", "--size", "64x64", "--spp", "1000000", "-o", "ref.exr"},
      {"compare", "cornell.json", "--methods", "ibrr,gather", "--reference-spp", "100000", "-o", "report"},
      {"view", "cornell.json", "--store", "s.ibrr", "--offscreen", "--frames", "1000000", "--timings", "t.csv"},
  };
  for (const auto& command : commands)
    for (const auto& [signal, code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
      INFO(command[0] << ", SIG" << signal);
      // Signalled 3 s after the start, with its work under way.
      CHECK(runAndSignal(folder, logs, command, "", "sleep 3", signal) == code);
      CHECK_THAT(test::readText(logs / "err.txt"), Contains("nothing was written"));
      const FolderSnapshot after = snapshot(folder);
      INFO("changed:" << differences(before, after));
      CHECK(after == before);
    }
}

TEST_CASE("the table of bad inputs: each refused with its exit code and message, every file unchanged, nothing written",
          "[cli][errors]") {
  // One row per bad input the issue found accepted, crashing or hanging; `checkRefusedUntouched`
  // compares every byte of the folder (inputs included) before and after, so nothing is written.
  const fs::path folder = test::outputDir("bad_input_table");
  test::writeText(folder / "tri.obj", "mtllib tri.mtl\nusemtl grey\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  test::writeText(folder / "tri.mtl", "newmtl grey\nKd 0.5 0.5 0.5\nKe 1 1 1\n");
  test::writeText(folder / "nan_kd.obj", "mtllib nan_kd.mtl\nusemtl bad\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  test::writeText(folder / "nan_kd.mtl", "newmtl bad\nKd nan 0.5 0.5\nKe 1 1 1\n");
  const auto manifest = [&](const std::string& name, const std::string& extra) {
    test::writeText(folder / name, R"({"meshes": [{"path": "tri.obj"}])" + extra + "}");
    return "@" + name;
  };
  const std::string farEye = manifest(
      "far_eye.json", R"(, "cameras": [{"name": "far", "eye": [1e39, 0, 0], "target": [0, 0, 0], "fov": 60}])");
  const std::string hugeQuad = manifest(
      "huge_quad.json",
      R"(, "lights": [{"type": "quad", "corner": [0, 5, 0], "edge1": [1e20, 0, 0], "edge2": [0, 0, 1e20], "radiance": [1, 1, 1]}])");
  const std::string negativeLight =
      manifest("negative_light.json", R"(, "lights": [{"type": "point", "position": [0, 3, 0], "intensity": [-1, 1, 1]}])");
  const std::string infiniteEmitter = manifest(
      "infinite_emitter.json", R"(, "lights": [{"type": "quad", "corner": [0, 5, 0], "edge1": [1, 0, 0], "edge2": [0, 0, 1], "radiance": [1e39, 1, 1]}])");
  REQUIRE(mkfifo((folder / "fifo.json").c_str(), 0600) == 0);
  fs::create_directory(folder / "store_folder.ibrr");
  fs::create_directory(folder / "ref.pfm");  // reference writes ref.exr and ref.pfm: one of them cannot be written

  struct Row {
    RefusalRow refusal;
    int exitCode;
  };
  const std::vector<Row> rows = {
      {{{"render", farEye, "--camera", "far", "-o", "@out.png"}, "far_eye.json"}, 1},  // Embree aborted
      {{{"render", hugeQuad, "-o", "@out.png"}, "huge_quad.json"}, 1},                  // Embree aborted
      {{{"render", negativeLight, "-o", "@out.png"}, "intensity"}, 1},                  // accepted
      {{{"bake", infiniteEmitter, "--paths", "4", "-o", "@out.ibrr"}, "radiance"}, 1},  // baked all black
      {{{"bake", "@nan_kd.obj", "--paths", "4", "-o", "@out.ibrr"}, "nan_kd"}, 1},      // accepted
      {{{"reference", "@tri.obj", "--time", "nan", "-o", "@out.exr"}, "--time"}, 2},    // never ended
      {{{"render", "@fifo.json", "-o", "@out.png"}, "FIFO"}, 1},                        // blocked forever
      {{{"render", "@tri.obj", "--store", "@store_folder.ibrr", "-o", "@out.png"}, "folder"}, 1},  // exit 4
      {{{"render", "@tri.obj", "--size", "4294967808x512", "-o", "@out.png"}, "--size"}, 1},       // became 512
      {{{"reference", "@tri.obj", "--spp", "1", "-o", "@ref.exr"}, "ref.pfm"}, 1},  // left an orphan ref.exr
  };
  for (const Row& row : rows) checkRefusedUntouched(folder, row.refusal, row.exitCode);
}
