// SGEMM v6 — vectorized memory access: float4 (16-byte) loads and stores
// wherever the layout allows, with A's tile stored transposed in shared memory.
//
// Idea: v5 issues one 4-byte instruction per element it moves. A float4 moves
//   four in one instruction, so the block issues a quarter of the memory
//   instructions for the same bytes. Global loads: each thread reads 4
//   consecutive stored elements of A and of B per k-step, C is written 4
//   columns at a time. Shared reads: the inner loop needs a thread's TM rows
//   of As at one k — in v5's (BM, BK) layout those are BK words apart, so As
//   is now stored (BK, BM), transposed, which makes them contiguous:
//   TM/4 + TN/4 float4 reads per k instead of TM + TN scalar ones.
// Changed from v5: As transposed to (BK, BM); float4 global loads, shared
//   reads and C stores; the tile loaders work on the matrices as stored.
// What falls back to 4-byte accesses (honestly): a float4 must be 16-byte
//   aligned, so an operand whose stored row length (K for a row-major A,
//   M for a stored-transposed one; N or K for B; N for C) is not a multiple
//   of 4, or whose pointer is not 16-byte aligned, is read (or written) with
//   four guarded scalar accesses in the same pattern — correct at every size,
//   just more instructions (kernels/common/float4_rows.hpp decides, once per
//   launch for each operand). Shared memory is always read with float4s.
//   Where A (or B, when TB) is stored with K along its rows, the float4 runs
//   along k, and transposing it into As takes four scalar shared stores.
// Still there (for v7): those transposing stores hit 2-way bank conflicts
//   (the two float4s of a row of A land BM*4 words = a multiple of 32 banks
//   apart), and so do the Bs float4 reads (lanes tc and tc+4 of a quarter warp
//   read words 32 apart).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   5.16 ms = 26.6 TFLOP/s at 4096^3, 52.4% of cuBLAS SGEMM in the same run; 26.3 TFLOP/s at 8192^3, 51.5%.
//   Emulator: `warpnet trace matmul/06_vectorized --size 128,128,128`.
// Run: build/bin/test_simt -tc="registry*"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"

// A: (M,K) row-major, or (K,M) when TA; B: (K,N) row-major, or (N,K) when TB;
// C: (M,N) row-major. C = op(A) @ op(B).
// Launch: block ((BM/TM)*(BN/TN)); grid (ceil(N/BN), ceil(M/BM)).
template <int BM, int BN, int BK, int TM, int TN, bool TA = false, bool TB = false>
__global__ void sgemm_vectorized(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C) {
  using warpnet::float4_rows, warpnet::load_float4, warpnet::load_row4, warpnet::store_float4, warpnet::store_row4;
  constexpr int THREADS = (BM / TM) * (BN / TN);  // one thread per TM x TN tile of C
  static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles cover the block tile exactly");
  static_assert(THREADS <= 1024, "CUDA's block size limit");
  // Every float4 starts at a multiple of 4 elements: of the stored rows (so
  // it is aligned, see float4_rows.hpp) and of the shared tiles' rows.
  static_assert(BM % 4 == 0 && BN % 4 == 0 && BK % 4 == 0 && TM % 4 == 0 && TN % 4 == 0,
                "tiles are moved in float4s");
  __shared__ __align__(16) float As[BK][BM];  // As: (BK, BM) shared, transposed A tile: As[k][r] = op(A)[row0 + r, k0 + k]
  __shared__ __align__(16) float Bs[BK][BN];  // Bs: (BK, BN) shared, Bs[k][c] = op(B)[k0 + k, col0 + c]
  const int t = threadIdx.x;
  const int tc = t % (BN / TN);  // this thread's tile is rows tr*TM.., columns tc*TN.. of the block tile
  const int tr = t / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  // The operands as stored: A (a_rows, a_cols), B (b_rows, b_cols), row-major.
  const int a_rows = TA ? K : M, a_cols = TA ? M : K;
  const int b_rows = TB ? N : K, b_cols = TB ? K : N;
  // Same answer for every thread of the grid, so the fallback never diverges.
  const bool a_vec = float4_rows(A, a_cols), b_vec = float4_rows(B, b_cols), c_vec = float4_rows(C, N);
  float acc[TM][TN] = {};  // acc: (TM, TN) registers, C[row0 + tr*TM + i, col0 + tc*TN + j]
  float regM[TM];          // regM: (TM) registers, As[k][tr*TM + i] for the current k
  float regN[TN];          // regN: (TN) registers, Bs[k][tc*TN + j] for the current k
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
      // A thread's TM rows and TN columns are contiguous in As[k] and Bs[k]:
      // TM/4 + TN/4 float4 reads, then TM * TN FMAs from registers.
      for (int i = 0; i < TM; i += 4) {
        const float4 v = load_float4(&As[k][tr * TM + i]);
        regM[i + 0] = v.x, regM[i + 1] = v.y, regM[i + 2] = v.z, regM[i + 3] = v.w;
      }
      for (int j = 0; j < TN; j += 4) {
        const float4 v = load_float4(&Bs[k][tc * TN + j]);
        regN[j + 0] = v.x, regN[j + 1] = v.y, regN[j + 2] = v.z, regN[j + 3] = v.w;
      }
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; j += 4)
      store_row4(C, M, N, row0 + tr * TM + i, col0 + tc * TN + j,
                 make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), c_vec);
}
