// The `ibrr` command line: one subcommand per job, each with its own --help, parsed and run with one exit code
// (app/commands.hpp, runCommandLine).
#include "app/commands.hpp"
#include "cluster/cluster.hpp"
#include "gpu/context.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/memory.hpp"
#include "util/progress.hpp"

#include <tbb/global_control.h>

#include <array>
#include <cstdio>
#include <new>
#include <optional>
#include <string>

namespace {

// Every subcommand, in the order --help lists them.
constexpr std::array kCommands{
    &ibrr::app::addInfoCommand,      &ibrr::app::addBakeCommand,    &ibrr::app::addRenderCommand,
    &ibrr::app::addReferenceCommand, &ibrr::app::addDiffCommand,    &ibrr::app::addBenchCommand,
    &ibrr::app::addViewCommand,      &ibrr::app::addCompareCommand, &ibrr::app::addExportCommand,
};

// The exit code and the line (after "ibrr: ") for the exception being handled.
struct Failure {
  int exitCode = 1;
  std::string text;
  bool stoppedByPeer = false;
};

Failure describeCurrentException() {
  try {
    throw;
  } catch (const CLI::ParseError& error) {
    const std::string what = error.what();  // a refusal that names the command's help already says where to look
    return {2, "error: " + what + (what.find("--help") == std::string::npos ? " (see 'ibrr --help')" : "")};
  } catch (const ibrr::Interrupted& interrupted) {
    return {interrupted.exitCode(), interrupted.what()};
  } catch (const ibrr::gpu::GpuUnavailable& error) {
    return {3, std::string("error: ") + error.what()};
  } catch (const ibrr::cluster::StoppedByPeer& stopped) {
    return {1, stopped.what(), true};
  } catch (const ibrr::InternalError& error) {  // a bug: its own exit code, so that scripts can tell it from bad input
    return {4, error.what()};
  } catch (const ibrr::OptionError& error) {  // a setting the command line gave, refused before any work
    return {2, std::string("error: ") + error.what()};
  } catch (const ibrr::Error& error) {
    return {1, std::string("error: ") + error.what()};
  } catch (const std::bad_alloc&) {
    return {5, std::string("error: out of memory while ") + ibrr::MemoryPhase::current() +
                   "; nothing was written: lower --ldc, --atlas, --paths, --size or --spp, or use a smaller scene"};
  } catch (const std::exception& error) {
    return {4, std::string("internal error: ") + error.what() + " (please report it)"};
  }
}

// Under mpirun: this rank's failure told to the others and agreed on, so every rank ends with the same exit code
// and rank 0 prints the one message naming the rank that failed (cluster.hpp).
Failure agreeOnFailure(ibrr::cluster::Cluster& cluster, Failure mine) {
  if (!cluster.distributed()) return mine;
  if (!mine.stoppedByPeer) cluster.announceFailure();
  try {
    cluster.agree(ibrr::cluster::RankOutcome{mine.exitCode, mine.stoppedByPeer, mine.text});
  } catch (const ibrr::cluster::RankFailed& failed) {
    return {failed.exitCode(), failed.what()};
  }
  return mine;
}

// Under mpirun only the distributed commands run; every other command would only repeat its work per rank.
void requireDistributableCommand(const CLI::App& app, const ibrr::cluster::Cluster& cluster) {
  if (!cluster.distributed()) return;
  for (const CLI::App* command : app.get_subcommands())
    if (command->get_name() != "bake" && command->get_name() != "reference")
      throw ibrr::Error("'ibrr " + command->get_name() +
                        "' runs in one process; only 'ibrr bake' (the IBRR store) and 'ibrr reference' run across "
                        "mpirun's ranks: start it without mpirun");
}

}  // namespace

namespace ibrr::app {

int runCommandLine(int argc, char** argv) {
  ibrr::cluster::Cluster& cluster = ibrr::cluster::Cluster::world();  // MPI starts here under mpirun
  const bool silent = cluster.distributed() && !cluster.isRoot();     // rank 0 speaks for every rank
  if (silent && std::freopen("/dev/null", "w", stdout) == nullptr) return 1;
  CLI::App app{
      "ibrr: precomputed diffuse global illumination with the image-based radiosity representation "
      "(layered depth cube of radiosity) and texel-lightmap radiosity solvers"};
  app.require_subcommand(1);
  app.fallthrough();
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "print more detail (GPU, timings)");
  app.add_flag("-q,--quiet", quiet, "print only errors");
  unsigned threads = 0;
  app.add_option("--threads", threads,
                 "CPU threads for the parallel work (TBB: warp, rays, compensation); 0 = every core. Under mpirun, "
                 "per rank")
      ->capture_default_str()
      ->check(CLI::Range(0u, 4096u));
  std::optional<tbb::global_control> threadLimit;  // lives as long as the command runs
  app.footer(
      "Run 'ibrr COMMAND --help' for the options of a command.\nExample: ibrr render cornell --view albedo -o "
      "cornell.png\nUnder mpirun, 'ibrr bake' and 'ibrr reference' split their work over the ranks "
      "(docs/distributed.md).");
  app.parse_complete_callback([&] {
    ibrr::setLogLevel(quiet || silent ? ibrr::LogLevel::Quiet
                                      : verbose ? ibrr::LogLevel::Verbose : ibrr::LogLevel::Normal);
    requireDistributableCommand(app, cluster);
    if (threads > 0) threadLimit.emplace(tbb::global_control::max_allowed_parallelism, threads);
  });
  int exitCode = 0;
  try {
    for (auto addCommand : kCommands) addCommand(app);  // inside: a command's own IBRR_CHECKs report as errors
    app.parse(argc, argv);
    cluster.agree();  // every rank's part ended well (rank 0 has written the outputs)
  } catch (const CLI::CallForHelp& help) {
    exitCode = app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    exitCode = app.exit(help);
  } catch (const ibrr::cluster::RankFailed& failed) {  // agreed already: another rank's failure, or this one's
    if (!silent) std::fprintf(stderr, "ibrr: %s\n", failed.what());
    exitCode = failed.exitCode();
  } catch (...) {
    const Failure failure = agreeOnFailure(cluster, describeCurrentException());
    if (!silent) std::fprintf(stderr, "ibrr: %s\n", failure.text.c_str());
    exitCode = failure.exitCode;
  }
  return exitCode;
}

int runCommandLine(std::vector<std::string> arguments) {
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  return runCommandLine(int(argv.size()), argv.data());
}

}  // namespace ibrr::app
