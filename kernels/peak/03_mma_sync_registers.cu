// Peak v3 — mma.sync m16n8k16 (bf16, fp32 accumulation) on operands held in
// registers, with matmul v17's warps: the most Hopper's tensor cores give the
// instruction of Ampere at 8 warps a block.
//
// Idea: v17's warps (8 of them, a 64x64 warp tile each = 4 x 8 m16n8
//   fragments, 128 fp32 accumulators a thread), with their operands loaded
//   once: each warp takes its A and B fragments of the one k16 with ldmatrix
//   before the loop, and every repeat is the warp tile's 32 mma.sync and
//   nothing else. No load, no barrier, no address: its rate is the ceiling of
//   any kernel built on mma.sync with these warps, whatever it does with its
//   memory. Set against cuBLAS's bf16 (wgmma) and peak v6 (wgmma on the same
//   tile), it says how much of the tensor cores the older instruction can
//   reach on Hopper at all, before a GEMM feeds it.
// Changed: first version.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-peak.json, `warpnet bench peak`):
//   7.08 ms = 640.8 TFLOP/s at 1056 blocks x 4096 repeats, 64.8% of the datasheet's dense bf16 peak.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/03 --size 2,3
#include "kernels/common/mma_store.hpp"
#include "kernels/peak/mma_sync_tile.hpp"

// A: (128,16) row-major bf16; B: (16,256) row-major bf16; C: (gridDim.x,128,256)
// fp32, C[b] = repeats * (A @ B). Launch: block (kThreads<WN>: 8 warps for
// WN = 64, 16 for 32), grid (blocks); static shared 14.3 KiB.
template <int WN>
__global__ void __launch_bounds__(peak_mma_sync::kThreads<WN>, 1)
    peak_mma_sync_registers(int repeats, const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                            float* __restrict__ C) {
  using namespace peak_mma_sync;
  __shared__ __align__(16) T sa[A_ELEMS];
  __shared__ __align__(16) T sb[B_ELEMS];
  stage<kThreads<WN>>(sa, sb, A, B);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm0 = (warp / (TN / WN)) * WM, wn0 = (warp % (TN / WN)) * WN;
  uint32_t af[MI][4], bf[WN / 16][4];
  load_fragments<WN>(sa, sb, wm0, wn0, lane, af, bf);
  float acc[MI][WN / 8][4] = {};
  for (int r = 0; r < repeats; ++r) mma_warp_tile<WN>(acc, af, bf);
  warpnet::store_mma_fragments(acc, C + size_t(blockIdx.x) * TM * TN, TM, TN, wm0, wn0, lane);
}
