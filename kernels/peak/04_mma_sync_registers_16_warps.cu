// Peak v4 — mma.sync on operands in registers with matmul v12's warps: 16
// warps of 64x32 on an SM, 64 fp32 accumulators a thread.
//
// Idea: peak v3's loop with half the warp tile and twice the warps: 16 mma.sync
//   per warp and repeat instead of 32, and four warps on each of the SM's four
//   schedulers instead of two. mma.sync waits for its operands and gives its
//   results back to registers, so a scheduler with few warps may find none
//   ready while one waits; v3 against v4 shows whether 8 warps are enough to
//   keep the tensor cores busy, which is one of the differences between
//   matmul v17 (one block of 8 warps an SM, 28% of cuBLAS bf16 on an H200)
//   and v12 (blocks of 8 warps of 64x32 at 92-98 registers, two resident on
//   an SM: 16 warps; 33%).
// Changed from v3: 64x32 warp tiles (was 64x64), 512 threads (was 256).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-peak.json, `warpnet bench peak`):
//   7.04 ms = 644.7 TFLOP/s at 1056 blocks x 4096 repeats, 65.2% of the datasheet's dense bf16 peak.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace peak/04 --size 2,3
#include "kernels/peak/03_mma_sync_registers.cu"  // peak_mma_sync_registers<WN>
