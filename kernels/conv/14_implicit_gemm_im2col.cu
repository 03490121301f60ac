// Conv v14 — Hopper (sm_90a): v13's implicit GEMM with its A tiles cut by
// TMA's im2col mode: runs of consecutive output pixels (128, or 256 where
// K <= 64), across rows and images. bf16 x and w, fp32 accumulation, bf16 y (conv2d_nhwc: x (N,H,W,C),
// w (K,R,S,C), y (N,P,Q,K)).
//
// Idea: v13's A tile is a rectangle of one image, TP rows x TQ columns with
//   TQ a power of two, so wherever Q does not divide 128 part of every wgmma
//   computes pixels that do not exist: 12.5% at 56x56 (2 rows of 64 for 56)
//   and 28x28, 23% at 14x14. The GEMM's M is N·P·Q output pixels in a row;
//   the tile that wastes nothing is 128 of them in that order, however the
//   rows and images fall. TMA has a mode for exactly that:
//   - The map (cuTensorMapEncodeIm2col) describes x as {C, W, H, N} plus a
//     bounding box of input positions, [−pad, (Q−1)·stride + 1 − pad) across
//     and the same down, stepped by the stride (the map's element strides):
//     one position for each output pixel, where its filter window starts.
//   - One copy takes TILE_M pixels (pixelsPerColumn) of 64 channels
//     (channelsPerPixel), walking the box from the tile's first pixel: along
//     a row, back to the box's left edge at its end one row down, on into the
//     next image after the last row. Each pixel is read at its position plus
//     the copy's offsets: the tap (s·dil, r·dil). Outside the image, zeros:
//     the padding. Past the last image, zeros too: the last tile's rows that
//     are not pixels, never stored.
//   - The pixels land as v13's box did: a row of 128 bytes each, swizzled,
//     the K-major tile wgmma reads. B is v13's box of w.
//   - TILE_M is 256 where BN = 64 (K <= 64), else 128. Each k-step copies
//     TILE_M + BN rows of 128 bytes for 2·TILE_M·BN·64 FLOPs: a 128 x 64
//     tile makes 43 FLOPs a copied byte, which at the 8.9 TB/s TMA fed
//     matmul v16 with on an H200 caps the 56x56 layer near 380 TFLOP/s
//     (lesson 05, section 3); 256 x 64 makes 51 (about 450). Each consumer
//     warpgroup then holds two 64-row subtiles, 64 accumulators a thread,
//     as at 128 x 128.
//   Everything else is v13's: the producer thread and 4-stage mbarrier ring
//   (conv_v13::produce), the consumer warpgroups (conv_v13::accumulate_tile),
//   the tile widths BN = 64/128/256 (conv_v13::channel_tile), the persistent
//   grid, the epilogue's bf16 pairs.
// Tiles: tile t is output-channel tile t % tiles_k of pixel tile t / tiles_k
//   (pixels TILE_M·(t / tiles_k) onward), so the CTAs running at once read
//   the same pixels through L2. At issue 5's layers (N = 64) that is 784
//   tiles of 256 x 64, 392 and 98 of 128 x 128 and 128 x 256, where v13 has
//   1792, 448 and 128 of 128 pixels: on 132 SMs 6 rounds of the persistent
//   grid of twice v13's work each instead of 14 at 56x56, 3 instead of 4 at
//   28x28, and one either way at 14x14 — with 34 SMs idle.
// Three consumer warpgroups: wgmma's rows come 64 to a warpgroup, so a
//   tile cannot be 3/4 as tall as conv v16's are; it can have a third
//   consumer. 512-thread blocks (128 registers a thread: 64 accumulators,
//   so BN at most 128) take tiles of 192 pixels, one 64-row subtile a
//   consumer, and the ring's empty barriers count their 384 arrivals.
//   consumers_for takes them where the persistent grid's busiest SM then
//   computes fewer outputs: at 14x14, 66 x 2 = 132 tiles of 192 x 128 on
//   132 SMs, one round of 24,576 outputs an SM instead of 32,768; at 28x28
//   and 56x56 the two tie (2 rounds of 192 x 128 against 3 of 128 x 128;
//   8 of 192 x 64 against 6 of 256 x 64) and two consumers stay.
//   Arithmetic, not a measurement: on a GPU the registration's tune times
//   both tiles at each size and keeps the faster
//   (src/device/kernels/conv/tile_tune.hpp); the rule decides without one
//   (the emulator). The record names the tile that ran (Kernel::candidate).
//   The launch's block (384 or 512) says which kernel runs, so a test can
//   ask for either.
// Edges: as v13 (C a multiple of 8, stride at most 8, 16-byte aligned x and
//   w), and the bounding box's corners and the taps' offsets within the
//   range a 4-D im2col map holds ([−128, 127]); other shapes run v13's
//   direct kernel.
// Precision: v13's: x, w and y rounded to bf16, products exact, sums fp32.
// Changed from v13: one im2col copy instead of a 4-D box per A tile; tiles
//   of consecutive output pixels, so no rows are wasted, 256 of them at
//   K <= 64, or 192 for three consumer warpgroups where those fill the SMs
//   better; the epilogue indexes y by pixel number alone.
// Not yet: a TMA store of y. (2-CTA clusters sharing w by multicast are v15.)
// Measured: not yet on a GPU (written 2026-12-05, after the last H200 run).
//   Emulator: matches the CPU at every conv2d_nhwc test size (the TMA path
//   at eight of them). The im2col walk the emulator models is the one NVIDIA's
//   hardware shows in Triton's tutorial of the mode (tests/simt/test_hopper.cpp).
//   ptxas (nvcc 13, sm_90a; bench/results/ptxas-sm90a-2026-12-07.txt): 99, 90
//   and 168 registers at BN = 64 (256-pixel tiles), 128 and 256; 58 and 90
//   with three consumers at 64 and 128; no spills.
// Build: sm_90a only, as v13 (src/device/CMakeLists.txt).
// Run: build/bin/warpnet bench conv2d_nhwc --kernels 13,14 on an H100/H200
//   (cuDNN fp32 and bf16 timed in the same run); on the emulator:
//   build/bin/warpnet trace conv2d_nhwc/14 --size 2,72,9,11,264,3,3,2,1,2
// Once a translation unit: conv v15 and v16 both include this file, and a
// test may include both of them.
#pragma once
#include <type_traits>

#include "kernels/conv/13_implicit_gemm_wgmma.cu"  // conv_v13: produce, accumulate_tile, store_pair, the direct kernel

namespace conv_v14 {

using conv_v13::BK;

// Output pixels a tile of two consumer warpgroups: 256 at BN = 64, else
// 128. At K = 64 a 128 x 64 tile computes 43 FLOPs per byte TMA copies into
// shared memory (lesson 05, section 3); 256 x 64 makes that 51, and holds
// no more accumulators a consumer thread (64) than a 128 x 128 tile does.
constexpr int pixel_tile(int bn) { return bn == 64 ? 256 : 128; }

// The other tile: three consumer warpgroups of one 64-row subtile each,
// 192 pixels by at most 128 output channels (a 512-thread block has 128
// registers a thread: room for 64 accumulators, not 128). consumers_for
// says where it runs.
constexpr int kThreeConsumerRows = 192;
constexpr int tile_rows(int bn, int consumers) { return consumers == 3 ? kThreeConsumerRows : pixel_tile(bn); }
inline int channel_tile(int K, int consumers) {
  const int bn = conv_v13::channel_tile(K);
  return consumers == 3 && bn > 128 ? 128 : bn;
}

// The largest corner or offset a 4-D im2col map holds: [-128, 127] (the
// driver's range for the corners; the taps' offsets are kept inside it too).
constexpr int CORNER_LIMIT = 128;

// The tiles: tile_m consecutive output pixels x bn output channels.
struct Tiles {
  int pixels;   // N·P·Q, the GEMM's M
  int tiles_m;  // ceil(pixels / tile_m)
  int tiles_k;  // ceil(K / bn)
  __host__ __device__ int count() const { return tiles_m * tiles_k; }
};
inline Tiles tiles_of(const ConvShape& g, int tile_m, int bn) {
  const int pixels = g.N * g.P * g.Q;
  return Tiles{pixels, ::warpnet::ceil_div(pixels, tile_m), ::warpnet::ceil_div(g.K, bn)};
}
// The tiles of `consumers` consumer warpgroups (2 or 3).
inline Tiles tiles_with(const ConvShape& g, int consumers) {
  const int bn = channel_tile(g.K, consumers);
  return tiles_of(g, tile_rows(bn, consumers), bn);
}
inline Tiles tiles_of(const ConvShape& g) { return tiles_with(g, 2); }

template <int BN, int CONSUMERS = 2>
using Config = conv_v13::Config<BN, tile_rows(BN, CONSUMERS), CONSUMERS>;

// Two consumer warpgroups or three: the persistent grid takes as long as
// its busiest SM, which runs ceil(tiles / SMs) tiles of TILE_M x BN
// outputs; three are taken where that is fewer outputs, two on a tie (their
// larger tiles copy fewer bytes a FLOP). At issue 5's 14x14 layer (N = 64,
// K = 256) on an H200's 132 SMs: 132 tiles of 192 x 128, one round of
// 24,576 outputs, where 128 x 256 make 98 tiles, one round of 32,768 with
// 34 SMs idle. At 28x28 (2 rounds of 192 x 128 against 3 of 128 x 128) and
// 56x56 (8 of 192 x 64 against 6 of 256 x 64) they tie. Arithmetic, not a
// measurement.
inline int consumers_for(const ConvShape& g, int sms) {
  const auto busiest_outputs = [&](int consumers) {
    const int bn = channel_tile(g.K, consumers);
    return int64_t(::warpnet::ceil_div(tiles_with(g, consumers).count(), sms)) * tile_rows(bn, consumers) * bn;
  };
  return busiest_outputs(3) < busiest_outputs(2) ? 3 : 2;
}

// The bounding box's far corners, past the image's far edge (negative: inside
// it): the last output pixel's window starts at (P−1)·stride − pad, so the
// walk's positions end one past it.
inline int upper_corner(int out, int in, const ConvShape& g) { return (out - 1) * g.stride + 1 - in - g.pad; }

#if WARPNET_HOPPER_PTX
// A k-step's A tile: the pixels from output pixel `first` on, channels c0..
// of filter tap `tap`, as one im2col copy whose walk starts where the first
// pixel's window does, counted on bar.
__device__ __forceinline__ void load_pixels(unsigned char* a, const CUtensorMap* map_x, const ConvShape& g, int first,
                                            int tap, int c0, uint64_t* bar) {
  const int q = first % g.Q, p = (first / g.Q) % g.P, n = first / (g.Q * g.P);
  const auto off_h = uint16_t((tap / g.S) * g.dil), off_w = uint16_t((tap % g.S) * g.dil);
  warpnet::ptx::tma_load_im2col_4d(a, map_x, c0, q * g.stride - g.pad, p * g.stride - g.pad, n, off_w, off_h, bar);
}
#endif

// A consumer warpgroup's rows of a finished tile into y (pixels, K), bf16:
// row m0 + 64j + r of acc[j] is output pixel first + m0 + 64j + r, column c
// output channel k0 + c; rows past the last pixel are not stored.
template <class Cfg, int BN>
__device__ __forceinline__ void store_pixels(const float (&acc)[Cfg::SUBTILES][BN / 2], __nv_bfloat16* y,
                                             const ConvShape& g, int pixels, int first, int k0, int m0, int t) {
#pragma unroll
  for (int j = 0; j < Cfg::SUBTILES; ++j)
#pragma unroll
    for (int i = 0; i < BN / 2; i += 2) {
      const int pixel = first + m0 + j * conv_v13::WG_M + wgmma_v13::acc_row(t, i), k = k0 + wgmma_v13::acc_col(t, i);
      if (pixel >= pixels || k >= g.K) continue;
      conv_v13::store_pair(y + size_t(pixel) * g.K + k, acc[j][i], acc[j][i + 1], k, g.K);
    }
}

}  // namespace conv_v14

// map_x: x (N,H,W,C) bf16 as an im2col map {C, W, H, N}, 64 channels x
// TILE_M = tile_rows(BN, CONSUMERS) pixels a copy, element strides {1,
// stride, stride, 1}, corners (−pad, −pad) and (upper_corner(Q, W),
// upper_corner(P, H)), innermost first; map_w: v13's, BN output channels a
// box (both made by conv_v14::launch); y: (N,P,Q,K) bf16.
// BN = conv_v14::channel_tile(K, CONSUMERS); tl = conv_v14::tiles_with(g, CONSUMERS).
// Launch: block ((CONSUMERS + 1)·128) = producer + 2 or 3 consumer
// warpgroups; grid (blocks), any number (persistent: min(tiles, SMs));
// dynamic shared conv_v14::Config<BN, CONSUMERS>::kSharedBytes. sm_90a only.
template <int BN, int CONSUMERS>
__global__ void __launch_bounds__((CONSUMERS + 1) * 128, 1)
    conv2d_implicit_gemm_im2col(ConvShape g, conv_v14::Tiles tl, const __grid_constant__ CUtensorMap map_x,
                                const __grid_constant__ CUtensorMap map_w, __nv_bfloat16* __restrict__ y) {
#if WARPNET_HOPPER_PTX
  using namespace conv_v13;
  using Cfg = conv_v14::Config<BN, CONSUMERS>;
  constexpr int TILE_M = conv_v14::tile_rows(BN, CONSUMERS);
  const wgmma_v16::Ring ring = wgmma_v16::make_ring(Cfg::STAGE, Cfg::CONSUMER_THREADS);
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int tiles = tl.count(), channel_blocks = ::warpnet::ceil_div(g.C, BK), taps = g.R * g.S;

  if (wg == 0) {  // producer: one thread keeps the ring full
    // The whole warpgroup gives registers back first.
    if constexpr (Cfg::kReallocate) warpnet::ptx::setmaxnreg_dec<wgmma_v16::PRODUCER_REGISTERS>();
    if (t != 0) return;
    produce<Cfg::STAGE>(ring, blockIdx.x, tiles, gridDim.x, taps, channel_blocks,
                        [&](unsigned char* a, uint64_t* bar, int tile, int tap, int c0) {
      conv_v14::load_pixels(a, &map_x, g, (tile / tl.tiles_k) * TILE_M, tap, c0, bar);
      warpnet::ptx::tma_load_3d(a + Cfg::TileA::BYTES, &map_w, c0, tap, (tile % tl.tiles_k) * BN, bar);
    });
    return;
  }
  // Consumer warpgroup: tile rows (pixels) m0..m0 + TILE_M/CONSUMERS - 1, 64 to a subtile.
  if constexpr (Cfg::kReallocate) warpnet::ptx::setmaxnreg_inc<wgmma_v16::CONSUMER_REGISTERS>();
  const int m0 = (wg - 1) * (TILE_M / CONSUMERS);
  float acc[Cfg::SUBTILES][Cfg::ACCUMULATORS];
  int it = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    accumulate_tile<Cfg, BN>(ring, it, taps * channel_blocks, m0, acc);
    conv_v14::store_pixels<Cfg, BN>(acc, y, g, tl.pixels, (tile / tl.tiles_k) * TILE_M, (tile % tl.tiles_k) * BN, m0, t);
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA (sm_80/89/90, plain sm_90): never a silent wrong answer
#endif
}

namespace conv_v14 {

// v13's conditions, and the corners and offsets inside a 4-D im2col map's
// range; `element_bytes` as v13's (4 for conv v16's fp32).
inline bool describable(const ConvShape& g, const void* x, const void* w, int element_bytes = 2) {
  const int reach = (g.R > g.S ? g.R - 1 : g.S - 1) * g.dil;  // the largest tap offset
  return conv_v13::describable(g, x, w, element_bytes) && g.pad < CORNER_LIMIT && reach < CORNER_LIMIT &&
         upper_corner(g.Q, g.W, g) >= -CORNER_LIMIT && upper_corner(g.P, g.H, g) >= -CORNER_LIMIT &&
         upper_corner(g.Q, g.W, g) < CORNER_LIMIT && upper_corner(g.P, g.H, g) < CORNER_LIMIT;
}

// The driver's cuTensorMapEncodeIm2col (or the emulator's), or null.
inline PFN_cuTensorMapEncodeIm2col_v12000 encode_im2col() {
  static const auto fn = warpnet::driver_entry_point<PFN_cuTensorMapEncodeIm2col_v12000>("cuTensorMapEncodeIm2col");
  return fn;
}

// The maps: x as an im2col map of `pixels` pixels a copy, w (K,R,S,C) as
// {C, R·S, K} in boxes of `w_rows` output channels, each copy one 128-byte
// swizzle row of channels (64 bf16 here; 32 floats for conv v16's fp32);
// false when the driver refuses one (describable() shapes only).
template <class T>
inline bool make_maps(CUtensorMap* map_x, CUtensorMap* map_w, const ConvShape& g, const T* x, const T* w, int pixels,
                      int w_rows) {
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, float>, "bf16 or fp32 tensors");
  constexpr CUtensorMapDataType type =
      std::is_same_v<T, float> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  constexpr cuuint32_t channels = 128 / sizeof(T);  // a k-step's channels
  const PFN_cuTensorMapEncodeIm2col_v12000 encode_x = encode_im2col();
  const PFN_cuTensorMapEncodeTiled_v12000 encode_w = wgmma_v13::encode_tiled();
  if (!encode_x || !encode_w) return false;
  const cuuint64_t e = sizeof(T), C = cuuint64_t(g.C);
  const cuuint64_t x_dims[4] = {C, cuuint64_t(g.W), cuuint64_t(g.H), cuuint64_t(g.N)};
  const cuuint64_t x_strides[3] = {C * e, C * e * g.W, C * e * g.W * g.H};
  const int lower[2] = {-g.pad, -g.pad}, upper[2] = {upper_corner(g.Q, g.W, g), upper_corner(g.P, g.H, g)};
  const cuuint32_t x_steps[4] = {1, cuuint32_t(g.stride), cuuint32_t(g.stride), 1};
  const cuuint64_t w_dims[3] = {C, cuuint64_t(g.R) * g.S, cuuint64_t(g.K)};
  const cuuint64_t w_strides[2] = {C * e, C * e * g.R * g.S};
  const cuuint32_t w_box[3] = {channels, 1, cuuint32_t(w_rows)}, w_steps[3] = {1, 1, 1};
  return encode_x(map_x, type, 4, const_cast<T*>(x), x_dims, x_strides, lower, upper, channels, cuuint32_t(pixels),
                  x_steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS &&
         encode_w(map_w, type, 3, const_cast<T*>(w), w_dims, w_strides, w_box, w_steps,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Makes both maps and launches `blocks` blocks of the kernel with
// CONSUMERS consumer warpgroups, BN = channel_tile(K, CONSUMERS) wide; false
// (nothing launched) when the driver refuses a map (describable() shapes
// only: the rest is the caller's to route).
template <int BN, int CONSUMERS>
bool launch(int blocks, const ConvShape& g, const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y) {
  using Cfg = Config<BN, CONSUMERS>;
  CUtensorMap map_x, map_w;
  if (!make_maps(&map_x, &map_w, g, x, w, tile_rows(BN, CONSUMERS), BN)) return false;
  warpnet::launch_kernel_opted_in(conv2d_implicit_gemm_im2col<BN, CONSUMERS>, dim3(blocks), dim3(Cfg::THREADS),
                                  Cfg::kSharedBytes, g, tiles_with(g, CONSUMERS), map_x, map_w, y);
  return true;
}

// f.template operator()<BN, CONSUMERS>() for g's K and `consumers` (2 or 3).
template <class F>
decltype(auto) with_tile(const ConvShape& g, int consumers, F&& f) {
  const int bn = channel_tile(g.K, consumers);
  if (consumers == 3) return bn == 64 ? f.template operator()<64, 3>() : f.template operator()<128, 3>();
  return bn == 64    ? f.template operator()<64, 2>()
         : bn == 128 ? f.template operator()<128, 2>()
                     : f.template operator()<256, 2>();
}

// The dynamic shared memory of the kernel of g's K with `consumers` consumer warpgroups.
inline size_t shared_bytes(const ConvShape& g, int consumers = 2) {
  return with_tile(g, consumers, []<int BN, int CONSUMERS>() { return Config<BN, CONSUMERS>::kSharedBytes; });
}

// The persistent grid: a block per SM, fewer when there are fewer tiles.
inline int persistent_blocks(const Tiles& tl) {
  const int tiles = tl.count(), sms = wgmma_v16::sm_count();
  return tiles < sms ? (tiles > 0 ? tiles : 1) : sms;
}
inline int persistent_blocks(const ConvShape& g) { return persistent_blocks(tiles_of(g)); }

}  // namespace conv_v14
