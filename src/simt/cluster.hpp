// Thread-block clusters (sm_90): the CTAs of one cluster run together on one
// worker, taking turns a round at a time (Block::round), so that one CTA can
// wait for what another does: an arrive on its mbarrier
// (mbarrier_arrive_remote), a multicast TMA copy into its shared memory
// (tma_load_multicast), the cluster barrier (cluster_sync). Each CTA has its
// own dynamic shared window, stacks and Hopper units; a peer's shared memory
// is the same offset in the peer's window (PTX's mapa). Internal to src/simt.
//
// What is modelled, and what a GPU would do silently that is an error here:
//   - cluster_sync() (barrier.cluster.arrive + wait) waits for every thread
//     of every CTA, exited ones included: a CTA that exits while a peer waits
//     in cluster_sync() is a deadlock, named with the threads missing.
//   - A CTA whose threads have all exited has no shared memory any more: an
//     arrive on its mbarriers or a copy into it is an error, as is exiting
//     with a peer's copy into it still in flight. Kernels end with a
//     cluster_sync(), as CUDA asks of any kernel whose CTAs touch each other's
//     shared memory.
//   - An mbarrier a peer initialized is usable only after a cluster_sync()
//     that follows the initialization (fence.mbarrier_init, then the barrier).
// Not modelled: static __shared__ variables (one thread_local copy per worker,
// which a cluster's CTAs would share: such launches are refused), plain loads
// and stores to a peer's shared memory (DSMEM through mapa'd pointers), the
// race checker's view across CTAs (a peer's multicast bytes count as written
// before the receiving CTA's accesses), and cluster scheduling itself (CUDA's
// guarantee that a cluster's CTAs are co-resident is what running them on one
// worker gives).
#pragma once
#include <string>
#include <vector>

#include "simt/block.hpp"

namespace warpnet::simt {

class Cluster {
 public:
  // ctas[r] becomes the CTA of rank r (x fastest over `dims`, as %cluster_ctarank).
  Cluster(std::vector<Block*> ctas, dim3 dims);

  // Runs the cluster whose rank-0 CTA is block `origin` to completion; throws LaunchError.
  void run(uint3 origin);

  unsigned size() const { return unsigned(ctas_.size()); }
  // Cluster barriers released so far in this cluster.
  unsigned phases() const { return phases_; }
  Block& cta(unsigned rank) const { return *ctas_[rank]; }

  // cluster_sync() from a lane's fiber: parks it until every thread of every CTA has arrived.
  void arrive(Lane& lane);
  // "thread (0,0,0) of CTA 1 (block (1,0,0)) waits at __syncthreads() (...), and 127 others are elsewhere":
  // who a cluster_sync() still waits for, for the deadlock error.
  std::string describe_absent() const;

 private:
  // Every thread has arrived: all go on, each CTA in a new barrier phase.
  bool release_if_complete();

  std::vector<Block*> ctas_;
  dim3 dims_;
  unsigned threads_ = 0;  // in all CTAs together
  unsigned arrived_ = 0;  // at the cluster barrier's current phase
  unsigned phases_ = 0;
};

}  // namespace warpnet::simt
