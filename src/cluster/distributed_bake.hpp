#pragma once
// `mpirun -np N ibrr bake SCENE -o X.ibrr`: the IBRR bake split over the ranks of a Cluster.
//
// Light paths are indexed by (seed, path), so rank r bakes the contiguous share of paths
// [r·P/N, (r+1)·P/N) with every VPL exactly as the single bake makes it (power Φ/P). The geometry seeds give
// every rank the same layers to start from. The ranks' layer sums (double precision, ldc.hpp LayerSums) are then
// added pairwise up a binary tree in a fixed order (rank r takes r + 1, then r + 2, r + 4, ...: in path order),
// so the store is the same whatever the timing, and its sums differ from the single bake's only in the order
// of double additions. Rank 0 rounds the sums to the store and broadcasts it; the bias compensation splits the
// store's pixels over the ranks (equal layer counts) and the ranks exchange each pass's H_miss. Rank 0 alone
// returns the store; the caller writes it.
#include "bake/bake.hpp"
#include "cluster/cluster.hpp"
#include "scene/scene.hpp"

#include <optional>

namespace ibrr::cluster {

struct DistributedBakeTimes {
  double lightPathSeconds = 0.0;     // the slowest rank's hemicubes and warp
  double reduceSeconds = 0.0;        // adding the ranks' layer sums up the tree, and rounding them (rank 0)
  double broadcastSeconds = 0.0;     // sending the store to every rank for the compensation
  double compensationSeconds = 0.0;  // the bias compensation, split over the ranks (0 when off)
  std::uint64_t storeBytes = 0;      // one rank's layer sums as sent up the tree
};

struct DistributedBakeResult {
  std::optional<bake::BakeResult> result;  // rank 0 only: the store and every rank's statistics added up
  DistributedBakeTimes times;
};

// Collective: every rank of `cluster` calls it with the same scene and options after an agreement. `progress`
// is called on rank 0 with the counts of every rank added. Throws RankFailed (another rank failed) or the
// rank's own error.
DistributedBakeResult bakeStoreAcrossRanks(Cluster& cluster, const scene::Scene& scene,
                                           const bake::BakeOptions& options, const bake::BakeProgress& progress);

// The light paths [first, end) of rank `rank` of `ranks` for a bake of `paths` paths.
std::pair<std::uint32_t, std::uint32_t> pathShareOf(std::uint32_t paths, int rank, int ranks);

}  // namespace ibrr::cluster
