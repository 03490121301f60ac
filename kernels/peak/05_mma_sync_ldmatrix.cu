// Peak v5 — mma.sync m16n8k16 fed by ldmatrix from shared memory every k16:
// the ceiling of matmul v17's inner loop.
//
// Idea: peak v3's warps and instructions, but each repeat loads its fragments
//   again — 4 ldmatrix.x4 for A and 4 for B per 32 mma.sync, exactly v17's
//   inner loop for one k16 — with nothing else: no global memory, no cp.async,
//   no barrier. Between v3 and v5 lies what the loads from shared memory cost
//   the tensor cores; between v5 and matmul v17, what v17's global-memory
//   pipeline and barriers cost.
// Changed from v3: the fragments are loaded in every repeat.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-peak.json, `warpnet bench peak`):
//   7.14 ms = 635.4 TFLOP/s at 1056 blocks x 4096 repeats, 64.2% of the datasheet's dense bf16 peak.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/05 --size 2,3
#include "kernels/common/mma_store.hpp"
#include "kernels/peak/mma_sync_tile.hpp"

// A: (128,16) row-major bf16; B: (16,256) row-major bf16; C: (gridDim.x,128,256)
// fp32, C[b] = repeats * (A @ B). Launch: block (256) = 8 warps, grid (blocks);
// static shared 14.3 KiB.
__global__ void __launch_bounds__(peak_mma_sync::kThreads<64>, 1)
    peak_mma_sync_ldmatrix(int repeats, const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                           float* __restrict__ C) {
  using namespace peak_mma_sync;
  constexpr int WN = 64;  // v17's warp tile
  __shared__ __align__(16) T sa[A_ELEMS];
  __shared__ __align__(16) T sb[B_ELEMS];
  stage<kThreads<WN>>(sa, sb, A, B);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm0 = (warp / (TN / WN)) * WM, wn0 = (warp % (TN / WN)) * WN;
  float acc[MI][WN / 8][4] = {};
  for (int r = 0; r < repeats; ++r) {
    uint32_t af[MI][4], bf[WN / 16][4];  // ldmatrix is volatile asm: issued again every repeat
    load_fragments<WN>(sa, sb, wm0, wn0, lane, af, bf);
    mma_warp_tile<WN>(acc, af, bf);
  }
  warpnet::store_mma_fragments(acc, C + size_t(blockIdx.x) * TM * TN, TM, TN, wm0, wn0, lane);
}
