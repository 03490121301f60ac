// Row reduction v5 — a 1024-thread block per row, for few long rows.
//
// Idea: a GPU hides a load's latency with other loads in flight. With a
//   block per row and few rows (N = 8 rows of a million floats: 8 blocks, on
//   8 of the SMs), v3's 256 threads keep at most 256 loads in flight per row;
//   1024 threads, CUDA's largest block, keep four times as many and take a
//   quarter of the loop's trips each. The block reduction is v3's
//   (block_allreduce: shuffles, two barriers); with 32 warps its second
//   stage reads all 32 partials, one per lane.
// Changed from v3: BLOCK = 1024 instead of 256; the kernel is v3's template.
// Cost: short rows leave most of the 1024 threads idle (C = 100: 924 of
//   them; v4 is the version for those), and a 1024-thread block waits for
//   its slowest warp at each barrier.
// Measured: not yet measured on a GPU. Emulator: `warpnet trace sum_rows/05 --size 17,1031`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/reduce/03_warp_shuffle.cu"  // reduce_warp_shuffle<Op, BLOCK>, launched with BLOCK = 1024
