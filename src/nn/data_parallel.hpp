// Data-parallel training, nn's part: which rows of a global batch this rank
// trains on, the gradient buckets that are all-reduced while backward runs,
// and the state every rank must share (weights, optimizer, position, and a
// mixed-precision run's loss scale and fp8 scales).
//
// What equals single-process training. The loss of a global batch of B
// examples is their mean, L = (1/B)·Σᵢ ℓᵢ. Rank r holds a contiguous shard
// of b_r rows, and
//     ∇L = Σ_r ∇[(1/B)·Σ_{i∈r} ℓᵢ] = Σ_r (b_r/B) · ∇[(1/b_r)·Σ_{i∈r} ℓᵢ]:
// each rank runs backward from its shard's mean loss seeded with b_r/B
// (the trainer), so every row's gradient is the one a single process
// computes (to the rounding of b_r/B, none when it is a power of two), and
// the buckets' all-reduce sums. (A plain average, Σ_r g_r /
// ranks, is the same only when every shard has B/ranks rows; the last batch
// of an epoch usually does not.) In floating point the two sides differ by
// the order of the additions over the batch — see tests/dist for the bound.
// Seeding, rather than scaling the shard's gradients after backward, keeps
// each row's gradients at one process's size all through backward, which
// mixed precision needs: fp16's overflows and fp8's amaxes are those of one
// process (a shard of half the batch would have gradients twice as large).
//
// On GPUs (parameters on Device::cuda) in a build with NCCL, the buckets
// live on the GPU and NCCL all-reduces them (dist/nccl_group.hpp;
// unverified: not yet run on a GPU). Without NCCL they live on the host and
// MPI all-reduces host copies.
//
// Overlap. The tape plays backward closures newest-first. The trainer runs
// the Sequential's layers one by one and records a marker closure on the
// tape before each layer; backward plays marker k right after the closures
// of layers k..L, so at that moment those layers' gradients are final (a
// parameter is used by its layer only). The buckets are filled from the last
// parameter to the first, so each marker can start the all-reduce of the
// buckets it completes while backward goes on through earlier layers (with
// MPI; NCCL's blocking stream serializes it with backward's kernels on the
// legacy default stream: src/dist/README.md, "Buckets and overlap").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <memory>

#include "autograd/precision.hpp"
#include "dist/communicator.hpp"
#include "dist/nccl_group.hpp"
#include "nn/loss_scaler.hpp"
#include "nn/module.hpp"
#include "nn/optim.hpp"

namespace warpnet::nn {

// Rows [begin, end) of a global batch of `global` rows that rank `rank` of
// `ranks` takes: contiguous, in rank order, sizes differing by at most one.
struct Shard {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};
Shard shard_of(int64_t global, int rank, int ranks);

class GradientBuckets {
 public:
  // `params` in forward order; `layer_of[i]` is the index (in the
  // Sequential) of the layer that owns params[i]. Buckets hold at most
  // `bucket_bytes` of f32 gradients (a larger parameter gets one alone).
  // Without `overlap`, every bucket is all-reduced after backward.
  GradientBuckets(std::vector<Parameter*> params, std::vector<int> layer_of, int64_t bucket_bytes, bool overlap);

  // Begins a step.
  void begin_step();
  // Backward has finished layers `layer`..last: starts the all-reduce of
  // every bucket now complete (with overlap), and lets MPI progress those in
  // flight.
  void layers_done_from(int layer);
  // After backward: starts what is left, waits for all, and stores the
  // summed gradient in each parameter's grad. A parameter no gradient
  // reached on this rank (or a rank with an empty shard) contributes zeros.
  // One no rank reached is left without a gradient, as one process leaves
  // it, so the optimizer skips it (a zero gradient would still move it by
  // momentum and weight decay): each bucket carries, after its gradients, a
  // flag per parameter, 1 where this rank reached it, summed with them.
  void finish();

  size_t count() const { return buckets_.size(); }
  bool on_gpu() const { return nccl_ != nullptr; }
  bool overlap() const { return overlap_; }
  // One line per bucket: its size and the parameters in it.
  std::string describe() const;

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into params_, last parameter first
    std::vector<int64_t> offsets;
    int64_t numel = 0;    // gradients; the buffer holds numel + params.size() (the reached flags)
    int first_layer = 0;  // the lowest layer index among its parameters
    Tensor buffer;        // f32 (numel + params.size()), charged to gradients ("allreduce buckets"); on the GPU with NCCL
    dist::Pending pending;
    bool started = false;
  };
  void start(Bucket& b);
  void start_on_gpu(Bucket& b);
  void finish_on_gpu();

  std::vector<Parameter*> params_;
  std::vector<Bucket> buckets_;
  bool overlap_;
  std::unique_ptr<dist::NcclGroup> nccl_;  // set when the parameters live on the GPU and NCCL is built in
  size_t next_ = 0;  // the next bucket to start
};

// Every rank takes rank 0's parameters, optimizer state and step count
// (after rank 0 built or restored them): all ranks start equal.
void broadcast_training_state(Module& model, Optimizer& optimizer);

// Mixed precision: every rank takes rank 0's loss scale (fp16) and fp8
// scales with their amax histories, as rank 0 restored them from a
// checkpoint; `layers` names every layer of the model, in order.
void broadcast_precision_state(ag::MixedPrecision* policy, DynamicLossScaler* scaler,
                               const std::vector<std::string>& layers);

// fp8 delayed scaling across ranks. Each rank records the amax of its
// shard's tensors; one process records the whole batch's, the largest of
// them. So after each step every fp8 scale's newest amax becomes the
// largest any rank recorded in that step (a rank that recorded none, its
// shard empty, records that one), and every rank scales the next step as
// one process would.
class Fp8AmaxSharing {
 public:
  // `layers`: the name of every layer of the model, in order (the same on all ranks).
  explicit Fp8AmaxSharing(std::vector<std::string> layers);
  void begin_step(const ag::MixedPrecision& policy);
  // After backward, on every rank: one all-reduce (max) of 3 values a layer.
  void finish_step(ag::MixedPrecision& policy);

 private:
  std::vector<std::string> layers_;
  std::vector<int64_t> recorded_;  // each scale's recorded() at begin_step: input, weight, grad_output per layer
};

// A hash of every parameter's bytes: equal on all ranks while they train in
// step (they apply identical updates to identical weights).
uint64_t weights_fingerprint(Module& model);

// The fault a test asks one rank to stage (train --inject-fault
// "rank=1,step=3,kind=exit|hang|error"): at that global step (1-based, over
// all epochs) the rank exits without a word to MPI, sleeps forever, or throws.
struct InjectedFault {
  int rank = -1;
  int64_t step = 0;
  std::string kind;
  bool armed() const { return rank >= 0; }
};
InjectedFault parse_fault(const std::string& spec);
// Stages `fault` if it is for this rank and this step.
void maybe_inject(const InjectedFault& fault, int64_t step);

}  // namespace warpnet::nn
