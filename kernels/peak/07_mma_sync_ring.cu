// Peak v7 — peak v5's warps, ldmatrix and mma.sync, reading a ring of four
// stages with one barrier every 32 k: matmul v17's main loop without its
// copies.
//
// Idea: peak v5 (635 TFLOP/s on an H200, 2026-12-04) and matmul v17 (212)
//   run the same inner loop; v17 adds its memory pipeline around it. This
//   version adds the first half of that pipeline and nothing else: the tiles
//   sit in v17's ring of four 32-deep stages (v17's NN layout and pitches, in
//   dynamic shared memory), filled once before the loop, and the loop walks
//   the ring with v17's one __syncthreads() per k-step. Between v5 and v7
//   lies what the barrier and the moving stage addresses cost; between v7
//   and v8 (the ring refilled by cp.async, as v17 does), what the copies and
//   their waits cost; between v8 and v17, what DRAM, L2 and the edges cost.
// Changed from v5: fragments read from stage (k-step % 4) of a ring, the
//   two k16 slices of a stage between one barrier and the next.
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/07 --size 2,3
#include "kernels/common/mma_store.hpp"
#include "kernels/peak/mma_sync_ring.hpp"

// A: (128,16) row-major bf16; B: (16,256) row-major bf16; C: (gridDim.x,128,256)
// fp32, C[b] = repeats * (A @ B), a repeat being one k16 slice. Launch: block
// (256) = 8 warps, grid (blocks); dynamic shared peak_ring::kSharedBytes.
__global__ void __launch_bounds__(peak_ring::THREADS, 1)
    peak_mma_sync_ring(int repeats, const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                       float* __restrict__ C) {
  using namespace peak_ring;
  T* sa = warpnet::dynamic_shared<T>();  // stage s: A at sa + s·A_ELEMS, B at sb + s·B_ELEMS
  T* sb = sa + STAGES * A_ELEMS;
  for (int s = 0; s < STAGES; ++s) copy_stage(sa + s * A_ELEMS, sb + s * B_ELEMS, A, B);
  warpnet::ptx::cp_async_wait<0>();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm0 = (warp / (TN / WN)) * peak_mma_sync::WM, wn0 = (warp % (TN / WN)) * WN;
  float acc[peak_mma_sync::MI][WN / 8][4] = {};
  const int steps = repeats / 2;  // whole k-steps; an odd repeat is one slice more
  for (int step = 0; step < steps; ++step) {
    // v17's barrier, which there both publishes a stage's copies and frees
    // the one refilled next; here no stage is refilled, so it only costs.
    __syncthreads();
    const int s = step % STAGES;
#pragma unroll
    for (int slice = 0; slice < 2; ++slice)
      multiply_slice(acc, sa + s * A_ELEMS, sb + s * B_ELEMS, slice, wm0, wn0, lane);
  }
  if (repeats % 2 != 0) {
    __syncthreads();
    const int s = steps % STAGES;
    multiply_slice(acc, sa + s * A_ELEMS, sb + s * B_ELEMS, 0, wm0, wn0, lane);
  }
  warpnet::store_mma_fragments(acc, C + size_t(blockIdx.x) * TM * TN, TM, TN, wm0, wn0, lane);
}
