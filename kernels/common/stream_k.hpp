// Stream-K for a persistent GEMM grid: the tiles of a last, partial round
// have their k-steps dealt out among the blocks, instead of leaving the
// blocks past them idle (matmul v16 and v18).
//
// Why: a persistent grid of P blocks walks T tiles, block b taking tiles
//   b, b + P, ...; when T % P != 0 the last round has T % P tiles and the
//   other blocks wait for them. At 8192^3 in 128x256 tiles, T = 2048 on an
//   H200's 132 SMs: 15 rounds of 132 and one of 68, 16 tile times for 15.52
//   tiles of work (97%). Here the first T - T % P tiles are walked whole, as
//   before ("data parallel"), and the (T % P) * k_steps k-steps of the rest
//   are cut into contiguous ranges, one per block (about kMaxSplit blocks a
//   tile at most: an owner adds one partial tile per block that shares it).
// Measured: on an H200 it did not pay, and it is off unless
//   WARPNET_STREAM_K=1 (src/device/kernels/matmul/stream_k_workspace.hpp;
//   matmul v16's header has the figures).
// Partial tiles: k-steps are numbered tile by tile, so a range covers the
//   end of one tile, maybe whole tiles, then the start of another. A block
//   whose range starts inside a tile ("contributor") writes its partial
//   accumulators to a workspace slot of its own and counts itself in its
//   flag; the block whose range holds the tile's first k-step ("owner")
//   reaches that tile at the end of its range, after its contributors
//   reached it at the start of theirs, waits for their flags, adds their
//   partials and stores the tile. A block contributes at most once (only its
//   first piece can start inside a tile), so one slot per block is enough.
// Blocks wait on each other: every block of the grid must be resident at
//   once. A persistent grid of at most one block per SM is; on the emulator
//   a grid of at most one block per worker thread is too, and a stepper runs
//   blocks one at a time, so the emulator reports one SM under a stepper.
// Flags: block c's flag counts its contributor warps as they finish
//   writing (up to THREADS / 32), then the owner's warps as they finish
//   reading; the last reader sets it back to 0. A launch leaves the flags
//   as it found them, zero, which the caller sets once when the workspace
//   is made (a launch that faults midway leaves the GPU's context unusable
//   anyway).
#pragma once
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"

namespace warpnet {
inline namespace WARPNET_KERNEL_COPY {

constexpr int kMaxSplit = 4;  // blocks sharing one tile's k-steps, at most

// Which tiles are walked whole and how the rest are shared; every block
// computes the same plan from the launch.
struct StreamK {
  int tiles = 0, k_steps = 0;
  int whole_tiles = 0;     // tiles 0 .. whole_tiles-1: block b takes b, b + blocks, ...
  int shared_blocks = 0;   // blocks 0 .. shared_blocks-1 share the k-steps of the other tiles
  long long shared_steps = 0;  // (tiles - whole_tiles) * k_steps

  // Block b's range of shared k-steps is [begin(b), begin(b + 1)).
  __host__ __device__ long long begin(int b) const {
    return b < shared_blocks ? shared_steps * b / shared_blocks : shared_steps;
  }
};

// split: a workspace is there to share tiles through; without one every tile is walked whole.
__host__ __device__ inline StreamK plan_stream_k(int tiles, int k_steps, int blocks, bool split) {
  StreamK p;
  p.tiles = tiles, p.k_steps = k_steps, p.whole_tiles = tiles;
  const int last_round = blocks > 0 ? tiles % blocks : 0;
  if (!split || last_round == 0 || tiles < blocks || k_steps < 2) return p;
  p.whole_tiles = tiles - last_round;
  p.shared_steps = (long long)last_round * k_steps;
  // At most kMaxSplit blocks a tile, and no block with an empty range (it would never count itself in).
  long long sharing = (long long)last_round * kMaxSplit;
  if (sharing > blocks) sharing = blocks;
  if (sharing > p.shared_steps) sharing = p.shared_steps;
  p.shared_blocks = int(sharing);
  return p;
}

// k-steps [k_begin, k_end) of tile `tile`.
struct Work {
  int tile, k_begin, k_end;
};

// A block's work in order: its whole tiles, then the pieces of its range.
class BlockWork {
 public:
  __host__ __device__ BlockWork(const StreamK& plan, int block, int blocks)
      : plan_(plan), blocks_(blocks), tile_(block), step_(plan.begin(block)), end_(plan.begin(block + 1)) {}

  __host__ __device__ bool next(Work& w) {
    if (tile_ < plan_.whole_tiles) {
      w = Work{tile_, 0, plan_.k_steps};
      tile_ += blocks_;
      return true;
    }
    if (step_ >= end_) return false;
    const int local = int(step_ / plan_.k_steps), k = int(step_ % plan_.k_steps);
    const long long left = end_ - step_;
    const int k_end = left < plan_.k_steps - k ? k + int(left) : plan_.k_steps;
    w = Work{plan_.whole_tiles + local, k, k_end};
    step_ += k_end - k;
    return true;
  }

 private:
  StreamK plan_;
  int blocks_, tile_;
  long long step_, end_;
};

// Workspace of a grid of `blocks` (at most kMaxStreamKBlocks): the flags,
// one per block on a 128-byte line of its own (a block's polls and counts
// do not queue behind its neighbours' on one line), in a region of fixed
// size at the start; then one slot of `floats` partial sums per block. The
// flags stay where they are whatever the grid, so flags a launch left zero
// are zero for the next one, however many blocks it has.
constexpr int kMaxStreamKBlocks = 1024;
constexpr int kFlagStride = 32;  // ints: 128 bytes
__host__ __device__ constexpr size_t stream_k_flag_bytes() {
  return size_t(kMaxStreamKBlocks) * kFlagStride * sizeof(int);
}
__host__ __device__ constexpr size_t stream_k_bytes(int blocks, int floats) {
  return stream_k_flag_bytes() + size_t(blocks) * floats * sizeof(float);
}
__host__ __device__ inline int* stream_k_flag(void* workspace, int block) {
  return static_cast<int*>(workspace) + size_t(block) * kFlagStride;
}
__host__ __device__ inline float* stream_k_partials(void* workspace) {
  return reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + stream_k_flag_bytes());
}

// Slot of block b: thread t's accumulators i..i+3 at float4 (i / 4) * THREADS + t,
// so a warp's stores and loads are 512 contiguous bytes.
template <int COUNT, int THREADS>
__device__ __forceinline__ float* stream_k_slot(float* partials, int block) {
  return partials + size_t(block) * COUNT * THREADS;
}

// Signals are a warp's, not a thread's: lane 0 counts its warp in once the
// warp's lanes have written (THREADS / 32 counts make a block), and lane 0
// alone polls while its lanes wait at __syncwarp. On the H200 on 2026-12-04
// every thread counted and polled with atomics on flags packed 32 to a
// line, and stream-K cost 28-35 us a launch at 4096^3 (the kernels' headers).
template <int THREADS>
constexpr int kStreamKWarps = THREADS / 32;

// Contributor thread t (0 <= t < THREADS, whole warps) of block `block`: its partial sums, then counted.
template <int COUNT, int THREADS>
__device__ __forceinline__ void stream_k_contribute(const float (&acc)[COUNT], void* workspace, int block, int t) {
  static_assert(COUNT % 4 == 0 && THREADS % 32 == 0, "float4 chunks, whole warps");
  float* slot = stream_k_slot<COUNT, THREADS>(stream_k_partials(workspace), block);
#pragma unroll
  for (int i = 0; i < COUNT; i += 4)
    store_float4(slot + (size_t(i / 4) * THREADS + t) * 4, make_float4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3]));
  __threadfence();  // each lane's sums are visible device-wide ...
  __syncwarp();     // ... before its warp's lane 0 ...
  if (t % 32 == 0) {
    __threadfence();
    atomicAdd(stream_k_flag(workspace, block), 1);  // ... counts the warp in
  }
}

// Owner thread t of block `block`, whose tile's shared k-steps end at
// `tile_end` (in the plan's numbering): adds the partial sums of every block
// whose range starts inside the tile, waiting for each.
template <int COUNT, int THREADS>
__device__ __forceinline__ void stream_k_gather(float (&acc)[COUNT], void* workspace, const StreamK& plan, int block,
                                                long long tile_end, int t) {
  constexpr int WARPS = kStreamKWarps<THREADS>;
  for (int c = block + 1; c < plan.shared_blocks && plan.begin(c) < tile_end; ++c) {
    int* flag = stream_k_flag(workspace, c);
    if (t % 32 == 0)
      while (atomicAdd(flag, 0) < WARPS) {
      }
    __syncwarp();
    __threadfence();  // its sums are read after its count
    const float* slot = stream_k_slot<COUNT, THREADS>(stream_k_partials(workspace), c);
#pragma unroll
    for (int i = 0; i < COUNT; i += 4) {
      const float4 v = load_float4(slot + (size_t(i / 4) * THREADS + t) * 4);
      acc[i] += v.x, acc[i + 1] += v.y, acc[i + 2] += v.z, acc[i + 3] += v.w;
    }
    __syncwarp();  // the warp has read before it counts itself out; the last warp zeroes the flag
    if (t % 32 == 0 && atomicAdd(flag, 1) == 2 * WARPS - 1) atomicExch(flag, 0);
  }
}

// The end of piece `w` in consumer thread t of block `block`, its sums in
// acc: a contributor hands them on (false: nothing for it to store); an
// owner adds the others' in; a whole tile is as it is (true: store acc).
template <int COUNT, int THREADS>
__device__ __forceinline__ bool stream_k_piece_done(float (&acc)[COUNT], void* workspace, const StreamK& plan,
                                                    const Work& w, int block, int t) {
  if (w.k_begin > 0) {  // the rest of the tile is another block's to finish
    stream_k_contribute<COUNT, THREADS>(acc, workspace, block, t);
    return false;
  }
  if (w.k_end < plan.k_steps)  // this block owns a shared tile: the others' sums first
    stream_k_gather<COUNT, THREADS>(acc, workspace, plan, block,
                                    (long long)(w.tile - plan.whole_tiles + 1) * plan.k_steps, t);
  return true;
}

}  // namespace WARPNET_KERNEL_COPY
}  // namespace warpnet
