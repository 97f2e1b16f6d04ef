// The `ibrr` executable: the command line of app/commands.hpp, with Ctrl-C and SIGTERM handled and, under mpirun,
// MPI finished when it ends.
#include "app/commands.hpp"
#include "cluster/cluster.hpp"
#include "util/progress.hpp"

int main(int argc, char** argv) {
  ibrr::installInterruptHandlers();  // Ctrl-C and SIGTERM stop every command at its next safe point
  const int exitCode = ibrr::app::runCommandLine(argc, argv);
  ibrr::cluster::Cluster::world().finish();
  return exitCode;
}
