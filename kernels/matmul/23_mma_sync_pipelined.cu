// GEMM v23 — mma.sync with the fragments pipelined: v17's block and ring,
// hoisted copies, and each warp loads the next k16 slice's fragments while it
// multiplies the current one, and the barrier comes when they are all in
// registers. bf16 inputs, fp32 accumulation.
//
// Idea: in v17 a k-step starts at a barrier, and after it every warp first
//   waits for its ldmatrix results (about 30 cycles) before its first
//   mma.sync can issue; at the barrier the warps that arrive early wait with
//   nothing to do. Ampere-class libraries (CUTLASS's multistage mainloop)
//   keep two sets of fragments in registers and stay one k16 slice ahead:
//     loop over slices:  load the fragments of slice s+1 (ldmatrix),
//                        multiply those of slice s (mma.sync)
//   so the ldmatrix latency hides under the previous slice's 32 mma.sync.
//   The barrier moves with it: a stage is finished with when its last
//   slice's fragments are in registers, which is one slice before its last
//   mma.sync. So the barrier (and the wait for the next stage's copies) sits
//   between loading the last slice of a stage and loading the first of the
//   next, and the mma.sync of that last slice run after it, while the
//   first fragments of the next stage load: the tensor cores have work on
//   both sides of the barrier.
// Order of one k-step (two slices, BK = 32):
//     refill the stage read a step ago   (its fragments went to registers before the last barrier)
//     load slice 1 of this stage         multiply slice 0
//     wait for the next stage; barrier   (every warp has slice 1 in registers)
//     load slice 0 of the next stage     multiply slice 1
//   A stage is refilled one barrier after its last ldmatrix, so no warp still
//   reads it; the next stage is read one wait after the copies of its group.
//   With two stages the copies of step s+1 would have only slice 0's
//   mma.sync to land in, so the ring is 3 or 4 deep (v24 tries both).
// Copies: hoisted (hoisted_copies.hpp, mma_sync_v17::Tiles<256, 4, true>):
//   each thread works out its chunks' addresses and edge tests once. In the
//   SASS (nvcc 13.0, sm_90a) a warp's k-step is 170-178 instructions by
//   layout (scripts/sass-loops.py, 177 NN): 64 mma.sync, 16 ldmatrix, and 6
//   cp.async at about 14 instructions a chunk (a 64-bit index, its select,
//   the address, the edge test), where v17's stage_tile spends 44 a chunk
//   and its k-step about 400 (sass-loops counts 330 in its loop, where two
//   copy loops run 2 and 4 times). The hoisted copies take only rows of
//   whole 16-byte chunks; for others the launch runs the same kernel with
//   stage_tile's copies (Tiles::StageTileCopies). With that fallback inside
//   the loop, beside the hoisted copies, the k-step held about 220 on the
//   aligned path and 371 static.
// Registers: two sets of fragments (2 x 32) besides v17's 128 accumulators,
//   and the copies' state; ptxas (nvcc 13.0, sm_90a;
//   bench/results/ptxas-sm90a-2026-12-07.txt) fits it in 238-248 (v17:
//   195-197; the stage_tile instance 208-213), no spills:
//   one block of 8 warps an SM, as v17.
// Shared memory, layouts, edges: v17's (mma_sync_v17::Block); rows not
//   16-byte aligned are copied by stage_tile, element by element.
// Changed from v17: fragments one slice ahead, double-buffered in
//   registers; the barrier between a stage's last slice and the next
//   stage's first, instead of at the top of the step; the hoisted copies
//   (v24's candidate 9 is v17 with only this change).
// Measured: not yet on a GPU (written on 2026-12-05).
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace matmul/23 --size 127,129,65;
//   build/bin/warpnet bench matmul --size 4096,4096,4096 --kernels matmul/17,matmul/23 on a GPU.
#include "kernels/matmul/17_mma_sync_multistage.cu"  // mma_sync_v17::Block, Tiles

// C: (M,N) row-major fp32 = op(A) @ op(B), A and B as mma_sync_v17::Block has them.
// Launch: as v17's (block Tiles::THREADS, grid ceil(M/128) * ceil(N/BN),
// dynamic shared memory Tiles::shared_bytes<TA, TB>(); mma_sync_v23::launch).
template <class Tiles, bool TA = false, bool TB = false>
__global__ void __launch_bounds__(Tiles::THREADS, Tiles::MIN_BLOCKS)
    gemm_mma_sync_pipelined(int M, int N, int K, const __nv_bfloat16* __restrict__ A,
                            const __nv_bfloat16* __restrict__ B, float* __restrict__ C) {
  using Block = mma_sync_v17::Block<Tiles, TA, TB>;
  constexpr int STAGES = Tiles::STAGES, SLICES = mma_sync_v17::BK / 16;
  static_assert(STAGES >= 3, "the next stage's copies need more than one slice's mma.sync to land in");
  static_assert(SLICES == 2, "a step is two k16 slices: f[0] and f[1] are slices 0 and 1");
  const Block block(M, N, K, A, B);

  float acc[Block::MI][Block::NI][4] = {};
  typename Block::Fragments f[2];  // f[s]: slice s of the stage being multiplied
  for (int s = 0; s < STAGES - 1; ++s) block.stage(s);
  // Step 0's group is the oldest of STAGES-1; every thread's copies into it visible.
  warpnet::ptx::cp_async_wait<STAGES - 2>();
  __syncthreads();
  block.load(f[0], 0, 0);
  for (int step = 0; step < block.steps; ++step) {
    // Refills the stage of step-1: every warp loaded its last slice before
    // the previous barrier. Commits a group every step (empty past the end).
    block.stage(step + STAGES - 1);
    block.load(f[1], step, 16);
    Block::multiply(acc, f[0]);
    if (step + 1 < block.steps) {
      // STAGES+step groups are committed; step+1's is the oldest not yet
      // waited for. The barrier: its copies are visible to every thread,
      // and every warp has loaded slice 1 of this step.
      warpnet::ptx::cp_async_wait<STAGES - 2>();
      __syncthreads();
      block.load(f[0], step + 1, 0);
    }
    Block::multiply(acc, f[1]);
  }
  warpnet::ptx::cp_async_wait<0>();  // the trailing groups are empty; none is left behind

  block.store(acc, C);
}

namespace mma_sync_v23 {

// v17's block (128x256, 8 warps, 4 stages) with the hoisted copies.
using Registered = mma_sync_v17::Tiles<256, 4, true>;

// Raises the kernel's shared-memory limit to what it uses and launches it;
// hoisted copies only where the rows are whole chunks, else stage_tile's
// (mma_sync_v17::rows_whole_chunks).
template <class Tiles, bool TA, bool TB>
void launch(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C) {
  if constexpr (Tiles::HOISTED_COPIES)
    if (!mma_sync_v17::rows_whole_chunks<TA, TB>(M, N, K))
      return launch<typename Tiles::StageTileCopies, TA, TB>(M, N, K, A, B, C);
  constexpr size_t shared = Tiles::template shared_bytes<TA, TB>();
  warpnet::launch_kernel_opted_in(gemm_mma_sync_pipelined<Tiles, TA, TB>, mma_sync_v17::grid(M, N, Tiles::BN),
                                  dim3(Tiles::THREADS), shared, M, N, K, A, B, C);
}

}  // namespace mma_sync_v23
