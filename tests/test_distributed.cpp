// A bake split over processes gives the single bake's store: the light-path shares added in process (any
// build), and `mpirun -np 2 ibrr bake|reference` against one process (where MPI and mpirun were found).
#include "bake/bake.hpp"
#include "ibrr/ldc_builder.hpp"
#include "ibrr/store_file.hpp"
#include "scene/load.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace ibrr;
namespace fs = std::filesystem;

namespace {

struct SplitCase {
  const char* scene;
  bake::BakeOptions options;
};

// Small bakes of both scenes: the conference room's chairs and thin tables make hemicubes open layers the seeds
// lack (back faces), which a share defers.
std::vector<SplitCase> splitCases() {
  bake::BakeOptions cornell = bake::paperConfiguration();
  cornell.paths = 48;
  cornell.ldcResolution = 64;
  cornell.hemicubeResolution = 32;
  cornell.indirectHemicubeResolution = 16;
  cornell.warp = bake::WarpDevice::Cpu;
  bake::BakeOptions conference = cornell;
  conference.paths = 24;
  conference.ldcResolution = 48;
  conference.hemicubeResolution = 16;
  bake::BakeOptions conferenceRays = conference;  // only the VPLs after a bounce render hemicubes
  conferenceRays.direct = bake::DirectLight::Rays;
  bake::BakeOptions cornellLevels = cornell;  // the paper's direct VPLs at R, the bounces at R/2
  cornellLevels.indirectLdcResolution = cornell.ldcResolution / 2;
  return {{"cornell.json", cornell},
          {"conference.json", conference},
          {"conference.json", conferenceRays},
          {"cornell.json", cornellLevels}};
}

}  // namespace

TEST_CASE("light-path shares baked apart and added give the whole bake's store, byte for byte",
          "[distributed][gpu]") {
  test::glContext();
  for (const SplitCase& c : splitCases()) {
    const scene::Scene scene = scene::loadScene(test::sceneDir() / c.scene);
    const bake::LightPathBake bakedWhole = bake::bakeLightPaths(scene, c.options);
    const LayeredDepthCube whole =
        bake::lightPathStores(bakedWhole.sums, bakedWhole.indirect ? &*bakedWhole.indirect : nullptr).store;
    for (std::uint32_t shares : {2u, 3u}) {
      LayerSums sums, indirect;  // the store's level and the bounces' (--indirect-ldc)
      std::vector<DeferredOpening> deferred, indirectDeferred;
      for (std::uint32_t k = 0; k < shares; ++k) {
        bake::BakeOptions share = c.options;
        share.firstPath = c.options.paths * k / shares;
        share.endPath = c.options.paths * (k + 1) / shares;
        bake::LightPathBake part = bake::bakeLightPaths(scene, share);
        sums = k == 0 ? std::move(part.sums) : addLayerSums(sums, part.sums);
        deferred.insert(deferred.end(), part.deferred.begin(), part.deferred.end());
        REQUIRE(part.indirect.has_value() == bakedWhole.indirect.has_value());
        if (!part.indirect) continue;
        indirect = k == 0 ? std::move(*part.indirect) : addLayerSums(indirect, *part.indirect);
        indirectDeferred.insert(indirectDeferred.end(), part.indirectDeferred.begin(), part.indirectDeferred.end());
      }
      INFO(c.scene << " (direct " << bake::directLightName(c.options.direct) << ", R2 "
                   << bake::indirectLevelResolution(c.options) << ") in " << shares << " shares: " << deferred.size()
                   << " deferred records");
      if (std::string(c.scene) == "conference.json") CHECK(!deferred.empty());  // the case the deferral is for
      const LayerSums coarse = bakedWhole.indirect ? openDeferredLayers(indirect, std::move(indirectDeferred)) : LayerSums();
      const LayeredDepthCube added =
          bake::lightPathStores(openDeferredLayers(sums, std::move(deferred)), bakedWhole.indirect ? &coarse : nullptr)
              .store;
      REQUIRE(added.layers().size() == whole.layers().size());
      CHECK(added.vplCount() == whole.vplCount());
      CHECK(serializeStore(added) == serializeStore(whole));
    }
  }
}

TEST_CASE("a share of the light paths is refused when it is empty or past the paths, or has a time budget",
          "[distributed]") {
  bake::BakeOptions options;
  options.paths = 10;
  options.firstPath = 4;
  options.endPath = 4;
  CHECK_THROWS_WITH(bake::validateBakeOptions(options), Catch::Contains("share [4, 4)"));
  options.endPath = 11;
  CHECK_THROWS_WITH(bake::validateBakeOptions(options), Catch::Contains("of the 10 paths"));
  options.endPath = 8;
  CHECK_NOTHROW(bake::validateBakeOptions(options));
  options.timeBudgetSeconds = 5.0;
  CHECK_THROWS_WITH(bake::validateBakeOptions(options), Catch::Contains("--budget"));
}

#ifdef IBRR_TEST_MPIRUN

namespace {

// `mpirun` with the job's arguments (a shell word list, MPMD colons allowed); as root where the tests run so.
test::CommandResult runMpirun(const std::string& job, const fs::path& folder) {
  fs::create_directories(folder);
  const fs::path out = folder / "out.txt", err = folder / "err.txt";
  const std::string command = "cd " + test::shellQuote(folder.string()) +
                              " && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 " +
                              test::shellQuote(IBRR_TEST_MPIRUN) + " --oversubscribe " + job + " >" +
                              test::shellQuote(out.string()) + " 2>" + test::shellQuote(err.string()) + " </dev/null";
  const int status = std::system(command.c_str());
  test::CommandResult result;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = test::readText(out);
  result.err = test::readText(err);
  return result;
}

std::string ibrrWords() { return test::shellQuote(IBRR_EXECUTABLE); }

std::string fileBytes(const fs::path& path) { return fs::exists(path) ? test::readText(path) : std::string("(none)"); }

}  // namespace

TEST_CASE("mpirun -np 2 ibrr bake gives the one-process store byte for byte, with bias compensation, direct rays "
          "and the bounces' level",
          "[distributed][mpi]") {
  const fs::path folder = fs::path(IBRR_TEST_OUTPUT_DIR) / "mpi_bake";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string cornell = "bake cornell --paths 48 --ldc 64 --hemicube 32 --indirect-hemicube 16 --warp cpu";
  const std::string conference = "bake " + test::shellQuote((test::sceneDir() / "conference.json").string()) +
                                 " --paths 24 --ldc 48 --hemicube 16 --indirect-hemicube 16 --warp cpu";
  for (const auto& [name, arguments] :
       {std::pair{"cornell", cornell}, std::pair{"conference", conference},
        std::pair{"cornell_rays", cornell + " --direct rays --indirect-ldc 32"}}) {
    const std::string one = std::string(name) + "_1.ibrr", two = std::string(name) + "_2.ibrr";
    const test::CommandResult single = runMpirun("-np 1 " + ibrrWords() + " " + arguments + " -o " + one, folder);
    INFO(single.err);
    REQUIRE(single.exitCode == 0);
    const test::CommandResult split = runMpirun("-np 2 " + ibrrWords() + " " + arguments + " -o " + two, folder);
    INFO(split.err);
    REQUIRE(split.exitCode == 0);
    CHECK(split.out.find("ranks            2:") != std::string::npos);  // rank 0's summary covers both ranks
    CHECK(fileBytes(folder / one) == fileBytes(folder / two));
  }
}

TEST_CASE("mpirun -np 2 ibrr reference gives the one-process image and variance byte for byte",
          "[distributed][mpi]") {
  const fs::path folder = fs::path(IBRR_TEST_OUTPUT_DIR) / "mpi_reference";
  fs::remove_all(folder);
  const std::string arguments = " reference cornell --size 40x24 --spp 32";
  REQUIRE(runMpirun("-np 1 " + ibrrWords() + arguments + " -o one.exr", folder).exitCode == 0);
  const test::CommandResult split = runMpirun("-np 2 " + ibrrWords() + arguments + " -o two.exr", folder);
  INFO(split.err);
  REQUIRE(split.exitCode == 0);
  for (const char* suffix : {".exr", ".pfm", ".variance.exr"})
    CHECK(fileBytes(folder / (std::string("one") + suffix)) == fileBytes(folder / (std::string("two") + suffix)));
}

TEST_CASE("a rank that fails ends every rank with one message naming it, and no store is written",
          "[distributed][mpi]") {
  const fs::path folder = fs::path(IBRR_TEST_OUTPUT_DIR) / "mpi_failure";
  fs::remove_all(folder);
  // Rank 1 is given a scene that does not exist, as when a node lacks the shared folder.
  const std::string bake = " bake cornell --paths 64 --ldc 64 -o store.ibrr";
  const test::CommandResult result = runMpirun(
      "-np 1 " + ibrrWords() + bake + " : -np 1 " + ibrrWords() + " bake /nonexistent/scene.json --paths 64 --ldc 64 "
      "-o store.ibrr", folder);
  INFO(result.err);
  CHECK(result.exitCode != 0);
  CHECK(result.err.find("ibrr: rank 1 of 2: error: /nonexistent/scene.json: scene file not found") != std::string::npos);
  std::size_t errorLines = 0;
  for (std::size_t at = result.err.find("ibrr: "); at != std::string::npos; at = result.err.find("ibrr: ", at + 1))
    errorLines += result.err.compare(at, 11, "ibrr: rank ") == 0 ? 1 : 0;
  CHECK(errorLines == 1);
  CHECK(!fs::exists(folder / "store.ibrr"));

  const test::CommandResult render =
      runMpirun("-np 2 " + ibrrWords() + " render cornell --view albedo -o render.png", folder);
  CHECK(render.exitCode == 1);
  CHECK(render.err.find("runs in one process") != std::string::npos);
  CHECK(!fs::exists(folder / "render.png"));

  // A method of the table that bakes in one process names those mpirun splits (the table's distributed ones).
  const test::CommandResult lightmap =
      runMpirun("-np 2 " + ibrrWords() + " bake cornell --method gather -o gather.lightmap", folder);
  CHECK(lightmap.exitCode != 0);
  CHECK(lightmap.err.find("--method gather bakes in one process; under mpirun only --method ibrr is split") !=
        std::string::npos);
  CHECK(!fs::exists(folder / "gather.lightmap"));
}

#endif
