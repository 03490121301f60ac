// SGEMM v7 — bank-conflict-free shared memory: v6 with padded tiles and
// interleaved thread columns, so no shared access waits on a busy bank.
//
// Idea: shared memory has 32 banks, one 4-byte word each per cycle; lanes of a
//   warp (a quarter warp, for 16-byte accesses) that touch different words of
//   one bank are served one after the other. v6 had two such collisions:
//   - Transposing stores into As (and into Bs when TB): a warp holds 16 rows
//     of A x two float4s along k, and writes As[q + j][s] for q in {0, 4}.
//     The two halves land 4*BM words apart — a multiple of 32, the same banks:
//     2-way. Padding each As row by 4 floats moves the second half
//     4*(BM + 4) = 4*BM + 16 words on, 16 banks over: all 32 lanes on
//     distinct banks. 4 (not 1) keeps every row 16-byte aligned for the float4
//     reads. (An XOR swizzle of the column would do the same without the
//     4*BK wasted floats; padding is the simpler one to read.)
//   - The float4 reads of Bs: lane tc read columns tc*TN.., so lanes tc and
//     tc+4 of a quarter warp were 32 words apart, the same banks: 2-way. Now a
//     thread's TN columns are TN/4 float4s spread BN/(TN/4) apart (columns
//     tc*4 + g*64 for BN = 128, TN = 8): a quarter warp's 8 float4s are 32
//     consecutive words, every bank once. C is written in the same pattern
//     (still whole 16-byte runs, now 256 contiguous bytes per row of a warp).
//   The As float4 reads were already broadcasts (a quarter warp shares tr).
// Changed from v6: As (BK, BM + 4) and Bs (BK, BN + 4) padded; the columns a
//   thread owns are interleaved with its neighbours' instead of contiguous.
//   The float4 fallback rules are v6's (kernels/common/float4_rows.hpp).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   4.73 ms = 29.1 TFLOP/s at 4096^3, 57.2% of cuBLAS SGEMM in the same run; 28.2 TFLOP/s at 8192^3, 55.2%.
//   Emulator: `warpnet trace matmul/07_bank_conflict_free --size 128,128,128`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block ((BM/TM)*(BN/TN)); grid (ceil(N/BN), ceil(M/BM)).
template <int BM, int BN, int BK, int TM, int TN, bool TA = false, bool TB = false>
__global__ void sgemm_bank_conflict_free(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                         float* __restrict__ C) {
  using warpnet::float4_rows, warpnet::load_float4, warpnet::load_row4, warpnet::store_float4, warpnet::store_row4;
  constexpr int THREADS = (BM / TM) * (BN / TN);  // one thread per TM x TN tile of C
  static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles cover the block tile exactly");
  static_assert(THREADS <= 1024, "CUDA's block size limit");
  // Every float4 starts at a multiple of 4 elements: of the stored rows (so
  // it is aligned, see float4_rows.hpp) and of the shared tiles' rows.
  static_assert(BM % 4 == 0 && BN % 4 == 0 && BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,
                "tiles are moved in float4s");
  // The padding argument above: a warp's transposing stores cover 16 tile
  // rows x BK/4 = 2 float4s along k, and the two land 4*(BM + PAD) words
  // apart, 16 banks over, when (BM + PAD) % 8 == 4 (likewise BN). A wider BK
  // would put more than two float4s in a warp, and some back on one bank.
  constexpr int PAD = 4;  // floats added to each shared row; a multiple of 4 keeps rows float4-aligned
  static_assert(BK == 8 && (BM + PAD) % 8 == 4 && (BN + PAD) % 8 == 4, "the bank arithmetic of the padding");
  // A thread's columns: TN/4 float4 groups, group g at g*COL_STRIDE + tc*4, so
  // the threads of a row of thread tiles cover COL_STRIDE contiguous columns per group.
  constexpr int COL_STRIDE = 4 * (BN / TN);
  __shared__ __align__(16) float As[BK][BM + PAD];  // As: (BK, BM+4) shared, transposed A tile: As[k][r] = op(A)[row0 + r, k0 + k]
  __shared__ __align__(16) float Bs[BK][BN + PAD];  // Bs: (BK, BN+4) shared, Bs[k][c] = op(B)[k0 + k, col0 + c]
  const int t = threadIdx.x;
  const int tc = t % (BN / TN);  // this thread's tile: rows tr*TM.., columns tc*4 + g*COL_STRIDE + 0..3
  const int tr = t / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  // The operands as stored: A (a_rows, a_cols), B (b_rows, b_cols), row-major.
  const int a_rows = TA ? K : M, a_cols = TA ? M : K;
  const int b_rows = TB ? N : K, b_cols = TB ? K : N;
  // Same answer for every thread of the grid, so the fallback never diverges.
  const bool a_vec = float4_rows(A, a_cols), b_vec = float4_rows(B, b_cols), c_vec = float4_rows(C, N);
  // acc: (TM, TN) registers, C[row0 + tr*TM + i, col0 + (j/4)*COL_STRIDE + tc*4 + j%4]
  float acc[TM][TN] = {};
  float regM[TM];  // regM: (TM) registers, As[k][tr*TM + i] for the current k
  float regN[TN];  // regN: (TN) registers, Bs[k][(j/4)*COL_STRIDE + tc*4 + j%4] for the current k
  for (int k0 = 0; k0 < K; k0 += BK) {
    // The A tile as stored is BM x BK (row-major A) or BK x BM (TA); f walks
    // its float4s row by row, so consecutive threads read consecutive addresses.
    constexpr int A_ROW4 = (TA ? BM : BK) / 4;  // float4s per stored row of the tile
    for (int f = t; f < BM * BK / 4; f += THREADS) {
      const int s = f / A_ROW4, q = (f % A_ROW4) * 4;  // stored tile row s, columns q..q+3
      if constexpr (TA) {  // four rows of op(A) at one k: already As's layout, one float4 store
        store_float4(&As[s][q], load_row4(A, a_rows, a_cols, k0 + s, row0 + q, a_vec));
      } else {  // four k of one row of op(A): transposed on the way in, four scalar stores
        const float4 v = load_row4(A, a_rows, a_cols, row0 + s, k0 + q, a_vec);
        As[q + 0][s] = v.x;
        As[q + 1][s] = v.y;
        As[q + 2][s] = v.z;
        As[q + 3][s] = v.w;
      }
    }
    constexpr int B_ROW4 = (TB ? BK : BN) / 4;  // B's tile as stored: BK x BN, or BN x BK (TB)
    for (int f = t; f < BK * BN / 4; f += THREADS) {
      const int s = f / B_ROW4, q = (f % B_ROW4) * 4;
      if constexpr (TB) {  // four k of one column of op(B): transposed on the way in
        const float4 v = load_row4(B, b_rows, b_cols, col0 + s, k0 + q, b_vec);
        Bs[q + 0][s] = v.x;
        Bs[q + 1][s] = v.y;
        Bs[q + 2][s] = v.z;
        Bs[q + 3][s] = v.w;
      } else {  // four columns of op(B) at one k: Bs's layout already
        store_float4(&Bs[s][q], load_row4(B, b_rows, b_cols, k0 + s, col0 + q, b_vec));
      }
    }
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int k = 0; k < BK; ++k) {
      // TM/4 + TN/4 float4 reads, then TM * TN FMAs from registers. The As
      // reads are broadcasts (a quarter warp shares tr); in the Bs reads a
      // quarter warp's lanes tc..tc+7 take 8 consecutive float4s.
      for (int i = 0; i < TM; i += 4) {
        const float4 v = load_float4(&As[k][tr * TM + i]);
        regM[i + 0] = v.x, regM[i + 1] = v.y, regM[i + 2] = v.z, regM[i + 3] = v.w;
      }
      for (int j = 0; j < TN; j += 4) {
        const float4 v = load_float4(&Bs[k][(j / 4) * COL_STRIDE + tc * 4]);
        regN[j + 0] = v.x, regN[j + 1] = v.y, regN[j + 2] = v.z, regN[j + 3] = v.w;
      }
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; j += 4)
      store_row4(C, M, N, row0 + tr * TM + i, col0 + (j / 4) * COL_STRIDE + tc * 4,
                 make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), c_vec);
}
