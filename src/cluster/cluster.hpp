#pragma once
// The processes of one job started by `mpirun` (Open MPI), or this process alone.
//
// ibrr calls MPI only when mpirun started it (its environment names a rank: OMPI_COMM_WORLD_SIZE, PMIX_RANK or
// PMI_RANK), so the executable runs unchanged without mpirun, and a build without MPI (-DIBRR_MPI=OFF) has a
// Cluster that is always rank 0 of 1. Every MPI call is made on the main thread (MPI_THREAD_FUNNELED).
//
// How a distributed command fails: work between two agreements is local. A rank whose part throws tells the
// others to stop (announceFailure: one small message each, seen by their next checkStop) and then joins the next
// agreement with its failure; every rank leaves that agreement with the same RankFailed, so all end with one
// message naming the rank and the cause, the same exit code, and nothing written. Every data exchange follows an
// agreement that found every rank well, so no rank ever waits in an exchange for a rank that has failed.
//
// Progress: the ranks other than 0 send their (phase, done, total) to rank 0 a few times a second; rank 0 adds
// them to its own, so its progress line covers every rank. Ranks other than 0 print nothing.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibrr::cluster {

// What a rank brings to an agreement: well (exitCode 0), or the failure that ended its part.
struct RankOutcome {
  int exitCode = 0;            // 0 = well; otherwise the exit code main() gives this failure
  bool stoppedByPeer = false;  // it stopped because another rank announced a failure
  std::string message;         // the failure, as main() would print it after "ibrr: "
};

// Thrown on every rank by an agreement that found a failure: what() is the failing rank's message prefixed with
// "rank R of N: ", and exitCode() its exit code.
class RankFailed : public std::runtime_error {
public:
  RankFailed(const std::string& message, int exitCode) : std::runtime_error(message), m_exitCode(exitCode) {}
  [[nodiscard]] int exitCode() const { return m_exitCode; }

private:
  int m_exitCode;
};

// Thrown by checkStop() when another rank announced a failure.
class StoppedByPeer : public std::runtime_error {
public:
  StoppedByPeer() : std::runtime_error("stopped: another rank failed") {}
};

// (phase, done, total) of a long operation, as the bake's progress reports it.
struct ProgressCount {
  int phase = 0;
  std::uint64_t done = 0;
  std::uint64_t total = 0;
};

class Cluster {
public:
  // The processes of this job. The first call initialises MPI when mpirun started this process.
  static Cluster& world();
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }
  [[nodiscard]] bool distributed() const { return m_size > 1; }
  [[nodiscard]] bool isRoot() const { return m_rank == 0; }
  // This rank's index among the ranks on its node (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK; 0 without one): the
  // GPU it takes where a node has several.
  [[nodiscard]] int localRank() const;

  // Collective: returns when every rank is well; otherwise throws RankFailed on every rank (the lowest rank with
  // a failure of its own; a rank stopped by another only when no other failure is known). While it waits, rank 0
  // keeps its progress line moving (see reportProgress).
  void agree(const RankOutcome& mine = {});
  // After a failure of this rank's own: tells every other rank to stop at its next checkStop(). Idempotent.
  void announceFailure();
  // Throws StoppedByPeer when another rank announced a failure. Main thread only; a cheap test otherwise.
  void checkStop();

  // Byte exchanges of any size (sent in pieces below 2 GiB). Collective ones must follow a successful agree().
  void send(int to, std::span<const std::byte> bytes);
  std::vector<std::byte> receive(int from);
  void broadcast(std::vector<std::byte>& bytes, int root);
  // Every rank's bytes, concatenated in rank order, on every rank.
  std::vector<std::byte> allGather(std::span<const std::byte> mine);
  // Element-wise sums and maxima of every rank's values, on every rank (all ranks pass the same length).
  std::vector<double> allSum(std::span<const double> values);
  std::vector<double> allMax(std::span<const double> values);

  // Progress of this rank. On rank 0 it returns the sum over every rank's latest count of the same phase (its
  // own included); on the others it sends the count to rank 0 (at most every 0.2 s, and always when done ==
  // total) and returns it unchanged.
  ProgressCount reportProgress(const ProgressCount& mine);
  // Rank 0: called with the summed count whenever progress from another rank arrives while it waits in agree().
  void onProgress(std::function<void(const ProgressCount&)> callback) { m_onProgress = std::move(callback); }

  // Ends MPI after the last agreement (also done at exit). Idempotent.
  void finish();

private:
  Cluster();
  struct Mpi;
  void drainProgress(bool blockingUntilCounts, std::span<const std::uint32_t> sentCounts);
  ProgressCount summedProgress(int phase) const;

  int m_rank = 0;
  int m_size = 1;
  Mpi* m_mpi = nullptr;  // null when MPI is not in use
  std::function<void(const ProgressCount&)> m_onProgress;
};

}  // namespace ibrr::cluster
