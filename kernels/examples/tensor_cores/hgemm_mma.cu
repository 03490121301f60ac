// HGEMM with raw PTX: cp.async double buffering, ldmatrix, mma.sync m16n8k16.
//
// Idea: what wmma hides, spelled out. A block of 4 warps owns a 32x32 tile of
//   C. Tiles of A (32x16) and B (16x32) travel global -> shared with cp.async
//   (no register round trip) into one of two stages, so the copy of step k+1
//   overlaps the math of step k (cp.async.wait_group 1). Each warp then pulls
//   its operands out of shared memory with ldmatrix — x4 for A (four 8x8
//   matrices = one 16x16 A fragment), x4.trans for B (row-major B arrives in
//   the column layout mma wants) — and issues two mma.sync m16n8k16 for its
//   16x16 quarter of C. Edges: 16-byte chunks that are out of range are
//   zero-filled (src-size 0); when K or N is not a multiple of 8, rows are
//   not 16-byte aligned and the chunks are copied element by element instead.
// Changed from kernels/matmul/11_wmma.cu: PTX instead of wmma, fp16 inputs in
//   memory (no conversion), asynchronous copies, a two-stage pipeline.
// Measured: not measured on a GPU yet.
// Run: build/bin/test_simt -tc="tensor cores*"; nvcc -arch=sm_90 -c kernels/examples/tensor_cores/hgemm_mma.cu -I. -Isrc
#include "kernels/common/ptx.hpp"

// A: (M,K) row-major fp16; B: (K,N) row-major fp16; C: (M,N) row-major fp32. C = A @ B.
// Launch: block (128); grid (ceil(N/32), ceil(M/32)).
__global__ void hgemm_mma_ldmatrix(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                                   float* __restrict__ C) {
  constexpr int TILE = 32, STEP = 16, CHUNK = 8;  // a 16-byte chunk holds 8 halves
  // Padded rows (48 and 80 bytes) stay 16-byte aligned for ldmatrix and put the
  // 8 rows one ldmatrix phase reads in different banks.
  __shared__ __align__(16) __half As[2][TILE][STEP + 8];  // As[s][r][k] = A[row0 + r, k0 + k], stage s
  __shared__ __align__(16) __half Bs[2][STEP][TILE + 8];  // Bs[s][k][c] = B[k0 + k, col0 + c]
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  const int wr = (warp / 2) * 16, wc = (warp % 2) * 16;
  const bool aligned_rows = K % CHUNK == 0 && N % CHUNK == 0;

  // Thread t < 64 copies chunk t of the A tile (row t/2, halves 8(t%2)..), the
  // others chunk t-64 of the B tile (row (t-64)/4, halves 8((t-64)%4)..).
  auto stage_tiles = [&](int s, int k0) {
    const bool is_a = t < 64;
    const int chunk = is_a ? t : t - 64;
    const int r = is_a ? chunk / 2 : chunk / 4, c = (is_a ? chunk % 2 : chunk % 4) * CHUNK;
    const int g_row = is_a ? row0 + r : k0 + r, g_col = is_a ? k0 + c : col0 + c;
    const int rows = is_a ? M : K, cols = is_a ? K : N;
    const __half* src = is_a ? A : B;
    __half* dst = is_a ? &As[s][r][c] : &Bs[s][r][c];
    if (aligned_rows) {  // a whole chunk is in range or out of it
      const bool inside = g_row < rows && g_col < cols;
      warpnet::ptx::cp_async_cg(dst, inside ? src + g_row * cols + g_col : src, inside ? 16 : 0);
    } else {
      for (int j = 0; j < CHUNK; ++j)
        dst[j] = g_row < rows && g_col + j < cols ? src[g_row * cols + g_col + j] : __float2half(0.0f);
    }
    warpnet::ptx::cp_async_commit();  // one group per stage, empty when nothing went async
  };

  float acc[2][4] = {};  // two m16n8 C fragments: columns wc..wc+7 and wc+8..wc+15
  const int steps = warpnet::ceil_div(K, STEP);
  stage_tiles(0, 0);
  for (int step = 0; step < steps; ++step) {
    const int s = step % 2;
    if (step + 1 < steps) {
      stage_tiles(1 - s, (step + 1) * STEP);  // the next tiles fly while this step computes
      warpnet::ptx::cp_async_wait<1>();       // all but the newest group: stage s has landed
    } else {
      warpnet::ptx::cp_async_wait<0>();
    }
    __syncthreads();  // every thread's copies into stage s are visible
    uint32_t a[4], b[4];
    // A: lane l gives row wr + l%16, columns 8(l/16)..: matrices (rows 0-7, 8-15) x (k 0-7, 8-15) = a0..a7.
    warpnet::ptx::ldmatrix_m8n8<4>(a, &As[s][wr + lane % 16][(lane / 16) * 8]);
    // B: lane l gives k row l%16 of columns wc + 8(l/16)..; .trans yields b0..b3 of both n-blocks.
    warpnet::ptx::ldmatrix_m8n8<4, true>(b, &Bs[s][lane % 16][wc + (lane / 16) * 8]);
    const uint32_t b_left[2] = {b[0], b[1]}, b_right[2] = {b[2], b[3]};
    warpnet::ptx::mma_m16n8k16_f16_f32(acc[0], a, b_left, acc[0]);
    warpnet::ptx::mma_m16n8k16_f16_f32(acc[1], a, b_right, acc[1]);
    __syncthreads();  // every warp is done with stage s before it is refilled
  }
  // C fragment: c0,c1 at (groupID, 2*threadID_in_group + 0/1), c2,c3 eight rows lower.
  const int group = lane >> 2, in_group = lane % 4;
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 4; ++i) {
      const int r = row0 + wr + group + 8 * (i / 2), c = col0 + wc + 8 * n + 2 * in_group + (i % 2);
      if (r < M && c < N) C[r * N + c] = acc[n][i];
    }
}
