#include "fuzz_support.hpp"

#include "scene/load.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace ibrr::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path g_scratch;

// Where the scratch folder goes: $TMPDIR when set, else /dev/shm. Every input is written to a file, and a
// file truncated and rewritten on ext4 is flushed to disk when closed (auto_da_alloc): in memory, the
// view-script target runs 13,000 inputs a second instead of 300.
fs::path scratchParent() {
  if (std::getenv("TMPDIR")) return fs::temp_directory_path();
  std::error_code error;
  return fs::is_directory("/dev/shm", error) ? fs::path("/dev/shm") : fs::temp_directory_path();
}

// A folder of this process's own: libFuzzer's -jobs and -fork run several processes at once.
fs::path makeScratchFolder() {
  std::string pattern = (scratchParent() / "ibrr_fuzz_XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    std::perror("ibrr fuzz: cannot make a scratch folder");
    std::abort();
  }
  return pattern;
}

void removeScratchFolder() {
  std::error_code ignored;
  if (!g_scratch.empty()) fs::remove_all(g_scratch, ignored);
}

}  // namespace

void initialize() {
  if (!g_scratch.empty()) return;
  setLogLevel(LogLevel::Quiet);
  g_scratch = makeScratchFolder();
  std::atexit(removeScratchFolder);
}

const fs::path& scratchFolder() { return g_scratch; }

fs::path writeScratchFile(const std::string& name, std::string_view bytes) {
  const fs::path path = g_scratch / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "ibrr fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

void copyIntoScratch(const std::string& sourceRelative) {
  const fs::path source = fs::path(IBRR_SOURCE_DIR) / sourceRelative;
  std::error_code error;
  fs::copy_file(source, g_scratch / source.filename(), fs::copy_options::overwrite_existing, error);
  if (error) {
    std::fprintf(stderr, "ibrr fuzz: cannot copy %s: %s\n", source.c_str(), error.message().c_str());
    std::abort();
  }
}

std::pair<std::string_view, std::string_view> splitAt(std::string_view input, std::string_view separator) {
  const std::size_t at = input.find(separator);
  if (at == std::string_view::npos) return {input, {}};
  return {input.substr(0, at), input.substr(at + separator.size())};
}

const scene::Scene& fixtureScene() {
  static const scene::Scene scene = [] {
    try {
      return scene::loadScene(fs::path(IBRR_SOURCE_DIR) / "scenes" / "cornell.json");
    } catch (const Error& error) {
      std::fprintf(stderr, "ibrr fuzz: cannot load the fixture scene: %s\n", error.what());
      std::abort();
    }
  }();
  return scene;
}

}  // namespace ibrr::fuzz
