// A cluster's CTAs taking turns on one worker (cluster.hpp says the model),
// and the device side of the cluster barrier and %cluster_ctarank.
#include "simt/cluster.hpp"

#include "simt/hopper.hpp"
#include "simt/symbols.hpp"
#include "simt/trace_hooks.hpp"
#include "simt/watchdog.hpp"

namespace warpnet::simt {

Cluster::Cluster(std::vector<Block*> ctas, dim3 dims) : ctas_(std::move(ctas)), dims_(dims) {
  for (unsigned r = 0; r < ctas_.size(); ++r) {
    ctas_[r]->join_cluster(this, r);
    threads_ += ctas_[r]->lane_count();
  }
}

void Cluster::run(uint3 origin) {
  arrived_ = phases_ = 0;
  std::vector<bool> done(ctas_.size(), false);
  unsigned left = size();
  try {
    for (unsigned r = 0; r < size(); ++r)
      ctas_[r]->begin({origin.x + r % dims_.x, origin.y + r / dims_.x % dims_.y, origin.z + r / (dims_.x * dims_.y)});
    const std::atomic<uint64_t>& switches = watchdog::switches_of_this_thread();
    while (left > 0) {
      // A pass gives every CTA a round. Nothing ran and nothing was released
      // in a whole pass: no CTA can act for another any more.
      const uint64_t before = switches.load(std::memory_order_relaxed);
      bool progressed = false;
      for (unsigned r = 0; r < size(); ++r) {
        if (done[r]) continue;
        const Block::Round round = ctas_[r]->round();
        if (round == Block::Round::done) {
          ctas_[r]->end();
          done[r] = true;
          --left;
        }
        progressed = progressed || round != Block::Round::stuck;
      }
      progressed = release_if_complete() || progressed || switches.load(std::memory_order_relaxed) != before;
      if (left > 0 && !progressed) {
        for (unsigned r = 0; r < size(); ++r)
          if (!done[r]) ctas_[r]->fail_if_waiting_on_mbarrier();
        for (unsigned r = 0; r < size(); ++r)
          if (!done[r]) ctas_[r]->fail_stuck();
      }
    }
  } catch (...) {
    for (unsigned r = 0; r < size(); ++r)
      if (!done[r]) ctas_[r]->abandon();
    throw;
  }
}

void Cluster::arrive(Lane& lane) {
  lane.state = LaneState::at_cluster_barrier;
  ++arrived_;
}

bool Cluster::release_if_complete() {
  if (arrived_ < threads_) return false;
  arrived_ = 0;
  ++phases_;
  for (Block* cta : ctas_) cta->release_cluster_barrier();
  return true;
}

std::string Cluster::describe_absent() const {
  const Lane* first = nullptr;
  const Block* first_cta = nullptr;
  unsigned absent = 0;
  for (const Block* cta : ctas_)
    for (unsigned i = 0; i < cta->lane_count(); ++i) {
      const Lane& lane = cta->lane(i);
      if (lane.state == LaneState::at_cluster_barrier) continue;
      if (!first) first = &lane, first_cta = cta;
      ++absent;
    }
  if (!first) return "all of them have arrived";
  std::string state;
  switch (first->state) {
    case LaneState::done: state = "has exited"; break;
    case LaneState::at_barrier: state = cat("waits at __syncthreads() (", describe_code(first->site), ")"); break;
    case LaneState::at_mbarrier:
      state = cat("waits on an mbarrier (", describe_code(first->site), ")");
      break;
    default: state = cat("waits elsewhere (", describe_code(first->site), ")"); break;
  }
  return cat("thread ", format_dim(first->tid), " of CTA ", first_cta->cluster_rank(), " (block ",
             format_dim(first_cta->index()), ") ", state, absent > 1 ? cat(", and ", absent - 1, " others have not arrived either") : "");
}

// ---- the device side -------------------------------------------------------

unsigned cluster_ctarank() {
  this_lane("%cluster_ctarank");
  return current_block->cluster_rank();
}

void cluster_sync() {
  Lane* lane;
  {
    LibraryScope scope;
    lane = &this_lane("barrier.cluster");
    Cluster* cluster = current_block->cluster();
    if (!cluster)
      throw LaunchError(cudaErrorNotSupported,
                        cat(current_block->where(*lane), ": cluster_sync() in a launch without clusters: the emulator "
                                                         "models barrier.cluster only in launches made with "
                                                         "warpnet::launch_kernel_in_clusters"));
    lane->site = __builtin_return_address(0);
    cluster->arrive(*lane);
  }
  current_block->park(*lane);  // Cluster::run releases it once every thread of the cluster is here
}

}  // namespace warpnet::simt
