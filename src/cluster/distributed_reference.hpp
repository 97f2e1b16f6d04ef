#pragma once
// `mpirun -np N ibrr reference SCENE ...`: the path-traced reference split over the ranks of a Cluster.
//
// Rank r renders the image tiles t with t mod N = r (interleaved, so every rank gets a like share of the bright
// and the dark parts), each pixel with exactly the sample sequence of the single-process render; the pixels of
// the other ranks stay zero, and adding the ranks' images gives the single-process image and variance image
// pixel for pixel. Under --time every rank takes the same passes: each pass's clock is the slowest rank's.
#include "cluster/cluster.hpp"
#include "rays/embree_scene.hpp"
#include "rays/reference.hpp"

namespace ibrr::cluster {

// Collective. Returns the whole image on rank 0 (the other ranks' results hold their own tiles only). Rank 0
// alone shows progress, over its own tiles. Throws RankFailed when another rank failed.
rays::ReferenceImage renderReferenceAcrossRanks(Cluster& cluster, const rays::EmbreeScene& embree,
                                                rays::ReferenceOptions options);

}  // namespace ibrr::cluster
