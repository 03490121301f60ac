// Conv v8 — direct, for few output channels: a thread per output pixel
// computing every channel of it, the window of x its block reads and the
// filters in shared memory. v7's tiles remain for everything else.
//
// Idea: the implicit GEMM's columns are the K output channels. At LeNet-5's
//   layers K is 6 and 16: each element v7 gathers from x (a table read, two
//   compares, a load, a shared store, a barrier's share) feeds only K
//   multiply-adds, so gathering is most of the work — the finding of dgrad v4,
//   whose kernel this mirrors for the forward. A block owns TH rows x TW
//   columns of one image's output pixels, TW = min(Q, threads) and TH as
//   many rows as the rest of the block holds (at most P): small images fill
//   the block with whole rows (LeNet-5's 10x10 conv2 output: 100 pixels of a
//   128-thread block) where square tiles would leave most threads idle. Per
//   chunk of CC input channels it stages the x window those pixels read,
//   ((TH−1)·stride + dil·(R−1) + 1) x ((TW−1)·stride + dil·(S−1) + 1), zeros
//   in the padding, and the chunk's filters as s_w[c][r][s][k], k padded to
//   KMAX (1, 2, 4, 8 or 16: the least >= K; few_channels.hpp). Each thread
//   then walks its C·R·S taps with no bounds test: per tap one shared load of
//   x and the tap's KMAX weights as float4s every lane reads at one address,
//   KMAX multiply-adds into registers. Any stride, padding and dilation.
// Applies: K <= 16, with a window and filters for at least one input channel
//   in 48 KiB of shared memory (applies()); the registration runs v7's tiles
//   otherwise, and times both kinds on a GPU.
// Changed from v7: not a GEMM: one pixel per thread and all its output
//   channels in registers; the x window staged whole instead of a gathered
//   column per k-step; a row-filling tile of runtime shape.
// Trace (emulator, `warpnet trace conv2d/08 --size ...` and conv2d/07, LeNet-5's layers at
//   batch 2, beside the tile v7's table picks):
//   conv1 (2,1,28,28,6,5,5,1,2,1): 56 warps issuing 88.4 memory instructions
//     each against v7's 392 at 78.6 (6.2x fewer in all); 4,200 shared loads
//     (v7 26,656); global bytes asked 5.8e4 (v7 2.1e5).
//   conv2 (2,6,14,14,16,5,5,1,0,1): 8 warps at 822 against 112 at 361.8
//     (6.2x fewer); 6,000 shared loads (v7 36,960), 1.05-way; 4.1e4 global
//     bytes (v7 2.0e5); 20% of the lanes idle (100 pixels, 128 threads).
// Staging: each thread issues 8 loads before it stores any
//   (conv_few_channels::stage), where one at a time a block waited a memory
//   latency per staged float, as dgrad v4 did. The 64-thread block is for
//   small batches (kThreads, below).
// Measured: NVIDIA H200, 2026-12-04 (bench/results/nvidia-h200-2026-12-04-cnn.json, `warpnet bench conv2d`),
//   N=64, 3x3, stride 1, pad 1, at C=K=64 56x56 / 128 28x28 / 256 14x14: 0.701 / 0.729 / 0.762 ms,
//   21.1 / 20.3 / 19.4 TFLOP/s, 32.4% / 26.7% / 31.7% of cuDNN (fp32, no TF32) in the same run.
//   K > 16 there, so the direct kernel is no candidate: the tuner picked v7's 128x64x8 / 128x64x8 / 64x64x16.
//   At LeNet-5's layers (bench/results/train-nvidia-h200-2026-12-04-cnn.json, the tuner's times: the
//   mean of back-to-back launches), before the staging above and the 64-thread block: conv1 0.0054 ms at batch 64 (256
//   threads, taken), conv2 0.0138 ms at 64 (256 threads; v7's 32x16x32 tile taken, 0.0119 ms) and
//   0.0160 ms at 256 (taken): 4x the work for 1.2x the time.
// Run: build/bin/test_simt -tc="conv direct*"; build/bin/warpnet trace conv2d/08 --size 2,6,14,14,16,5,5,1,0,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/07_autotuned.cu"  // the GEMM tiles, for what this kernel does not cover
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/few_channels.hpp"

namespace conv_v08 {

using conv_few_channels::kSharedFloats;
constexpr int kMaxChannels = 16;  // K beyond this: v7's tiles

// A block's tile of output pixels (TH rows x TW columns of one image) and
// the x window it reads: rows, row pitch, one channel's floats rounded up to
// 4 (so the filters after the windows start 16-byte aligned).
struct Tile {
  int th, tw, rows, cols, c_floats;
  __host__ __device__ static Tile of(const ConvShape& g, int threads) {
    const int tw = g.Q < threads ? g.Q : threads;
    const int fit = threads / (tw > 0 ? tw : 1), th = fit < g.P ? fit : g.P;
    const int rows = (th - 1) * g.stride + g.dil * (g.R - 1) + 1, cols = (tw - 1) * g.stride + g.dil * (g.S - 1) + 1;
    return Tile{th, tw, rows, cols, (rows * cols + 3) / 4 * 4};
  }
};

// Input channels staged per chunk: as many as 48 KiB holds (at most C); 0 when not even one fits.
inline int chunk_channels(const ConvShape& g, int threads) {
  const Tile tile = Tile::of(g, threads);
  const int per_c = tile.c_floats + g.R * g.S * conv_few_channels::slots(g.K);
  const int cc = kSharedFloats / per_c;
  return cc < g.C ? cc : g.C;
}

// Tile::of's window, in 64 bits, fits the staging: its int arithmetic is
// then exact.
inline bool window_fits(const ConvShape& g, int threads) {
  const long long tw = g.Q < threads ? g.Q : threads, fit = threads / (tw > 0 ? tw : 1), th = fit < g.P ? fit : g.P;
  return conv_few_channels::window_fits((th - 1) * (long long)g.stride + (long long)g.dil * (g.R - 1) + 1,
                                        (tw - 1) * (long long)g.stride + (long long)g.dil * (g.S - 1) + 1);
}

inline bool applies(const ConvShape& g, int threads) {
  return g.K <= kMaxChannels && g.N <= conv_few_channels::kMaxBatch && g.P > 0 && g.Q > 0 && window_fits(g, threads) &&
         chunk_channels(g, threads) >= 1;
}

inline size_t shared_bytes(const ConvShape& g, int threads) {
  const int cc = chunk_channels(g, threads);
  return 4 * size_t(cc) * (Tile::of(g, threads).c_floats + g.R * g.S * conv_few_channels::slots(g.K));
}

inline dim3 grid(const ConvShape& g, int threads) {
  const Tile tile = Tile::of(g, threads);
  return dim3(::warpnet::ceil_div(g.Q, tile.tw), ::warpnet::ceil_div(g.P, tile.th), g.N);
}

}  // namespace conv_v08

// x: (N,C,H,W), w: (K,C,R,S), y: (N,K,P,Q), NCHW row-major (ConvShape).
// Launch: block (THREADS); grid conv_v08::grid(g, THREADS) = (ceil(Q/TW),
// ceil(P/TH), N); dynamic shared shared_bytes(g, THREADS); CC =
// chunk_channels(g, THREADS). Preconditions: applies(g, THREADS); KMAX =
// conv_few_channels::slots(g.K).
template <int KMAX, int THREADS>
__global__ void __launch_bounds__(THREADS)
    conv2d_few_channels(ConvShape g, int CC, const float* __restrict__ x, const float* __restrict__ w,
                        float* __restrict__ y) {
  using conv_v08::Tile;
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
  const Tile tile = Tile::of(g, THREADS);
  const int RS = g.R * g.S;
  float* s_x = warpnet::dynamic_shared<float>();  // s_x[c·c_floats + i·cols + j] = x[n, c0+c, h0+i, w0+j], (CC, rows, cols)
  float* s_w = s_x + CC * tile.c_floats;          // s_w[((c·R + r)·S + s)·KMAX + k] = w[k, c0+c, r, s], (CC, R, S, KMAX)

  const int n = blockIdx.z, p0 = blockIdx.y * tile.th, q0 = blockIdx.x * tile.tw;
  const int h0 = p0 * g.stride - g.pad, w0 = q0 * g.stride - g.pad;  // the window's corner in x
  const int t = threadIdx.x, ty = t / tile.tw, tx = t % tile.tw;
  const bool active = ty < tile.th;  // the block's last threads may have no pixel
  // Tap (r, s) of this thread's pixel reads window row ty·stride + r·dil, column tx·stride + s·dil.
  const int corner = ty * g.stride * tile.cols + tx * g.stride;
  const float* x_n = x + size_t(n) * g.C * g.H * g.W;

  float acc[KMAX] = {};
  for (int c0 = 0; c0 < g.C; c0 += CC) {
    const int cc = min(CC, g.C - c0);
    // Stage the chunk's x windows (zeros in the padding) and filters.
    conv_few_channels::stage_windows<THREADS>(s_x, x_n + size_t(c0) * g.H * g.W, cc, tile.c_floats, tile.rows,
                                              tile.cols, h0, w0, g.H, g.W);
    conv_few_channels::stage_filters<KMAX, THREADS>(s_w, cc, RS, g.K, [&](int c, int k, int rs) {
      return w[(size_t(k) * g.C + c0 + c) * RS + rs];  // w[k, c0+c, r, s]
    });
    __syncthreads();  // the window and filters are complete before anyone reads them

    if (active)
      for (int c = 0; c < cc; ++c)
        for (int r = 0; r < g.R; ++r) {
          const float* row = s_x + c * tile.c_floats + corner + g.dil * r * tile.cols;  // tap (r, 0)
          const float* w_r = s_w + (c * RS + r * g.S) * KMAX;
          for (int s = 0; s < g.S; ++s) conv_few_channels::multiply_add<KMAX>(acc, row[g.dil * s], w_r + s * KMAX);
        }
    __syncthreads();  // everyone is done with the chunk before the next one overwrites it
  }

  // Consecutive lanes own consecutive q: coalesced stores, one channel plane at a time.
  const int p = p0 + ty, q = q0 + tx;
  if (!active || p >= g.P || q >= g.Q) return;
#pragma unroll
  for (int k = 0; k < KMAX; ++k)
    if (k < g.K) y[((size_t(n) * g.K + k) * g.P + p) * g.Q + q] = acc[k];
}

namespace conv_v08 {

// The direct kernel at 128, 256 and 64 threads, then v7's seven tiles. 64
// threads is for small batches: LeNet-5's conv2 at batch 64 is 64 blocks of
// 100 pixels at 128 threads, half of an H200's 132 SMs idle; at 64 threads
// (6 rows of 10 pixels) it is 128 blocks.
constexpr int kDirectBlocks = 3;
constexpr int kCandidates = kDirectBlocks + conv_v07::kCandidates;
constexpr int kThreads[kDirectBlocks] = {128, 256, 64};

inline const char* candidate_name(int i) {
  static const char* const direct[kDirectBlocks] = {"direct, 128 threads", "direct, 256 threads", "direct, 64 threads"};
  return i < kDirectBlocks ? direct[i < 0 ? 0 : i] : conv_v07::candidate_name(i - kDirectBlocks);
}

// Whether candidate i can run this problem (the GEMM tiles run anything).
inline bool candidate_applies(int i, const ConvShape& g) { return i >= kDirectBlocks || applies(g, kThreads[i]); }

// The tuning table: the 128-thread direct kernel where it applies, else v7's table.
inline int table_choice(const ConvShape& g) {
  return candidate_applies(0, g) ? 0 : kDirectBlocks + conv_v07::table_choice(g);
}

// visit.template operator()<KMAX, THREADS>() for direct candidate i at K = g.K.
template <class Visit>
auto with_direct(int i, const ConvShape& g, Visit&& visit) {
  return conv_few_channels::with_slots(g.K, [&]<int KMAX>() {
    switch (i) {
      case 0: return visit.template operator()<KMAX, kThreads[0]>();
      case 1: return visit.template operator()<KMAX, kThreads[1]>();
      default: return visit.template operator()<KMAX, kThreads[2]>();
    }
  });
}

}  // namespace conv_v08
