#include "cluster/cluster.hpp"

#include "util/error.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <thread>

#if IBRR_WITH_MPI
// The C interface only: Open MPI's mpi.h otherwise pulls in the removed C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace ibrr::cluster {
namespace {

// What every rank brings to an agreement, gathered into every rank.
constexpr std::size_t kMessageBytes = 1000;
struct AgreementRecord {
  std::int32_t exitCode = 0;
  std::int32_t stoppedByPeer = 0;
  std::int32_t announced = 0;      // it sent every other rank a stop message
  std::uint32_t progressSent = 0;  // progress messages it has sent to rank 0 so far
  char message[kMessageBytes] = {};
};

struct ProgressMessage {
  std::int32_t phase = 0;
  std::int32_t unused = 0;
  std::uint64_t done = 0;
  std::uint64_t total = 0;
};

constexpr double kProgressIntervalSeconds = 0.2;

}  // namespace

#if IBRR_WITH_MPI

namespace {

constexpr int kTagStop = 101;
constexpr int kTagProgress = 102;
constexpr int kTagData = 103;
constexpr std::size_t kPieceBytes = std::size_t(1) << 30;

// The message of the failure an agreement reports: the lowest rank that failed on its own, else the lowest rank
// stopped by another (it may have missed the announcer's record only if that rank is gone).
std::optional<int> failingRank(std::span<const AgreementRecord> records) {
  std::optional<int> stopped;
  for (std::size_t r = 0; r < records.size(); ++r) {
    if (records[r].exitCode == 0) continue;
    if (!records[r].stoppedByPeer) return int(r);
    if (!stopped) stopped = int(r);
  }
  return stopped;
}


bool startedByMpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

}  // namespace

struct Cluster::Mpi {
  std::thread::id mainThread = std::this_thread::get_id();
  bool finished = false;
  // Stop messages: one receive posted from any rank, tested by checkStop().
  MPI_Request stopRequest = MPI_REQUEST_NULL;
  int stopToken = 0;
  int stopsReceived = 0;
  bool announced = false;
  int announceToken = 1;
  std::vector<MPI_Request> announceRequests;
  // Progress, ranks other than 0: messages sent and not yet known to be delivered.
  std::deque<ProgressMessage> outgoing;
  std::vector<MPI_Request> progressRequests;
  std::uint32_t progressSent = 0;
  std::chrono::steady_clock::time_point lastSend{};
  // Progress, rank 0: every rank's latest count and how many messages came from each.
  std::vector<std::optional<ProgressCount>> latest;
  std::vector<std::uint32_t> progressReceived;

  bool onMainThread() const { return std::this_thread::get_id() == mainThread; }
};

Cluster::Cluster() {
  if (!startedByMpirun()) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m_size);
  m_mpi = new Mpi;
  m_mpi->latest.resize(std::size_t(m_size));
  m_mpi->progressReceived.assign(std::size_t(m_size), 0);
  if (m_size > 1)
    MPI_Irecv(&m_mpi->stopToken, 1, MPI_INT, MPI_ANY_SOURCE, kTagStop, MPI_COMM_WORLD, &m_mpi->stopRequest);
}

Cluster::~Cluster() {
  finish();
  delete m_mpi;
}

void Cluster::announceFailure() {
  if (!distributed() || m_mpi->announced || !m_mpi->onMainThread()) return;
  m_mpi->announced = true;
  for (int r = 0; r < m_size; ++r) {
    if (r == m_rank) continue;
    m_mpi->announceRequests.emplace_back();
    MPI_Isend(&m_mpi->announceToken, 1, MPI_INT, r, kTagStop, MPI_COMM_WORLD, &m_mpi->announceRequests.back());
  }
}

void Cluster::checkStop() {
  if (!distributed() || !m_mpi->onMainThread() || m_mpi->finished) return;
  if (m_mpi->stopsReceived == 0) {
    int arrived = 0;
    MPI_Test(&m_mpi->stopRequest, &arrived, MPI_STATUS_IGNORE);
    if (!arrived) return;
    m_mpi->stopsReceived = 1;
  }
  throw StoppedByPeer();
}

ProgressCount Cluster::summedProgress(int phase) const {
  ProgressCount sum{phase, 0, 0};
  for (const auto& count : m_mpi->latest) {
    if (!count || count->phase != phase) return ProgressCount{phase, 0, 0};  // not every rank has reported yet
    sum.done += count->done;
    sum.total += count->total;
  }
  return sum;
}

void Cluster::drainProgress(bool blockingUntilCounts, std::span<const std::uint32_t> sentCounts) {
  bool arrived = false;
  auto take = [&](const MPI_Status& status) {
    ProgressMessage message;
    MPI_Recv(&message, sizeof message, MPI_BYTE, status.MPI_SOURCE, kTagProgress, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    m_mpi->latest[std::size_t(status.MPI_SOURCE)] = ProgressCount{message.phase, message.done, message.total};
    ++m_mpi->progressReceived[std::size_t(status.MPI_SOURCE)];
    arrived = true;
  };
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagProgress, MPI_COMM_WORLD, &flag, &status);
    if (!flag) break;
    take(status);
  }
  if (blockingUntilCounts)
    for (int r = 1; r < m_size; ++r)
      while (m_mpi->progressReceived[std::size_t(r)] < sentCounts[std::size_t(r)]) {
        MPI_Status status;
        MPI_Probe(r, kTagProgress, MPI_COMM_WORLD, &status);
        take(status);
      }
  if (arrived && m_onProgress && m_mpi->latest[0]) {
    const ProgressCount sum = summedProgress(m_mpi->latest[0]->phase);
    if (sum.total > 0) m_onProgress(sum);
  }
}

ProgressCount Cluster::reportProgress(const ProgressCount& mine) {
  if (!distributed() || !m_mpi->onMainThread()) return mine;
  if (isRoot()) {
    m_mpi->latest[0] = mine;
    drainProgress(false, {});
    return summedProgress(mine.phase);
  }
  const auto now = std::chrono::steady_clock::now();
  if (mine.done < mine.total && std::chrono::duration<double>(now - m_mpi->lastSend).count() < kProgressIntervalSeconds)
    return mine;
  m_mpi->lastSend = now;
  m_mpi->outgoing.push_back(ProgressMessage{mine.phase, 0, mine.done, mine.total});
  m_mpi->progressRequests.emplace_back();
  MPI_Isend(&m_mpi->outgoing.back(), sizeof(ProgressMessage), MPI_BYTE, 0, kTagProgress, MPI_COMM_WORLD,
            &m_mpi->progressRequests.back());
  ++m_mpi->progressSent;
  return mine;
}

void Cluster::agree(const RankOutcome& mine) {
  if (!distributed()) {
    if (mine.exitCode != 0) throw RankFailed(mine.message, mine.exitCode);
    return;
  }
  AgreementRecord record;
  record.exitCode = mine.exitCode;
  record.stoppedByPeer = mine.stoppedByPeer ? 1 : 0;
  record.announced = m_mpi->announced ? 1 : 0;
  record.progressSent = m_mpi->progressSent;
  std::strncpy(record.message, mine.message.c_str(), kMessageBytes - 1);
  std::vector<AgreementRecord> records(static_cast<std::size_t>(m_size));
  MPI_Request request;
  MPI_Iallgather(&record, sizeof record, MPI_BYTE, records.data(), sizeof record, MPI_BYTE, MPI_COMM_WORLD, &request);
  for (int done = 0;;) {  // rank 0 keeps its progress line moving while slower ranks finish their part
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (isRoot()) drainProgress(false, {});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Every progress message sent before the agreement is received, so none is left in flight at the end.
  if (isRoot()) {
    std::vector<std::uint32_t> sent(records.size());
    for (std::size_t r = 0; r < records.size(); ++r) sent[r] = records[r].progressSent;
    drainProgress(true, sent);
  } else {
    MPI_Waitall(int(m_mpi->progressRequests.size()), m_mpi->progressRequests.data(), MPI_STATUSES_IGNORE);
    m_mpi->progressRequests.clear();
    m_mpi->outgoing.clear();
  }
  const std::optional<int> failed = failingRank(records);
  if (!failed) return;
  // Receive every stop message addressed to this rank, so that none is left unmatched at MPI_Finalize.
  int announcers = 0;
  for (std::size_t r = 0; r < records.size(); ++r)
    if (records[r].announced && int(r) != m_rank) ++announcers;
  if (announcers > 0 && m_mpi->stopsReceived == 0) {
    MPI_Wait(&m_mpi->stopRequest, MPI_STATUS_IGNORE);
    m_mpi->stopsReceived = 1;
  }
  for (int k = m_mpi->stopsReceived; k < announcers; ++k)
    MPI_Recv(&m_mpi->stopToken, 1, MPI_INT, MPI_ANY_SOURCE, kTagStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  m_mpi->stopsReceived = std::max(m_mpi->stopsReceived, announcers);
  MPI_Waitall(int(m_mpi->announceRequests.size()), m_mpi->announceRequests.data(), MPI_STATUSES_IGNORE);
  m_mpi->announceRequests.clear();
  const AgreementRecord& failure = records[std::size_t(*failed)];
  throw RankFailed("rank " + std::to_string(*failed) + " of " + std::to_string(m_size) + ": " + failure.message,
                   failure.exitCode);
}

void Cluster::finish() {
  if (m_mpi == nullptr || m_mpi->finished) return;
  if (m_mpi->stopRequest != MPI_REQUEST_NULL && m_mpi->stopsReceived == 0) {
    MPI_Cancel(&m_mpi->stopRequest);
    MPI_Wait(&m_mpi->stopRequest, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  m_mpi->finished = true;
}

void Cluster::send(int to, std::span<const std::byte> bytes) {
  const std::uint64_t size = bytes.size();
  MPI_Send(&size, 1, MPI_UINT64_T, to, kTagData, MPI_COMM_WORLD);
  for (std::size_t at = 0; at < bytes.size(); at += kPieceBytes)
    MPI_Send(bytes.data() + at, int(std::min(kPieceBytes, bytes.size() - at)), MPI_BYTE, to, kTagData,
             MPI_COMM_WORLD);
}

std::vector<std::byte> Cluster::receive(int from) {
  std::uint64_t size = 0;
  MPI_Recv(&size, 1, MPI_UINT64_T, from, kTagData, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::vector<std::byte> bytes(size);
  for (std::size_t at = 0; at < bytes.size(); at += kPieceBytes)
    MPI_Recv(bytes.data() + at, int(std::min(kPieceBytes, bytes.size() - at)), MPI_BYTE, from, kTagData,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

void Cluster::broadcast(std::vector<std::byte>& bytes, int root) {
  if (!distributed()) return;
  std::uint64_t size = bytes.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
  bytes.resize(size);
  for (std::size_t at = 0; at < bytes.size(); at += kPieceBytes)
    MPI_Bcast(bytes.data() + at, int(std::min(kPieceBytes, bytes.size() - at)), MPI_BYTE, root, MPI_COMM_WORLD);
}

std::vector<std::byte> Cluster::allGather(std::span<const std::byte> mine) {
  if (!distributed()) return {mine.begin(), mine.end()};
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(m_size));
  const std::uint64_t mySize = mine.size();
  MPI_Allgather(&mySize, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  std::vector<int> counts(sizes.size()), displacements(sizes.size());
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    if (total + sizes[r] > std::uint64_t(std::numeric_limits<int>::max()))
      throw Error("the ranks' shares to exchange exceed 2 GiB; use fewer layers (a lower --ldc) or more ranks");
    counts[r] = int(sizes[r]);
    displacements[r] = int(total);
    total += sizes[r];
  }
  std::vector<std::byte> all(total);
  MPI_Allgatherv(mine.data(), int(mine.size()), MPI_BYTE, all.data(), counts.data(), displacements.data(), MPI_BYTE,
                 MPI_COMM_WORLD);
  return all;
}

std::vector<double> Cluster::allSum(std::span<const double> values) {
  std::vector<double> result(values.begin(), values.end());
  if (distributed())
    MPI_Allreduce(values.data(), result.data(), int(values.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return result;
}

std::vector<double> Cluster::allMax(std::span<const double> values) {
  std::vector<double> result(values.begin(), values.end());
  if (distributed())
    MPI_Allreduce(values.data(), result.data(), int(values.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return result;
}

#else  // built without MPI: always rank 0 of 1

struct Cluster::Mpi {};

Cluster::Cluster() = default;
Cluster::~Cluster() = default;
void Cluster::announceFailure() {}
void Cluster::checkStop() {}
ProgressCount Cluster::summedProgress(int phase) const { return ProgressCount{phase, 0, 0}; }
void Cluster::drainProgress(bool, std::span<const std::uint32_t>) {}
ProgressCount Cluster::reportProgress(const ProgressCount& mine) { return mine; }
void Cluster::agree(const RankOutcome& mine) {
  if (mine.exitCode != 0) throw RankFailed(mine.message, mine.exitCode);
}
void Cluster::finish() {}
void Cluster::send(int, std::span<const std::byte>) { throw Error("this ibrr was built without MPI"); }
std::vector<std::byte> Cluster::receive(int) { throw Error("this ibrr was built without MPI"); }
void Cluster::broadcast(std::vector<std::byte>&, int) {}
std::vector<std::byte> Cluster::allGather(std::span<const std::byte> mine) { return {mine.begin(), mine.end()}; }
std::vector<double> Cluster::allSum(std::span<const double> values) { return {values.begin(), values.end()}; }
std::vector<double> Cluster::allMax(std::span<const double> values) { return {values.begin(), values.end()}; }

#endif

int Cluster::localRank() const {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return local != nullptr ? std::max(0, std::atoi(local)) : 0;
}

Cluster& Cluster::world() {
  static Cluster instance;
  return instance;
}

}  // namespace ibrr::cluster
