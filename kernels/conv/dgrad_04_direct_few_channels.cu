// Conv dgrad v4 — direct, for few input channels: a thread per pixel of dx
// computing every channel of it, the window of dy it reads and the filters
// in shared memory. dgrad v3's tiles remain for everything else.
//
// Idea: dgrad is a GEMM of (N·H·W) x C over K·R·S taps. When C is small — 6
//   at LeNet-5's conv2 — the implicit GEMM's columns are nearly empty: each
//   element gathered from dy (a table read, two compares, a load, a shared
//   store and a barrier's share) feeds C multiply-adds, and dgrad v2 measured
//   3-4 us per k-step on an H200 at that layer whatever the tile. Turned
//   around, the same sum is a small correlation: with hp = h + pad,
//   dx[n,c,h,w] = sum over k, r, s of dy[n, k, hp − r·dil, wp − s·dil] · w[k,c,r,s].
//   A block owns a TH x TW tile of one image's pixels and stages, per chunk of
//   KC output channels k, the dy window those pixels read — (TH + dil·(R−1))
//   x (TW + dil·(S−1)), zeros outside dy — and the chunk's filters as
//   s_w[k][r][s][c], c padded to CMAX (1, 2, 4 or 8: the least >= C;
//   few_channels.hpp). Every thread then walks its K·R·S taps with no index
//   arithmetic but two adds and no bounds test (the window holds the
//   zeros): per tap one shared load of dy (consecutive pixels across the
//   lanes), the tap's CMAX weights as float4s that every lane reads at one
//   address (a broadcast), and CMAX multiply-adds into registers. No
//   barrier inside a chunk; a chunk of KC channels costs two.
// Applies: stride 1 and C <= 8, with a window and filters for at least one
//   channel in 48 KiB of shared memory (applies()); the registration runs
//   dgrad v3's tiles otherwise, and times both kinds on a GPU.
// Changed from dgrad v3: not a GEMM: one pixel per thread and all its
//   channels in registers instead of a tile of the (pixels x channels) GEMM;
//   the dy window staged whole instead of a gathered column per k-step.
// Trace (emulator, `warpnet trace conv2d_dgrad/04 --size 2,6,14,14,16,5,5,1,0,1` and /03,
//   LeNet-5's conv2 at batch 2, beside dgrad v3's 32x8x32 tile): 16 warps
//   issuing 1263 memory instructions each (v3: 104 warps, 1016 each: 5.2x
//   more in all); 19,200 shared loads (v3 93,288), 1.11-way: float4 weights
//   1.00-way, dy 2.00-way (a warp's two 16-pixel rows 20 floats apart share 4 banks);
//   global bytes asked 4.1e4 (v3 4.5e5, its gather reading dy once per tap);
//   one barrier pair for the whole K = 16 (v3: one pair per 32-tap step).
// Staging: each thread issues 8 loads before it stores any
//   (conv_few_channels::stage). At LeNet-5's conv2 a block stages 37 floats
//   a thread (16 dy windows of 20x20, 3,200 filter slots) for 3,200
//   multiply-adds; one load at a time, that is 37 memory latencies end to
//   end, 8 at a time 6. The H200 run below took 29 us at batch 64 and 36 at
//   batch 256, 4x the work: time that does not grow with the work is a
//   block's chain of waits, not its arithmetic. The 8x16 tile is for the
//   same small batch: 128 blocks where 16x16 gives 64 for 132 SMs.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/train-nvidia-h200-2026-12-04-cnn.json,
//   `warpnet bench train`, the tuner's times at LeNet-5's conv2: the mean of back-to-back launches),
//   before the staging above and the 8x16 tile: 16x16 / 8x32 pixels 0.0291 / 0.0299 ms at batch 64
//   (the tuner took dgrad v3's 32x8x32 tile, 0.0262 ms), 0.0363 / 0.0623 ms at batch 256 (taken).
// Run: build/bin/test_simt -tc="conv dgrad autotune*"; build/bin/warpnet trace conv2d_dgrad/04 --size 2,6,14,14,16,5,5,1,0,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/few_channels.hpp"
#include "kernels/conv/dgrad_03_autotuned.cu"  // the GEMM tiles, for what this kernel does not cover

namespace conv_dgrad_v04 {

using conv_few_channels::kSharedFloats;
constexpr int kMaxChannels = 8;  // C beyond this: dgrad v3's tiles

// The dy window of a TH x TW tile: rows and row pitch (floats); the
// filters' per-channel part, after the windows, 16-byte aligned.
struct Window {
  int rows, cols, k_floats;  // k_floats: one channel k's window, rounded up to 4
  __host__ __device__ static Window of(const ConvShape& g, int th, int tw) {
    const int rows = th + g.dil * (g.R - 1), cols = tw + g.dil * (g.S - 1);
    return Window{rows, cols, (rows * cols + 3) / 4 * 4};
  }
};

// Output channels staged per chunk: as many as 48 KiB holds (at most K); 0 when not even one fits.
inline int chunk_channels(const ConvShape& g, int th, int tw) {
  const Window win = Window::of(g, th, tw);
  const int per_k = win.k_floats + g.R * g.S * conv_few_channels::slots(g.C);
  const int kc = kSharedFloats / per_k;
  return kc < g.K ? kc : g.K;
}

// Window::of's window, in 64 bits, fits the staging: its int arithmetic
// is then exact (a huge dilation would overflow it).
inline bool window_fits(const ConvShape& g, int th, int tw) {
  return conv_few_channels::window_fits(th + (long long)g.dil * (g.R - 1), tw + (long long)g.dil * (g.S - 1));
}

inline bool applies(const ConvShape& g, int th, int tw) {
  return g.stride == 1 && g.C <= kMaxChannels && g.N <= conv_few_channels::kMaxBatch && window_fits(g, th, tw) &&
         chunk_channels(g, th, tw) >= 1;
}

inline size_t shared_bytes(const ConvShape& g, int th, int tw) {
  const int kc = chunk_channels(g, th, tw);
  return 4 * size_t(kc) * (Window::of(g, th, tw).k_floats + g.R * g.S * conv_few_channels::slots(g.C));
}

}  // namespace conv_dgrad_v04

// dy: (N,K,P,Q), w: (K,C,R,S), dx: (N,C,H,W), NCHW row-major (ConvShape).
// Launch: block (TH·TW); grid (ceil(W/TW), ceil(H/TH), N); dynamic shared
// shared_bytes(g, TH, TW); KC = chunk_channels(g, TH, TW).
// Preconditions: applies(g, TH, TW); CMAX = conv_few_channels::slots(g.C).
template <int CMAX, int TH, int TW>
__global__ void __launch_bounds__(TH * TW)
    conv2d_dgrad_few_channels(ConvShape g, int KC, const float* __restrict__ dy, const float* __restrict__ w,
                              float* __restrict__ dx) {
  using conv_dgrad_v04::Window;
  constexpr int THREADS = TH * TW;
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
  const Window win = Window::of(g, TH, TW);
  const int RS = g.R * g.S;
  float* s_dy = warpnet::dynamic_shared<float>();  // s_dy[k·k_floats + i·cols + j] = dy[n, k0+k, p0+i, q0+j], (KC, rows, cols)
  float* s_w = s_dy + KC * win.k_floats;           // s_w[((k·R + r)·S + s)·CMAX + c] = w[k0+k, c, r, s], (KC, R, S, CMAX)

  const int n = blockIdx.z, h0 = blockIdx.y * TH, w0 = blockIdx.x * TW;
  const int t = threadIdx.x, ty = t / TW, tx = t % TW;
  // The window's corner: the dy pixel that tap (R−1, S−1) takes pixel (h0, w0) to.
  const int p0 = h0 + g.pad - g.dil * (g.R - 1), q0 = w0 + g.pad - g.dil * (g.S - 1);
  // This thread's pixel reads window row ty + dil·(R−1−r), column tx + dil·(S−1−s) at tap (r, s).
  const int corner = (ty + g.dil * (g.R - 1)) * win.cols + tx + g.dil * (g.S - 1);
  const float* dy_n = dy + size_t(n) * g.K * g.P * g.Q;

  float acc[CMAX] = {};
  for (int k0 = 0; k0 < g.K; k0 += KC) {
    const int kc = min(KC, g.K - k0);
    // Stage the chunk's dy windows (zeros outside dy) and filters.
    conv_few_channels::stage_windows<THREADS>(s_dy, dy_n + size_t(k0) * g.P * g.Q, kc, win.k_floats, win.rows,
                                              win.cols, p0, q0, g.P, g.Q);
    conv_few_channels::stage_filters<CMAX, THREADS>(s_w, kc, RS, g.C, [&](int k, int c, int rs) {
      return w[(size_t(k0 + k) * g.C + c) * RS + rs];  // w[k0+k, c, r, s]
    });
    __syncthreads();  // the window and filters are complete before anyone reads them

    for (int k = 0; k < kc; ++k)
      for (int r = 0; r < g.R; ++r) {
        const float* row = s_dy + k * win.k_floats + corner - g.dil * r * win.cols;  // tap (r, 0)
        const float* w_r = s_w + (k * RS + r * g.S) * CMAX;
        for (int s = 0; s < g.S; ++s) conv_few_channels::multiply_add<CMAX>(acc, row[-g.dil * s], w_r + s * CMAX);
      }
    __syncthreads();  // everyone is done with the chunk before the next one overwrites it
  }

  // Consecutive lanes own consecutive w: coalesced stores, one channel plane at a time.
  const int h = h0 + ty, x = w0 + tx;
  if (h >= g.H || x >= g.W) return;
#pragma unroll
  for (int c = 0; c < CMAX; ++c)
    if (c < g.C) dx[((size_t(n) * g.C + c) * g.H + h) * g.W + x] = acc[c];
}

namespace conv_dgrad_v04 {

// The direct kernel's tiles (TH x TW pixels per block), then dgrad v3's
// seven. 8x16 is for small batches: LeNet-5's conv2 (14x14 pixels) at batch
// 64 is 64 blocks of 16x16, half of an H200's 132 SMs idle; 128 of 8x16.
constexpr int kDirectTiles = 3;
constexpr int kCandidates = kDirectTiles + conv_dgrad_v03::kCandidates;
constexpr int kTileRows[kDirectTiles] = {16, 8, 8}, kTileCols[kDirectTiles] = {16, 32, 16};

inline const char* candidate_name(int i) {
  static const char* const direct[kDirectTiles] = {"direct 16x16 pixels", "direct 8x32 pixels", "direct 8x16 pixels"};
  return i < kDirectTiles ? direct[i < 0 ? 0 : i] : conv_dgrad_v03::candidate_name(i - kDirectTiles);
}

// Whether candidate i can run this problem (the GEMM tiles run anything).
inline bool candidate_applies(int i, const ConvShape& g) {
  return i >= kDirectTiles || applies(g, kTileRows[i], kTileCols[i]);
}

// The tuning table: the square direct tile where it applies, else dgrad v3's table.
inline int table_choice(const ConvShape& g) {
  return candidate_applies(0, g) ? 0 : kDirectTiles + conv_dgrad_v03::table_choice(g);
}

// visit.template operator()<CMAX, TH, TW>() for direct candidate i at C = g.C.
template <class Visit>
auto with_direct(int i, const ConvShape& g, Visit&& visit) {
  return conv_few_channels::with_slots(g.C, [&]<int CMAX>() {
    switch (i) {
      case 0: return visit.template operator()<CMAX, kTileRows[0], kTileCols[0]>();
      case 1: return visit.template operator()<CMAX, kTileRows[1], kTileCols[1]>();
      default: return visit.template operator()<CMAX, kTileRows[2], kTileCols[2]>();
    }
  });
}

}  // namespace conv_dgrad_v04
