// GEMM v17 — mma.sync as Ampere-class kernels run it: a 128x256 block tile,
// 64x64 warp tiles and a four-stage cp.async pipeline. bf16 inputs, fp32
// accumulation.
//
// Idea: v12 (33% of cuBLAS bf16 at 4096^3 on an H200) issues mma.sync well
//   but feeds it poorly. This version keeps its instructions (cp.async,
//   ldmatrix, mma.sync m16n8k16) and changes how much each one carries:
//   - Operands per mma. A 64x32 warp tile loads 4 A and 2 B ldmatrix.x4 for
//     16 mma per k16; a 64x64 warp tile loads 4 A and 4 B for 32 mma, and a
//     128x256 block tile reads 128 + 256 operand rows per 128x256 outputs
//     (3/256 per output against v12's 1/64): a quarter less shared-memory and
//     L2 traffic per FLOP. 128 fp32 accumulators per thread.
//   - Latency hidden. Two stages cover one k-step of global latency; four
//     stages keep three tiles in flight while one is computed, and one
//     __syncthreads per k-step (v12 has two) orders both the arrival of a
//     stage and the end of reading the one refilled next (the loop's comment).
//   - L2 reuse. Blocks take their C tiles in groups of GROUP_M tile rows walked
//     column by column (grouped_tile), so the blocks running at once share
//     their A rows and B columns through L2, as v16's persistent walk does.
//   Shared memory: 4 stages of (128x32 A + 32x256 B) bf16 tiles, rows padded
//   16 bytes as in v12 = 100-120 KiB by layout, over the 48 KiB a block gets
//   without opting in (launch() raises the limit); one block per SM. ptxas
//   (nvcc 13.0, sm_90a; bench/results/ptxas-sm90a-2026-12-07.txt) fits it in
//   195-197 registers by layout, no spills.
// Layouts, banks, edges: v12's (its stage_tile copies every tile; ldmatrix's
//   .trans transposes the m- or n-contiguous ones), for any M, N, K and all
//   four layouts.
// Changed from v12: block tile 128x256 (was 128x128), warp tile 64x64 (was
//   64x32), 4 stages (was 2) with one barrier per k-step, grouped tile order,
//   dynamic shared memory.
// Since 2026-12-05 the block's pieces (its tiles, copies, fragments and
//   epilogue) are mma_sync_v17::Block, which v23 shares, and the block's
//   width, ring depth and copies template parameters (Tiles) that v24
//   varies; the loop is what it was. With hoisted copies (v24's candidate
//   9) the loop is 157-163 instructions for 64 mma.sync, against 313-330.
// Trace (emulator, `warpnet trace matmul/17 --size 256,256,128,TA,TB`, each of
//   the four layouts): global loads 16 sectors per 16-byte request (100%),
//   stores 8-byte pairs at 100%, ldmatrix and cp.async 1.00-way (no bank
//   conflicts). For the same C, 384 global load requests and 1024 ldmatrix
//   against v12's 512 and 1536, for the same mma.sync count.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04.json, `warpnet bench matmul`):
//   0.649 ms = 212 TFLOP/s at 4096^3, 27.8% of cuBLAS bf16 in the same run; 217 TFLOP/s at 8192^3, 27.3%:
//   below v12's 32.5% / 30.4% in the same run.
// Run: build/bin/test_simt -tc="registry*"; build/bin/warpnet trace matmul/17 --size 127,129,65;
//   build/bin/warpnet bench matmul --size 4096,4096,4096 --kernels matmul/12,matmul/16,matmul/17
#include "kernels/common/mma_store.hpp"
#include "kernels/common/ptx.hpp"
#include "kernels/common/tile_order.hpp"
#include "kernels/matmul/12_mma_sync.cu"  // mma_sync_v12::stage_tile
#include "kernels/matmul/hoisted_copies.hpp"

namespace mma_sync_v17 {

constexpr int BM = 128, BK = 32;  // block tile rows of C, k-step
constexpr int WM = 64, WN = 64;   // warp tile of C
constexpr int GROUP_M = 8;        // tile rows per group of the tile order (grouped_tile)
constexpr int PAD = 8;            // 16 bytes per shared row: conflict-free ldmatrix (v12's header)

// A block's shape: BN_ columns of C (2 x BN_/64 warps of 64x64) and STAGES_
// k-steps in flight; how it copies: v12's stage_tile, or with HOISTED_ the
// copies of hoisted_copies.hpp, each thread's addresses worked out before
// the k-loop. Hoisted copies take only rows of whole 16-byte chunks
// (rows_whole_chunks); for other shapes the launch runs the same block with
// stage_tile (StageTileCopies), so the kernel carries no fallback beside
// them. The registered v17 is Tiles<256, 4> (stage_tile); v23 uses hoisted
// copies; v24 (autotuned) also launches 128x128 blocks of 4 warps, two to
// an SM, with 2-4 stages, and both copies.
template <int BN_, int STAGES_, bool HOISTED_ = false>
struct Tiles {
  static constexpr int BN = BN_, STAGES = STAGES_;
  static constexpr bool HOISTED_COPIES = HOISTED_;
  using StageTileCopies = Tiles<BN_, STAGES_, false>;  // the same block, copied by stage_tile
  static constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  // ptxas gives a thread about 200 registers (128 accumulators): 256 threads
  // fill half an SM's register file, 128 threads let two blocks share it.
  static constexpr int MIN_BLOCKS = THREADS <= 128 ? 2 : 1;
  static_assert(BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "warps of whole m16 x n16 pairs");
  static_assert(STAGES >= 2, "one stage computed while the next one lands");
  // Shared tiles as stored: A k-contiguous unless TA, B k-contiguous only when TB.
  template <bool TA>
  static constexpr int A_PITCH = TA ? BM + PAD : BK + PAD;
  template <bool TA>
  static constexpr int A_ELEMS = TA ? BK * A_PITCH<TA> : BM * A_PITCH<TA>;
  template <bool TB>
  static constexpr int B_PITCH = TB ? BK + PAD : BN + PAD;
  template <bool TB>
  static constexpr int B_ELEMS = TB ? BN * B_PITCH<TB> : BK * B_PITCH<TB>;
  // Dynamic shared memory of one block: every stage's A tile, then every stage's B tile.
  template <bool TA, bool TB>
  static constexpr size_t shared_bytes() {
    return size_t(STAGES) * (A_ELEMS<TA> + B_ELEMS<TB>) * 2;
  }
};
using Registered = Tiles<256, 4>;  // matmul/17: 128x256, 8 warps, 4 stages
static_assert(Registered::THREADS == 256 && Registered::shared_bytes<false, true>() <= 227 * 1024,
              "8 warps; the largest layout (120 KiB) fits sm_90's opt-in shared memory");

// Whether every stored row of A and of B is whole 16-byte chunks (8 bf16
// elements): stage_tile's aligned path, and what the hoisted copies need.
template <bool TA, bool TB>
__host__ __device__ constexpr bool rows_whole_chunks(int M, int N, int K) {
  return (TA ? M : K) % 8 == 0 && (TB ? K : N) % 8 == 0;
}

// What a block of v17's kernel (and of v23's, which pipelines the same
// steps differently) works with: its tile of C, its warp's tile inside it,
// the ring of stages in dynamic shared memory, the copy of one k-step into
// its stage, and a warp's fragments of one k16 slice of a stage.
// A: (M,K) row-major bf16, or (K,M) when TA; B: (K,N) row-major bf16, or
// (N,K) when TB.
template <class Tiles, bool TA, bool TB>
struct Block {
  using T = __nv_bfloat16;
  static constexpr int BN = Tiles::BN, STAGES = Tiles::STAGES, THREADS = Tiles::THREADS;
  static constexpr int MI = WM / 16, NI = WN / 8;  // m16 x n8 fragments per warp tile
  static constexpr int AP = Tiles::template A_PITCH<TA>, BP = Tiles::template B_PITCH<TB>;
  static constexpr int A_ELEMS = Tiles::template A_ELEMS<TA>, B_ELEMS = Tiles::template B_ELEMS<TB>;
  // A warp's operands of one k16 slice: a[i] one A fragment (rows wm0+16i..),
  // b[j] the B fragments of n8 tiles 2j and 2j+1.
  struct Fragments {
    uint32_t a[MI][4], b[NI / 2][4];
  };

  int M, N, K;
  const T* __restrict__ A;
  const T* __restrict__ B;
  // sA[s]: (BM, BK+8) = op(A) tile, or (BK, BM+8) = its stored transpose when TA; stage s.
  // sB[s]: (BK, BN+8) = op(B) tile, or (BN, BK+8) = its stored transpose when TB; stage s.
  T* sA;
  T* sB;
  int row0, col0;  // the block's tile of C
  int wm0, wn0;    // this warp's tile inside it
  int steps;       // k-steps of BK
  bool a_aligned, b_aligned;
  int mat, mrow;  // ldmatrix.x4, as in v12: lane l gives row l%8 of matrix l/8
  // The hoisted copies (Tiles::HOISTED_COPIES, launched only when
  // rows_whole_chunks; unused, and optimized away, otherwise).
  // A's tile is rows m (k moves its columns) unless TA; B's is rows k unless TB.
  mma_sync_copies::TileCopies<TA ? BK : BM, TA ? BM : BK, AP, THREADS, TA, T> a_copies;
  mma_sync_copies::TileCopies<TB ? BN : BK, TB ? BK : BN, BP, THREADS, !TB, T> b_copies;

  __device__ Block(int M_, int N_, int K_, const T* A_, const T* B_) : M(M_), N(N_), K(K_), A(A_), B(B_) {
    sA = warpnet::dynamic_shared<T>();
    sB = sA + STAGES * A_ELEMS;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const warpnet::TileIndex tile =
        warpnet::grouped_tile(int(blockIdx.x), warpnet::ceil_div(M, BM), warpnet::ceil_div(N, BN), GROUP_M);
    row0 = tile.m * BM, col0 = tile.n * BN;
    wm0 = (warp / Tiles::WARPS_N) * WM, wn0 = (warp % Tiles::WARPS_N) * WN;
    steps = warpnet::ceil_div(K, BK);
    a_aligned = (TA ? M : K) % 8 == 0, b_aligned = (TB ? K : N) % 8 == 0;  // rows_whole_chunks, per operand
    mat = lane / 8, mrow = lane % 8;
    if constexpr (Tiles::HOISTED_COPIES) {  // the tiles' origins at k = 0
      a_copies = TA ? decltype(a_copies)(K, M, 0, row0) : decltype(a_copies)(M, K, row0, 0);
      b_copies = TB ? decltype(b_copies)(N, K, col0, 0) : decltype(b_copies)(K, N, 0, col0);
    }
  }

  // Issues the tiles of k-step `step` into its stage as one cp.async group;
  // past the last step an empty group, so that every iteration commits one
  // and wait_group counts stay the same.
  __device__ __forceinline__ void stage(int step) const {
    if (step < steps) {
      T* a = sA + (step % STAGES) * A_ELEMS;
      T* b = sB + (step % STAGES) * B_ELEMS;
      const int k0 = step * BK;
      if constexpr (Tiles::HOISTED_COPIES) {  // rows of whole chunks (the launch saw to it)
        a_copies.copy(a, A, k0);
        b_copies.copy(b, B, k0);
      } else {
        if constexpr (TA) mma_sync_v12::stage_tile<BK, BM, THREADS>(a, AP, A, K, M, k0, row0, a_aligned);
        else mma_sync_v12::stage_tile<BM, BK, THREADS>(a, AP, A, M, K, row0, k0, a_aligned);
        if constexpr (TB) mma_sync_v12::stage_tile<BN, BK, THREADS>(b, BP, B, N, K, col0, k0, b_aligned);
        else mma_sync_v12::stage_tile<BK, BN, THREADS>(b, BP, B, K, N, k0, col0, b_aligned);
      }
    }
    warpnet::ptx::cp_async_commit();
  }

  // This warp's fragments of the k16 slice at kk (0 or 16) of step's stage.
  __device__ __forceinline__ void load(Fragments& f, int step, int kk) const {
    const T* a = sA + (step % STAGES) * A_ELEMS;
    const T* b = sB + (step % STAGES) * B_ELEMS;
#pragma unroll
    for (int i = 0; i < MI; ++i) {  // A fragment m16 x k16 at (wm0 + 16i, kk)
      const int m = wm0 + 16 * i;
      const T* row = TA ? &a[(kk + mrow + 8 * (mat / 2)) * AP + m + 8 * (mat % 2)]   // stored rows are k: .trans
                        : &a[(m + mrow + 8 * (mat % 2)) * AP + kk + 8 * (mat / 2)];  // stored rows are m
      warpnet::ptx::ldmatrix_m8n8<4, TA>(f.a[i], row);
    }
#pragma unroll
    for (int j = 0; j < NI / 2; ++j) {  // B fragments k16 x n16 at (kk, wn0 + 16j): two n8 tiles
      const int n = wn0 + 16 * j;
      const T* row = TB ? &b[(n + mrow + 8 * (mat / 2)) * BP + kk + 8 * (mat % 2)]   // stored rows are n
                        : &b[(kk + mrow + 8 * (mat % 2)) * BP + n + 8 * (mat / 2)];  // stored rows are k: .trans
      warpnet::ptx::ldmatrix_m8n8<4, !TB>(f.b[j], row);
    }
  }

  // acc[i][j] (the C fragment of rows wm0+16i.., columns wn0+8j..) += one k16 slice.
  __device__ __forceinline__ static void multiply(float (&acc)[MI][NI][4], const Fragments& f) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const uint32_t bj[2] = {f.b[j / 2][2 * (j % 2)], f.b[j / 2][2 * (j % 2) + 1]};
        warpnet::ptx::mma_m16n8k16_bf16_f32(acc[i][j], f.a[i], bj, acc[i][j]);
      }
  }

  // The warp's accumulators into C: (M,N) row-major fp32, guarded at every edge.
  __device__ __forceinline__ void store(const float (&acc)[MI][NI][4], float* C) const {
    warpnet::store_mma_fragments(acc, C, M, N, row0 + wm0, col0 + wn0, int(threadIdx.x % 32));
  }
};

}  // namespace mma_sync_v17

// C: (M,N) row-major fp32 = op(A) @ op(B), A and B as mma_sync_v17::Block has them.
// Launch: block (Tiles::THREADS) = 8 warps for 128x256; grid (ceil(M/128) *
// ceil(N/BN)); dynamic shared memory Tiles::shared_bytes<TA, TB>() (mma_sync_v17::launch).
template <class Tiles, bool TA = false, bool TB = false>
__global__ void __launch_bounds__(Tiles::THREADS, Tiles::MIN_BLOCKS)
    gemm_mma_sync_multistage(int M, int N, int K, const __nv_bfloat16* __restrict__ A,
                             const __nv_bfloat16* __restrict__ B, float* __restrict__ C) {
  using Block = mma_sync_v17::Block<Tiles, TA, TB>;
  constexpr int STAGES = Tiles::STAGES;
  const Block block(M, N, K, A, B);

  float acc[Block::MI][Block::NI][4] = {};
  for (int s = 0; s < STAGES - 1; ++s) block.stage(s);
  for (int step = 0; step < block.steps; ++step) {
    // STAGES-1+step groups are committed; step's is the oldest not yet waited
    // for, so at most STAGES-2 may stay in flight.
    warpnet::ptx::cp_async_wait<STAGES - 2>();
    // One barrier for two orders: every thread's copies into this step's
    // stage are visible, and every warp has finished step-1, whose stage the
    // next line refills.
    __syncthreads();
    block.stage(step + STAGES - 1);
#pragma unroll
    for (int kk = 0; kk < mma_sync_v17::BK; kk += 16) {
      typename Block::Fragments f;
      block.load(f, step, kk);
      Block::multiply(acc, f);
    }
  }
  warpnet::ptx::cp_async_wait<0>();  // the trailing groups are empty; none is left behind

  block.store(acc, C);
}

namespace mma_sync_v17 {

inline dim3 grid(int M, int N, int bn) { return dim3(warpnet::ceil_div(M, BM) * warpnet::ceil_div(N, bn)); }

// Raises the kernel's shared-memory limit to what it uses and launches it;
// hoisted copies only where the rows are whole chunks, else stage_tile's.
template <class Tiles, bool TA, bool TB>
void launch(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, float* C) {
  if constexpr (Tiles::HOISTED_COPIES)
    if (!rows_whole_chunks<TA, TB>(M, N, K)) return launch<typename Tiles::StageTileCopies, TA, TB>(M, N, K, A, B, C);
  constexpr size_t shared = Tiles::template shared_bytes<TA, TB>();
  warpnet::launch_kernel_opted_in(gemm_mma_sync_multistage<Tiles, TA, TB>, grid(M, N, Tiles::BN), dim3(Tiles::THREADS),
                                  shared, M, N, K, A, B, C);
}

}  // namespace mma_sync_v17
