// The `ibrr` executable: the command line of app/commands.hpp, with Ctrl-C and SIGTERM handled and, under mpirun,
// MPI finished when it ends. It first starts itself again with malloc on transparent huge pages, where that helps
// (util/memory.hpp).
#include "app/commands.hpp"
#include "cluster/cluster.hpp"
#include "util/memory.hpp"
#include "util/progress.hpp"

int main(int argc, char** argv) {
  ibrr::restartWithHugePageMalloc(argv);
  ibrr::installInterruptHandlers();  // Ctrl-C and SIGTERM stop every command at its next safe point
  const int exitCode = ibrr::app::runCommandLine(argc, argv);
  ibrr::cluster::Cluster::world().finish();
  return exitCode;
}
