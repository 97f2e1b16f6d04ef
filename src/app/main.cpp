// The `ibrr` executable: one subcommand per job, each with its own --help.
#include "app/commands.hpp"
#include "gpu/context.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/memory.hpp"
#include "util/progress.hpp"

#include <array>
#include <cstdio>
#include <new>

namespace {

// Every subcommand, in the order --help lists them.
constexpr std::array kCommands{
    &ibrr::app::addInfoCommand,      &ibrr::app::addBakeCommand,    &ibrr::app::addRenderCommand,
    &ibrr::app::addReferenceCommand, &ibrr::app::addDiffCommand,    &ibrr::app::addBenchCommand,
    &ibrr::app::addViewCommand,      &ibrr::app::addCompareCommand,
};

}  // namespace

int main(int argc, char** argv) {
  ibrr::installInterruptHandlers();  // Ctrl-C and SIGTERM stop every command at its next safe point
  CLI::App app{
      "ibrr: precomputed diffuse global illumination with the image-based radiosity representation "
      "(layered depth cube of radiosity) and texel-lightmap radiosity solvers"};
  app.require_subcommand(1);
  app.fallthrough();
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "print more detail (GPU, timings)");
  app.add_flag("-q,--quiet", quiet, "print only errors");
  app.footer(
      "Run 'ibrr COMMAND --help' for the options of a command.\nExample: ibrr render cornell --view albedo -o "
      "cornell.png");
  for (auto addCommand : kCommands) addCommand(app);
  app.parse_complete_callback([&] {
    ibrr::setLogLevel(quiet ? ibrr::LogLevel::Quiet : verbose ? ibrr::LogLevel::Verbose : ibrr::LogLevel::Normal);
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "ibrr: error: %s (see 'ibrr --help')\n", error.what());
    return 2;
  } catch (const ibrr::Interrupted& interrupted) {
    std::fprintf(stderr, "ibrr: %s\n", interrupted.what());
    return interrupted.exitCode();
  } catch (const ibrr::gpu::GpuUnavailable& error) {
    std::fprintf(stderr, "ibrr: error: %s\n", error.what());
    return 3;
  } catch (const ibrr::Error& error) {
    std::fprintf(stderr, "ibrr: error: %s\n", error.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "ibrr: error: out of memory while %s; nothing was written: lower --ldc, --atlas, --paths, --size "
                 "or --spp, or use a smaller scene\n",
                 ibrr::MemoryPhase::current());
    return 5;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ibrr: internal error: %s (please report it)\n", error.what());
    return 4;
  }
  return 0;
}
