// Conv v13 — Hopper (sm_90a): the implicit GEMM on wgmma, its A tiles cut
// out of the NHWC image by 4-D TMA boxes. bf16 x and w, fp32 accumulation,
// bf16 y (conv2d_nhwc: x (N,H,W,C), w (K,R,S,C), y (N,P,Q,K)).
//
// Idea: v05 put the implicit GEMM on tensor cores with mma.sync, but its
//   threads still gathered every tap of x into shared memory one element at
//   a time, and ran at 21 TFLOP/s on an H200 (2026-12-04), slower than the
//   fp32 v09. Here no thread gathers anything. The copy engine does:
//   - A tile = an 8x16 (or 2x64, 4x32, ...) rectangle of output pixels of
//     one image times 64 input channels, for one filter tap (r, s). In NHWC
//     that is a 4-D box of x: {64 channels, TQ columns, TP rows, 1 image},
//     starting at input pixel (p0·stride − pad + r·dil, q0·stride − pad +
//     s·dil). TMA zero-fills whatever lies outside the image, which is
//     exactly the padding, also at negative coordinates; with stride > 1
//     the map's element strides step over the skipped pixels. The box lands
//     as 128 rows (pixels) of 128 bytes (channels), 128-byte swizzled: the
//     K-major tile wgmma reads, as matmul v13's A.
//   - B tile = BN output channels x the same 64 input channels of tap
//     (r, s): w (K,R,S,C) seen as a 3-D tensor {C, R·S, K}, box {64, 1, BN},
//     again K-major rows of 128 bytes. BN is 64, 128 or 256, the smallest
//     that holds K (else 256): a 128-wide tile would waste half of every
//     wgmma at K = 64, and at K = 256 a 256-wide one reads each A tile once.
//   A k-step is one (tap, 64-channel block); C·R·S = R·S·ceil(C/64) steps.
//   Channels past C are zeros in both boxes, so no product crosses a tap.
//   The rest is matmul v16's machine: a producer thread, a 4-stage mbarrier
//   ring (wgmma_v16::Ring), two consumer warpgroups of wgmma m64nBNk16
//   (BN / 2 fp32 accumulators a thread; at BN = 256, 128 of them, so the
//   warpgroups move registers with setmaxnreg as v16 does), a persistent
//   grid whose ring runs on from tile to tile.
// Tiles: TQ = the power of two at or above Q (at most 128), TP = 128 / TQ,
//   so every box fills the 128 rows wgmma reads (rows past P or Q are
//   computed and not stored): 56x56 images are cut in 2x64 tiles, 28 to an
//   image; 28x28 in 4x32, 7; 14x14 in 8x16, 2. Tile t of the walk is output-channel tile
//   t % tiles_k of pixel tile t / tiles_k, so the CTAs running at once read
//   the same image rows through L2.
// Epilogue: from registers, two adjacent output channels per 4-byte store
//   where K is even; a pixel's K channels are contiguous in y, so each store
//   instruction of a warp writes 16 contiguous bytes at each of 8 pixels.
// Edges: TMA needs every global stride a multiple of 16 bytes (C a multiple
//   of 8) and element strides of at most 8; other shapes, and x or w not
//   16-byte aligned, run conv2d_nhwc_bf16_direct below (one thread per
//   output), which the registration's shape text names.
// Precision: x and w rounded to bf16 (relative error 2^-8 each), products
//   exact, sums fp32, y rounded to bf16 (2^-8 more): cuDNN's bf16
//   configuration, which writes y in bf16 too, is its version 0.
// Changed from v05: NHWC bf16 in, bf16 out; TMA boxes instead of per-element
//   gathers; an mbarrier ring and a producer warpgroup; wgmma m64n{64,128,256}k16
//   from descriptors instead of ldmatrix + mma.sync; a persistent grid.
// Not yet: a TMA store of y. (TMA's im2col mode, one copy of pixels running
//   on across rows and images so that no rows are wasted, is v14; 2-CTA
//   clusters sharing w by multicast are v15.)
// Measured: not yet on a GPU (written 2026-12-05, after the last H200 run).
//   Emulator: matches the CPU at every conv2d_nhwc test size, nine of them
//   on the TMA path; ptxas (nvcc 13, sm_90a): 61, 93 and 168 registers at
//   BN = 64, 128, 256, no spills. Its yardstick on a GPU is
//   conv2d_nhwc/00_cudnn_bf16.
// Build: sm_90a only, as matmul v13 (src/device/CMakeLists.txt).
// Run: build/bin/warpnet bench conv2d_nhwc --kernels 6,13 on an H100/H200
//   (cuDNN fp32 and bf16, version 0, timed in the same run); on the
//   emulator: build/bin/warpnet trace conv2d_nhwc/13 --size 2,72,9,11,264,3,3,2,1,2
#include <cstdint>

#include "kernels/common/hopper.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/matmul/16_wgmma_persistent.cu"  // wgmma_v16: Ring, make_ring, sm_count; wgmma_v13's pieces

namespace conv_v13 {

constexpr int BM = 128, BK = 64;  // output pixels (v13's tiles) and input channels of a k-step
constexpr int THREADS = wgmma_v16::THREADS;  // producer + 2 consumer warpgroups
constexpr int WG_M = 64, WGMMA_K = 16;
constexpr int MAX_ELEMENT_STRIDE = 8, MAX_BOX = 256;  // TMA's limits
static_assert(BK * 2 == 128, "a k-step is one 128-byte row of bf16 channels");

// The output channels of a tile, BN: 64, 128 or 256 (wgmma's n), the
// smallest that holds K, else 256. A K = 64 layer would waste half of
// every wgmma on a 128-wide tile; K = 256 reads each A tile once, not twice.
inline int channel_tile(int K) { return K <= 64 ? 64 : K <= 128 ? 128 : 256; }

// A tile of TILE_M output pixels (128 in v13; v14 takes 256 at BN = 64,
// and 192 with three consumer warpgroups) by BN output channels: each of
// the CONSUMERS consumer warpgroups holds TILE_M / CONSUMERS rows of it,
// SUBTILES wgmma-high (64-row) pieces.
template <int BN, int TILE_M = BM, int CONSUMERS = 2>
struct Config {
  using TileA = wgmma_v13::Operand<false, TILE_M>;  // K-major TILE_M pixels x 64 channels
  using TileB = wgmma_v13::Operand<false, BN>;      // K-major BN output channels x 64 channels
  static constexpr int SUBTILES = TILE_M / CONSUMERS / WG_M;
  static_assert(SUBTILES * CONSUMERS * WG_M == TILE_M, "whole 64-row subtiles for every consumer");
  static constexpr int THREADS = (CONSUMERS + 1) * 128, CONSUMER_THREADS = CONSUMERS * 128;  // warpgroup 0 produces
  static constexpr uint32_t STAGE = TileA::BYTES + TileB::BYTES;
  static constexpr size_t kSharedBytes = wgmma_v16::ring_bytes(STAGE);
  static constexpr int ACCUMULATORS = BN / 2;  // per consumer thread and subtile: 64 x BN / 128
  // 128 accumulators do not fit beside the rest in the 168 registers a
  // 384-thread block gets: past 64 the warpgroups move registers as matmul
  // v16 does (setmaxnreg, 40 producer, 232 consumers).
  static constexpr bool kReallocate = SUBTILES * ACCUMULATORS > 64;
  // Three consumers make a 512-thread block, 128 registers a thread: room
  // for 64 accumulators, and matmul v16's split is for two consumers.
  static_assert(CONSUMERS == 2 || (CONSUMERS == 3 && !kReallocate),
                "two consumer warpgroups, or three of 64 accumulators");
};

#if WARPNET_HOPPER_PTX
// d (64, BN) += a (64, 16) @ b (16, BN): the wgmma of the tile's width, both tiles K-major.
template <int BN>
__device__ __forceinline__ void wgmma_k16(float (&acc)[BN / 2], uint64_t a, uint64_t b) {
  if constexpr (BN == 64) warpnet::ptx::wgmma_m64n64k16_bf16<0, 0>(acc, a, b);
  else if constexpr (BN == 128) warpnet::ptx::wgmma_m64n128k16_bf16<0, 0>(acc, a, b);
  else warpnet::ptx::wgmma_m64n256k16_bf16<0, 0>(acc, a, b);
}

// The producer thread: fills the ring with the k-steps of this block's tiles
// (first, first + stride, ... below end: blockIdx.x and gridDim.x, or a
// cluster's pairs), in the order the consumers take them. A k-step is one
// filter tap x one block of CHANNELS input channels (64 bf16, or conv v16's
// 32 fp32: a 128-byte row either way); load(stage, bar, tile, tap, c0)
// issues its TMA copies, whose bytes the stage's full barrier is armed for
// (STAGE: the whole stage, zero-filled parts and a peer's multicast included).
template <uint32_t STAGE, int CHANNELS = BK, class Ring, class LoadStep>
__device__ __forceinline__ void produce(const Ring& ring, int first, int end, int stride, int taps,
                                        int channel_blocks, LoadStep load) {
  using namespace warpnet::ptx;
  using wgmma_v16::STAGES;
  int it = 0;  // the block's k-steps, counted across tiles as the consumers count them
  for (int tile = first; tile < end; tile += stride)
    for (int step = 0; step < taps * channel_blocks; ++step, ++it) {
      const int s = it % STAGES;
      if (it >= STAGES) mbarrier_wait(&ring.empty[s], (it / STAGES - 1) & 1);  // round r-1 released it
      mbarrier_arrive_expect_tx(&ring.full[s], STAGE);
      load(ring.base + s * STAGE, &ring.full[s], tile, step / channel_blocks, (step % channel_blocks) * CHANNELS);
    }
}

// How a consumer hands a stage back to the producer: each thread on its own
// CTA's empty barrier (v13, v14; the ring counts 256 arrivals a phase).
struct ReleaseOwn {
  __device__ void operator()(uint64_t* empty) const { warpnet::ptx::mbarrier_arrive(empty); }
};

// A consumer warpgroup's part of one tile: rows m0..m0+64·SUBTILES-1 of
// acc (zeroed here; acc[j] holds rows m0 + 64j..), summed over the tile's
// k_steps stages; `it` counts the block's k-steps across tiles. Each stage
// is handed back with `release` once its wgmmas are retired.
template <class Cfg, int BN, class Ring, class Release = ReleaseOwn>
__device__ __forceinline__ void accumulate_tile(const Ring& ring, int& it, int k_steps, int m0,
                                                float (&acc)[Cfg::SUBTILES][BN / 2], Release release = {}) {
  using namespace warpnet::ptx;
  using wgmma_v13::descriptor;
  using wgmma_v16::STAGES;
  using TileA = typename Cfg::TileA;
  using TileB = typename Cfg::TileB;
#pragma unroll
  for (int j = 0; j < Cfg::SUBTILES; ++j)
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[j][i] = 0.0f;
  for (int step = 0; step < k_steps; ++step, ++it) {
    const int s = it % STAGES;
    mbarrier_wait(&ring.full[s], (it / STAGES) & 1);  // TMA's bytes of this round have landed
    const uint32_t a = shared_address(ring.base + s * Cfg::STAGE), b = a + TileA::BYTES;
    wgmma_fence();  // the accumulators' earlier register writes (the zeros too) come first
#pragma unroll
    for (int kk = 0; kk < BK; kk += WGMMA_K)
#pragma unroll
      for (int j = 0; j < Cfg::SUBTILES; ++j)
        wgmma_k16<BN>(acc[j], descriptor(a + TileA::start(m0 + j * WG_M, kk), TileA::LBO, TileA::SBO),
                      descriptor(b + TileB::start(0, kk), TileB::LBO, TileB::SBO));
    wgmma_commit();
    // Keep this step's group in flight; the previous one is done, so its stage is free.
    wgmma_wait<1>();
    if (step > 0) release(&ring.empty[(it - 1) % STAGES]);
  }
  wgmma_wait<0>();
  release(&ring.empty[(it - 1) % STAGES]);  // k_steps >= 1: R, S >= 1 and C >= 1
}
#endif

// Output channels k and k + 1 of one pixel (two accumulators) at `out`, in
// bf16: one 4-byte store where K is even (k is then even too, so k + 1 < K).
__device__ __forceinline__ void store_pair(__nv_bfloat16* out, float lo, float hi, int k, int K) {
  if (K % 2 == 0) {
    const __nv_bfloat16_raw a = __float2bfloat16_rn(lo), b = __float2bfloat16_rn(hi);
    *reinterpret_cast<uint32_t*>(out) = uint32_t(a.x) | uint32_t(b.x) << 16;  // the lower address first
  } else {
    out[0] = __float2bfloat16_rn(lo);
    if (k + 1 < K) out[1] = __float2bfloat16_rn(hi);
  }
}

// The output-pixel rectangle of a tile: TP rows x TQ columns of one image.
struct PixelTiles {
  int tp, tq;               // TP x TQ = 128
  int tiles_p, tiles_q, tiles_k;
  __host__ __device__ int count(int images) const { return images * tiles_p * tiles_q * tiles_k; }
};

// TQ: the power of two at or above Q, at most 128, and small enough that the
// box spans (TQ·stride, TP·stride) fit TMA's 256. (A stride past TMA's 8
// runs the direct kernel; it is clamped here only so that the grid of the
// registration's shape can still be worked out.)
inline PixelTiles pixel_tiles(const ConvShape& g) {
  const int stride = g.stride < MAX_ELEMENT_STRIDE ? g.stride : MAX_ELEMENT_STRIDE;
  int tq = 1;
  while (tq < g.Q && tq < 128) tq *= 2;
  while (tq * stride > MAX_BOX) tq /= 2;
  while ((128 / tq) * stride > MAX_BOX) tq *= 2;
  const int tp = 128 / tq, bn = channel_tile(g.K);
  return PixelTiles{tp, tq, ::warpnet::ceil_div(g.P, tp), ::warpnet::ceil_div(g.Q, tq), ::warpnet::ceil_div(g.K, bn)};
}

struct TileAt {
  int n, p0, q0, k0;  // the image, the rectangle's first output pixel, the first output channel
};
__host__ __device__ inline TileAt tile_at(int t, const PixelTiles& pt, int bn) {
  const int kt = t % pt.tiles_k, pixels = t / pt.tiles_k;
  const int iq = pixels % pt.tiles_q, ip = (pixels / pt.tiles_q) % pt.tiles_p, n = pixels / (pt.tiles_q * pt.tiles_p);
  return TileAt{n, ip * pt.tp, iq * pt.tq, kt * bn};
}

}  // namespace conv_v13

// map_x: x (N,H,W,C) bf16 as {C, W, H, N}, box {64, TQ·stride, TP·stride, 1},
// element strides {1, stride, stride, 1}; map_w: w (K,R,S,C) bf16 as
// {C, R·S, K}, box {64, 1, BN} (both made by conv_v13::launch);
// y: (N,P,Q,K) bf16. BN = conv_v13::channel_tile(K).
// Launch: block (384) = producer + 2 consumer warpgroups; grid (blocks), any
// number (persistent: min(tiles, SMs)); dynamic shared Config<BN>::kSharedBytes.
// sm_90a only.
template <int BN>
__global__ void __launch_bounds__(conv_v13::THREADS, 1)
    conv2d_implicit_gemm_wgmma(ConvShape g, conv_v13::PixelTiles pt, const __grid_constant__ CUtensorMap map_x,
                               const __grid_constant__ CUtensorMap map_w, __nv_bfloat16* __restrict__ y) {
#if WARPNET_HOPPER_PTX
  using namespace conv_v13;
  using Cfg = Config<BN>;
  const wgmma_v16::Ring ring = wgmma_v16::make_ring(Cfg::STAGE);
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int tiles = pt.count(g.N), channel_blocks = ::warpnet::ceil_div(g.C, BK), taps = g.R * g.S;

  if (wg == 0) {  // producer: one thread keeps the ring full
    // The whole warpgroup gives registers back first.
    if constexpr (Cfg::kReallocate) warpnet::ptx::setmaxnreg_dec<wgmma_v16::PRODUCER_REGISTERS>();
    if (t != 0) return;
    produce<Cfg::STAGE>(ring, blockIdx.x, tiles, gridDim.x, taps, channel_blocks,
                        [&](unsigned char* a, uint64_t* bar, int tile, int tap, int c0) {
      const TileAt at = tile_at(tile, pt, BN);
      const int h0 = at.p0 * g.stride - g.pad + (tap / g.S) * g.dil;  // the box's first input row and column
      const int w0 = at.q0 * g.stride - g.pad + (tap % g.S) * g.dil;
      warpnet::ptx::tma_load_4d(a, &map_x, c0, w0, h0, at.n, bar);
      warpnet::ptx::tma_load_3d(a + Cfg::TileA::BYTES, &map_w, c0, tap, at.k0, bar);
    });
    return;
  }
  // Consumer warpgroup: tile rows (pixels) m0..m0+63.
  if constexpr (Cfg::kReallocate) warpnet::ptx::setmaxnreg_inc<wgmma_v16::CONSUMER_REGISTERS>();
  const int m0 = (wg - 1) * WG_M;
  float acc[Cfg::SUBTILES][Cfg::ACCUMULATORS];
  int it = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const TileAt at = tile_at(tile, pt, BN);
    accumulate_tile<Cfg, BN>(ring, it, taps * channel_blocks, m0, acc);
    // Row i of the tile is output pixel (p0 + i / TQ, q0 + i % TQ); column j output channel k0 + j.
#pragma unroll
    for (int i = 0; i < Cfg::ACCUMULATORS; i += 2) {
      const int row = m0 + wgmma_v13::acc_row(t, i), k = at.k0 + wgmma_v13::acc_col(t, i);
      const int p = at.p0 + row / pt.tq, q = at.q0 + row % pt.tq;
      if (p >= g.P || q >= g.Q || k >= g.K) continue;
      store_pair(y + ((size_t(at.n) * g.P + p) * g.Q + q) * g.K + k, acc[0][i], acc[0][i + 1], k, g.K);
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // compiled for a GPU without wgmma/TMA (sm_80/89/90, plain sm_90): never a silent wrong answer
#endif
}

// The shapes TMA cannot describe: one thread per output element of y
// (N,P,Q,K), its C·R·S products summed in fp32, stored as bf16.
// Launch: block (256), grid (ceil(N·P·Q·K / 256)).
__global__ void conv2d_nhwc_bf16_direct(ConvShape g, const __nv_bfloat16* __restrict__ x,
                                        const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y) {
  const int index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= g.N * g.P * g.Q * g.K) return;
  const int k = index % g.K, pixel = index / g.K;
  const int q = pixel % g.Q, p = (pixel / g.Q) % g.P, n = pixel / (g.Q * g.P);
  float sum = 0.0f;
  for (int r = 0; r < g.R; ++r) {
    const int h = p * g.stride - g.pad + r * g.dil;
    if (h < 0 || h >= g.H) continue;
    for (int s = 0; s < g.S; ++s) {
      const int col = q * g.stride - g.pad + s * g.dil;
      if (col < 0 || col >= g.W) continue;
      const __nv_bfloat16* xs = x + ((size_t(n) * g.H + h) * g.W + col) * g.C;
      const __nv_bfloat16* ws = w + ((size_t(k) * g.R + r) * g.S + s) * g.C;
      for (int c = 0; c < g.C; ++c) sum += __bfloat162float(xs[c]) * __bfloat162float(ws[c]);
    }
  }
  y[index] = __float2bfloat16_rn(sum);
}

namespace conv_v13 {

// Launches the direct kernel on a shape TMA cannot describe.
inline void launch_direct(const ConvShape& g, const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y) {
  const int64_t outputs = int64_t(g.N) * g.P * g.Q * g.K;
  warpnet::launch_kernel(conv2d_nhwc_bf16_direct, dim3(unsigned(warpnet::ceil_div(outputs, 256))), dim3(256), 0, g, x,
                         w, y);
}

// Whether TMA can describe x and w as stored, `element_bytes` an element
// (2: bf16; conv v16's fp32: 4): 16-byte aligned bases, every global stride
// (a pixel's C channels, a tap's) a multiple of 16 bytes, the stride within
// TMA's element strides.
inline bool describable(const ConvShape& g, const void* x, const void* w, int element_bytes = 2) {
  return g.C * element_bytes % 16 == 0 && g.stride <= MAX_ELEMENT_STRIDE &&
         reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0;
}

// Makes both maps and launches `blocks` blocks of the BN-wide kernel
// (channel_tile(K)); false (nothing launched) when the driver refuses a map
// (describable() shapes only: the rest is the caller's to route).
template <int BN>
bool launch(int blocks, const ConvShape& g, const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = wgmma_v13::encode_tiled();
  if (!encode) return false;
  const PixelTiles pt = pixel_tiles(g);
  const cuuint64_t e = 2, C = cuuint64_t(g.C);
  const cuuint64_t x_dims[4] = {C, cuuint64_t(g.W), cuuint64_t(g.H), cuuint64_t(g.N)};
  const cuuint64_t x_strides[3] = {C * e, C * e * g.W, C * e * g.W * g.H};
  const cuuint32_t x_box[4] = {BK, cuuint32_t(pt.tq * g.stride), cuuint32_t(pt.tp * g.stride), 1};
  const cuuint32_t x_steps[4] = {1, cuuint32_t(g.stride), cuuint32_t(g.stride), 1};
  const cuuint64_t w_dims[3] = {C, cuuint64_t(g.R) * g.S, cuuint64_t(g.K)};
  const cuuint64_t w_strides[2] = {C * e, C * e * g.R * g.S};
  const cuuint32_t w_box[3] = {BK, 1, BN}, w_steps[3] = {1, 1, 1};
  CUtensorMap map_x, map_w;
  const auto made = [&](CUtensorMap* map, cuuint32_t rank, const void* base, const cuuint64_t* dims,
                        const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* steps) {
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank, const_cast<void*>(base), dims, strides, box, steps,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
  };
  if (!made(&map_x, 4, x, x_dims, x_strides, x_box, x_steps) || !made(&map_w, 3, w, w_dims, w_strides, w_box, w_steps))
    return false;
  warpnet::launch_kernel_opted_in(conv2d_implicit_gemm_wgmma<BN>, dim3(blocks), dim3(THREADS), Config<BN>::kSharedBytes,
                                  g, pt, map_x, map_w, y);
  return true;
}

// The dynamic shared memory of the kernel that runs at g's K.
inline size_t shared_bytes(const ConvShape& g) {
  const int bn = channel_tile(g.K);
  return bn == 64 ? Config<64>::kSharedBytes : bn == 128 ? Config<128>::kSharedBytes : Config<256>::kSharedBytes;
}

// The persistent grid: a block per SM, fewer when there are fewer tiles.
inline int persistent_blocks(const ConvShape& g) {
  const int tiles = pixel_tiles(g).count(g.N), sms = wgmma_v16::sm_count();
  return tiles < sms ? (tiles > 0 ? tiles : 1) : sms;
}

}  // namespace conv_v13
