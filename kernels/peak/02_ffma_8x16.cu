// Peak v2 — FP32 FFMA fed from shared memory with an 8x16 thread tile: the
// ceiling of a CUDA-core GEMM at 128 accumulators a thread.
//
// Idea: peak v1's loop with twice the columns a thread: 256 threads, 128 fp32
//   accumulators each, and per k 2 + 4 float4 loads for 8 x 16 = 128 FFMA —
//   6 loads per 128 FMAs against v1's 4 per 64, a quarter fewer loads per
//   FMA, and half the warps to hide their latency. Where v2 runs faster than
//   v1, a CUDA-core GEMM gains from the larger thread tile (matmul v09 uses
//   8x8; v10's tuner could offer 8x16); where slower, from more warps.
// Changed from v1: 8x16 thread tile (was 8x8), 256 threads (was 512).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-peak.json, `warpnet bench peak`):
//   81.8 ms = 55.4 TFLOP/s at 1056 blocks x 4096 repeats, 82.9% of the datasheet's FP32 peak.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/02 --size 2,3
#include "kernels/peak/01_ffma_8x8.cu"  // peak_ffma_smem<THREADS, COLS>
