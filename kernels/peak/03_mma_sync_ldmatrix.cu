// Peak v3 — mma.sync m16n8k16 fed by ldmatrix from shared memory every k16:
// the ceiling of matmul v17's inner loop.
//
// Idea: peak v2's warps and instructions, but each repeat loads its fragments
//   again — 4 ldmatrix.x4 for A and 4 for B per 32 mma.sync, exactly v17's
//   inner loop for one k16 — with nothing else: no global memory, no cp.async,
//   no barrier. Between v2 and v3 lies what the loads from shared memory cost
//   the tensor cores; between v3 and matmul v17, what v17's global-memory
//   pipeline and barriers cost.
// Changed from v2: the fragments are loaded in every repeat.
// Measured: not yet measured on a GPU.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/03 --size 2,3
#include "kernels/common/mma_store.hpp"
#include "kernels/peak/mma_sync_tile.hpp"

// A: (128,16) row-major bf16; B: (16,256) row-major bf16; C: (gridDim.x,128,256)
// fp32, C[b] = repeats * (A @ B). Launch: block (256) = 8 warps, grid (blocks);
// static shared 14.3 KiB.
__global__ void __launch_bounds__(peak_tile::THREADS, 1)
    peak_mma_sync_ldmatrix(int repeats, const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                           float* __restrict__ C) {
  using namespace peak_mma_sync;
  __shared__ __align__(16) T sa[A_ELEMS];
  __shared__ __align__(16) T sb[B_ELEMS];
  stage(sa, sb, A, B);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  float acc[MI][NI][4] = {};
  for (int r = 0; r < repeats; ++r) {
    uint32_t af[MI][4], bf[NI / 2][4];  // ldmatrix is volatile asm: issued again every repeat
    load_fragments(sa, sb, wm0, wn0, lane, af, bf);
    mma_warp_tile(acc, af, bf);
  }
  warpnet::store_mma_fragments(acc, C + size_t(blockIdx.x) * TM * TN, TM, TN, wm0, wn0, lane);
}
