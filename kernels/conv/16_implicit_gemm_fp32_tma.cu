// Conv v16 — Hopper (sm_90a): the implicit GEMM in fp32 on the CUDA cores,
// its operands copied by TMA (conv2d_nhwc: x (N,H,W,C), w (K,R,S,C),
// y (N,P,Q,K), all fp32; fp32 sums).
//
// Idea: the fp32 implicit GEMMs before this one spend most of their loop on
//   anything but multiply-adds. In the SASS of conv v09's pipelined tiles
//   (nvcc 13, sm_90a; bench/results/sass-loops-sm90a-2026-12-06.txt) 34% to
//   50% of the main loop is FFMA; the rest decodes taps (IMAD, ISETP, IABS,
//   and I2F/MUFU for divisions), computes addresses and issues cp.async. On
//   an H200 v09 ran at 28.6-29.8 TFLOP/s (2026-12-04), the fp32 matmul v09 at
//   35. Two versions already took that work out of the math warps:
//   - matmul v20: a producer warpgroup issues TMA copies into v16's ring;
//     the consumers only wait, load 16 bytes at a time from the 128-byte
//     swizzle and multiply (93-94% FFMA in its loop's SASS);
//   - conv v14: TMA's im2col mode cuts the A tile itself, TILE_M consecutive
//     output pixels of one filter tap, zeros in the padding, across rows and
//     images, so no thread computes a pixel's address.
//   This version is the two together, in fp32: v14's producer and tiles with
//   32 channels a k-step (one 128-byte row, as v14's 64 bf16), and v20's
//   consumer loop on the two K-major tiles (x's pixels and w's output
//   channels both keep the channels innermost).
// Tiles: BN = conv_v13::channel_tile(K) output channels (64, 128 or 256) by
//   TILE_M output pixels, in v14's order. 256 consumer threads, TY down x TX
//   across, each a TM x TN thread tile: rows ty + TY·i, channels tx + TX·j.
//   With TM = 8 these are v14's tiles (conv_v14::pixel_tile):
//     BN = 256: 128 x 256, 8 x 16 a thread (v20's: 16 x 16 threads);
//     BN = 128: 128 x 128, 8 x 8 (16 x 16 threads);
//     BN =  64: 256 x 64,  8 x 8 (32 down x 8 across).
//   8 x 8 reads 16 16-byte loads per 256 FFMA, 8 x 16 24 per 512; the
//   ceilings' kernels (bench/results/nvidia-h200-2026-12-04-peak.json) ran
//   them at 53.6 and 55.4 TFLOP/s on an H200. At issue 5's layers (N = 64)
//   they make 784 tiles of 256 x 64 at 56x56 (5.9 rounds of 132 SMs), 392
//   of 128 x 128 at 28x28 (2.97) and 98 of 128 x 256 at 14x14: one round
//   with 34 SMs idle. So each width has a tile 3/4 as tall, TM = 6 (192 x
//   64, 96 x 128, 96 x 256; 6 x 16 reads 22 loads per 384 FFMA), and
//   rows_per_thread takes it where the busiest SM then computes fewer pixel
//   rows: at 14x14, 131 tiles of 96 x 256, one round of 96 rows instead of
//   128; at 28x28 and 56x56 the rounds come out even and the tall tiles
//   stay. Arithmetic, not a measurement: on a GPU the registration's tune
//   times both heights at each size, checks both against the definition
//   and keeps the faster (src/device/kernels/conv/tile_tune.hpp; both give
//   the same bits, each output's products summed in the same order); the
//   rule decides without one. The record names the tile that ran (Kernel::candidate).
// Loads: TX and TY are multiples of 8, so each thread's rows share row % 8
//   and v20's ThreadLoads (one XOR a k, the rest immediates) serves both
//   tiles with its rows TY (A) or TX (B) apart. The 8 lanes of a load phase
//   (8 consecutive lanes: one ty, 8 tx) read one A row, a broadcast, or 8
//   B rows of one chunk, which the swizzle spreads over 8 bank groups.
// Stages: TILE_M x 128 bytes + BN x 128 bytes = 48, 32 or 40 KiB (44, 28,
//   32 for the short tiles); v16's ring of 4. At BN = 256 the 128 (or 96)
//   accumulators need setmaxnreg's split (40 producer, 232 consumers), as
//   v20; the narrower tiles hold 64 (or 48) and do not move registers. ptxas
//   (13.0, sm_90a; bench/results/ptxas-sm90a-2026-12-07.txt): 168 registers
//   for every 8-row kernel and for 96 x 256, 128 for 192 x 64 and 96 x 128,
//   none spilled.
// Edges: v14's: C a multiple of 4 (a pixel's channels a whole number of
//   16-byte chunks), stride at most 8, the im2col map's corners and tap
//   offsets in [-128, 127], 16-byte aligned x and w; other shapes run
//   conv2d_nhwc v06's kernel (the registration). Channels past C and output
//   channels past K are zeros in the copies; pixels past N·P·Q are computed
//   and not stored.
// Precision: fp32 products and sums, as v06; each output's C·R·S products
//   in another order (taps in turn, 32 channels a step, 4 at a time).
// Changed from v14: fp32 in and out; 32 channels a k-step; FFMA thread
//   tiles from 16-byte shared loads instead of wgmma from descriptors; the
//   3/4-height tiles where they fill the SMs better.
// Changed from matmul v20: the A tile is an im2col copy and the B tile a 3-D
//   box of w; tiles 64, 128 or 256 wide with the thread grid to match.
// Measured: not yet on a GPU (written 2026-12-06). Its yardstick is
//   conv2d_nhwc/00_cudnn (fp32, NHWC), timed in the same run.
// Build: sm_90a only (setmaxnreg, TMA; src/device/CMakeLists.txt).
// Run: build/bin/warpnet bench conv2d_nhwc --kernels 6,16 on an H100/H200; on
//   the emulator: build/bin/warpnet trace conv2d_nhwc/16 --size 2,72,9,11,264,3,3,2,1,2
#include <cstdint>

#include "kernels/conv/14_implicit_gemm_im2col.cu"  // conv_v14 (v13): tiles, im2col copies, maps, the producer
#include "kernels/matmul/20_sgemm_tma.cu"           // sgemm_v20: Operand, ThreadLoads, load4 (v16's ring)

namespace conv_v16 {

constexpr int BK = sgemm_v20::BK;  // 32 fp32 channels a k-step: one 128-byte swizzle row
static_assert(BK * 4 == 128, "a k-step is one 128-byte row of fp32 channels");
constexpr int THREADS = wgmma_v16::THREADS, CONSUMER_THREADS = wgmma_v16::kConsumerThreads;  // 384, 256
// A thread's rows (output pixels): 8, the tile height v14 uses, or 6 for
// tiles three quarters as tall where those fill the SMs better (rows_per_thread).
constexpr int kRows = 8, kShortRows = 6;

// A thread's output channels, and the threads across a tile, at width BN.
constexpr int thread_cols(int bn) { return bn == 256 ? 16 : 8; }
constexpr int threads_across(int bn) { return bn / thread_cols(bn); }
// The tile's height: the threads down it times a thread's rows.
constexpr int tile_height(int bn, int tm) { return CONSUMER_THREADS / threads_across(bn) * tm; }
static_assert(tile_height(64, kRows) == conv_v14::pixel_tile(64) &&
                  tile_height(128, kRows) == conv_v14::pixel_tile(128) &&
                  tile_height(256, kRows) == conv_v14::pixel_tile(256),
              "8 rows a thread make v14's tiles");

// The tile and its thread grid at channel tile BN, TM rows a thread (header).
template <int BN, int TM>
struct Config {
  static constexpr int TN = thread_cols(BN), TX = threads_across(BN), TY = CONSUMER_THREADS / TX;
  static constexpr int TILE_M = tile_height(BN, TM);
  static_assert(TY * TM == TILE_M && TX * TN == BN, "the thread tiles cover the tile");
  static_assert(TX % 8 == 0 && TY % 8 == 0, "a thread's rows share row % 8 (ThreadLoads)");
  using TileA = sgemm_v20::Operand<false, TILE_M>;  // K-major: TILE_M pixels of 32 channels
  using TileB = sgemm_v20::Operand<false, BN>;      // K-major: BN output channels of 32 channels
  using LoadsA = sgemm_v20::ThreadLoads<TileA, TY>;
  using LoadsB = sgemm_v20::ThreadLoads<TileB, TX>;
  static constexpr uint32_t STAGE = TileA::BYTES + TileB::BYTES;
  static constexpr size_t kSharedBytes = wgmma_v16::ring_bytes(STAGE);
  static_assert(kSharedBytes <= 227 * 1024, "v16's 4 stages fit the opt-in shared memory");
  static_assert(TileA::BYTES % 1024 == 0 && STAGE % 1024 == 0, "every tile starts on the swizzle's 1024-byte pattern");
  // 96 or 128 accumulators do not fit beside the rest in the 168 registers
  // a 384-thread block gets: the warpgroups move registers as v20's do.
  static constexpr bool kReallocate = TM * TN > 64;

  // Every 16-byte load of every thread where the swizzle has its elements:
  // 4 channels of row ty + TY·i of A, of row tx + TX·j of B.
  static constexpr bool loads_match() {
    return sgemm_v20::thread_loads_match_swizzle<TileA, TM, 4, TY>([](int t, int i) { return t + TY * i; }) &&
           sgemm_v20::thread_loads_match_swizzle<TileB, TN, 4, TX>([](int t, int j) { return t + TX * j; });
  }
};
static_assert(Config<64, kRows>::loads_match() && Config<128, kRows>::loads_match() &&
                  Config<256, kRows>::loads_match() && Config<64, kShortRows>::loads_match() &&
                  Config<128, kShortRows>::loads_match() && Config<256, kShortRows>::loads_match(),
              "the consumers' loads read the elements TMA's swizzle put there");

// The persistent grid's busiest SM runs ceil(tiles / SMs) tiles, each
// TILE_M pixels by BN channels: the time of the launch goes with that many
// pixel rows. The shorter tiles are taken where that number is smaller; on
// a tie, the taller ones, whose loads serve more FFMAs. At issue 5's 14x14
// layer (N = 64, K = 256) on an H200's 132 SMs: 131 tiles of 96 x 256, one
// round of 96 rows, where 128 x 256 make 98 tiles, one round of 128 rows
// with 34 SMs idle. At its 28x28 and 56x56 layers both come to the same
// rows (3 rounds of 128 or 4 of 96; 6 of 256 or 8 of 192): the tall ones.
// Arithmetic, not a measurement (the header).
inline int rows_per_thread(const ConvShape& g, int sms) {
  const int bn = conv_v13::channel_tile(g.K);
  const auto busiest_rows = [&](int tm) {
    const int tile_m = tile_height(bn, tm);
    return int64_t(::warpnet::ceil_div(conv_v14::tiles_of(g, tile_m, bn).count(), sms)) * tile_m;
  };
  return busiest_rows(kShortRows) < busiest_rows(kRows) ? kShortRows : kRows;
}

// The tiles of the kernel with TM rows a thread.
inline conv_v14::Tiles tiles_of(const ConvShape& g, int tm) {
  const int bn = conv_v13::channel_tile(g.K);
  return conv_v14::tiles_of(g, tile_height(bn, tm), bn);
}

}  // namespace conv_v16

// map_x: x (N,H,W,C) fp32 as an im2col map {C, W, H, N}, 32 channels x
// TILE_M pixels a copy (conv_v14::make_maps); map_w: w (K,R,S,C) fp32 as
// {C, R·S, K}, box {32, 1, BN}; y: (N,P,Q,K) fp32. BN = conv_v13::channel_tile(K);
// TM rows a thread (conv_v16::rows_per_thread), tl = conv_v16::tiles_of(g, TM).
// Launch: block (384) = producer warpgroup + 2 consumer warpgroups; grid
// (blocks), any number (persistent: conv_v14::persistent_blocks(tl)); dynamic
// shared conv_v16::Config<BN, TM>::kSharedBytes. sm_90a only.
template <int BN, int TM>
__global__ void __launch_bounds__(conv_v16::THREADS, 1)
    conv2d_implicit_gemm_fp32_tma(ConvShape g, conv_v14::Tiles tl, const __grid_constant__ CUtensorMap map_x,
                                  const __grid_constant__ CUtensorMap map_w, float* __restrict__ y) {
#if WARPNET_HOPPER_PTX
  using namespace warpnet::ptx;
  using namespace conv_v16;
  using Cfg = Config<BN, TM>;
  using wgmma_v16::STAGES;
  const wgmma_v16::Ring ring = wgmma_v16::make_ring(Cfg::STAGE);
  const int tiles = tl.count(), channel_blocks = ::warpnet::ceil_div(g.C, BK), taps = g.R * g.S;

  if (threadIdx.x < 128) {  // producer warpgroup: one thread keeps the ring full
    if constexpr (Cfg::kReallocate) setmaxnreg_dec<wgmma_v16::PRODUCER_REGISTERS>();  // the whole warpgroup first
    if (threadIdx.x != 0) return;
    conv_v13::produce<Cfg::STAGE, BK>(ring, blockIdx.x, tiles, gridDim.x, taps, channel_blocks,
                                      [&](unsigned char* a, uint64_t* bar, int tile, int tap, int c0) {
      conv_v14::load_pixels(a, &map_x, g, (tile / tl.tiles_k) * Cfg::TILE_M, tap, c0, bar);
      tma_load_3d(a + Cfg::TileA::BYTES, &map_w, c0, tap, (tile % tl.tiles_k) * BN, bar);
    });
    return;
  }
  // Consumer: a TM x TN thread tile of every tile of the block's walk.
  if constexpr (Cfg::kReallocate) setmaxnreg_inc<wgmma_v16::CONSUMER_REGISTERS>();
  const int t = int(threadIdx.x) - 128, ty = t / Cfg::TX, tx = t % Cfg::TX;
  const int steps = taps * channel_blocks;
  int it = 0;  // the block's k-steps across tiles, counted as the producer counts them
  for (int tile = int(blockIdx.x); tile < tiles; tile += int(gridDim.x)) {
    float acc[TM][Cfg::TN] = {};  // acc[i][j]: pixel row ty + TY·i, output channel tx + TX·j of the tile
    for (int step = 0; step < steps; ++step, ++it) {
      const int s = it % STAGES;
      mbarrier_wait(&ring.full[s], (it / STAGES) & 1);  // TMA's bytes of this round have landed
      const unsigned char* a_tile = ring.base + s * Cfg::STAGE + Cfg::LoadsA::thread_bytes(ty);
      const unsigned char* b_tile = ring.base + s * Cfg::STAGE + Cfg::TileA::BYTES + Cfg::LoadsB::thread_bytes(tx);
#pragma unroll 2
      for (int kq = 0; kq < BK; kq += 4) {
        float a[TM][4];  // a[i][c]: channel kq + c of the thread's pixel row i
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float4 v = sgemm_v20::load4<typename Cfg::TileA, Cfg::TY>(a_tile, ty, i, kq);
          a[i][0] = v.x, a[i][1] = v.y, a[i][2] = v.z, a[i][3] = v.w;
        }
#pragma unroll
        for (int j = 0; j < Cfg::TN; ++j) {  // 4 channels of one output channel's filter a load
          const float4 v = sgemm_v20::load4<typename Cfg::TileB, Cfg::TX>(b_tile, tx, j, kq);
          const float b[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int c = 0; c < 4; ++c)
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i][j] = fmaf(a[i][c], b[c], acc[i][j]);
        }
      }
      mbarrier_arrive(&ring.empty[s]);  // this thread's reads of the stage are done
    }
    // A pixel's K channels are contiguous in y: a warp's TX lanes of one row
    // store TX consecutive floats.
    const int first = (tile / tl.tiles_k) * Cfg::TILE_M, k0 = (tile % tl.tiles_k) * BN;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int pixel = first + ty + Cfg::TY * i;
      if (pixel >= tl.pixels) continue;
#pragma unroll
      for (int j = 0; j < Cfg::TN; ++j) {
        const int k = k0 + tx + Cfg::TX * j;
        if (k < g.K) y[size_t(pixel) * g.K + k] = acc[i][j];
      }
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without setmaxnreg and TMA (sm_80/89/90, plain sm_90): never a silent wrong answer
#endif
}

namespace conv_v16 {

// Makes both maps and launches `blocks` blocks of the BN-wide kernel
// (conv_v13::channel_tile(K)) with TM rows a thread; false (nothing
// launched) when the driver refuses a map (conv_v14::describable(g, x, w, 4)
// shapes only: the rest is the caller's to route).
template <int BN, int TM>
bool launch(int blocks, const ConvShape& g, const float* x, const float* w, float* y) {
  using Cfg = Config<BN, TM>;
  CUtensorMap map_x, map_w;
  if (!conv_v14::make_maps(&map_x, &map_w, g, x, w, Cfg::TILE_M, BN)) return false;
  warpnet::launch_kernel_opted_in(conv2d_implicit_gemm_fp32_tma<BN, TM>, dim3(blocks), dim3(THREADS),
                                  Cfg::kSharedBytes, g, tiles_of(g, TM), map_x, map_w, y);
  return true;
}

// f.template operator()<BN, TM>() for the kernel of g's K with tm rows a thread.
template <class F>
decltype(auto) with_tile(const ConvShape& g, int tm, F&& f) {
  const int bn = conv_v13::channel_tile(g.K);
  if (tm == kShortRows)
    return bn == 64    ? f.template operator()<64, kShortRows>()
           : bn == 128 ? f.template operator()<128, kShortRows>()
                       : f.template operator()<256, kShortRows>();
  return bn == 64 ? f.template operator()<64, kRows>()
         : bn == 128 ? f.template operator()<128, kRows>()
                     : f.template operator()<256, kRows>();
}

// The dynamic shared memory of the kernel of g's K with tm rows a thread.
inline size_t shared_bytes(const ConvShape& g, int tm) {
  return with_tile(g, tm, []<int BN, int TM>() { return Config<BN, TM>::kSharedBytes; });
}

}  // namespace conv_v16
