// LeNet-5 training step v1 — the whole network in one kernel, an image per block.
//
// Idea: at a batch of 64, LeNet-5's layers are too small for a GPU. Run
//   layer by layer, the step is some 38 kernels (graph nodes), most of them
//   a few microseconds of latency for well under a microsecond of
//   arithmetic: conv2's data gradient is 30 million multiply-adds, 1 µs of
//   an H200's FP32 rate, and takes 26 µs. What costs is the chain of waits:
//   each kernel's launch, its first loads, its last stores, and the next
//   kernel's loads of the same bytes. Fusing the network into one kernel
//   removes all of them at once — the approach of fully fused networks
//   (tiny-cuda-nn's fully fused MLPs) for models that fit on a chip.
//   Block n takes image n through forward, loss and backward with every
//   activation in shared memory (79 KiB) and 512 threads, a pass per layer
//   between barriers: the convolutions and their gradients a strip of 5 or
//   7 outputs per thread (each value loaded from shared memory serves up to
//   5 of them), conv2's filter rows and the fully connected layers' output
//   gradients read four at a time (one broadcast float4) — 19,717 warp
//   loads from shared memory an image in the emulator's trace (at
//   `--size 1,10`), where an output per thread and a weight per load made
//   70,879 — one warp per fully connected output (lanes over the inputs, a
//   butterfly of shuffles), the softmax in one warp, conv2's data gradient over a copy of
//   its output gradient inside a border of zeros (no tap tested), conv1's
//   weight gradient, 156 sums of 784 terms, in bands of rows first so that
//   every thread has work. Nothing an image computes leaves the block except
//   what the weights' gradients need: the conv layers' per-image weight and
//   bias gradients (2,572 floats), and each fully connected layer's input
//   and output gradient (818 floats), whose outer products are the weight
//   gradients. lenet5_sum_gradients (below) then adds the images' shares in
//   order, one thread per parameter: two kernels for the whole step, and
//   every sum in a fixed order, so a step gives the same bits every run.
// Changed: first version; what it replaces, the layer-by-layer step, is lesson 08's.
// Block size: a template parameter; the registration's tune times 256, 512
//   and 1024 threads on a GPU (512 until it has), and every sum here is
//   taken in an order the block size does not change, so all three give
//   the same bits (tests/simt/test_lenet5_blocks.cpp).
// Cost left: a block per image (64 blocks on 132 SMs at batch 64), and
//   79 KiB of shared memory a block fits two blocks an SM (at batch 1024,
//   four waves); conv2's data gradient keeps 168 of the 512 threads busy; the fully
//   connected weights come from global memory (L2) for every image, and the
//   weight gradients go through global memory (`saved`) to a second kernel,
//   conv2's in scattered stores (17.6% of their sectors used; 23% over all
//   the kernel's stores, in the trace at `--size 2,10`).
// Precondition: LeNet-5 as nn::make_lenet5 builds it (1×28×28 in, 5×5
//   convs, 2×2 max pools, 400-120-84-C), C ≤ 32 classes; labels in [0, C)
//   (outside it the row's loss and its gradients are NaN, as in
//   softmax_cross_entropy/02).
// Measured: not yet measured on a GPU. Emulator: `warpnet trace lenet5_step/01 --size 2,10`.
// Run: build/bin/test_simt -tc="registry*"; build/bin/test_nn -tc="*fused*"
#include <cmath>

#include "kernels/common/activations.hpp"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/in_flight.hpp"
#include "kernels/common/row_reduce.hpp"
#include "kernels/pool/pool_shape.hpp"

// The network's extents, and where an image's saved values sit in its row
// of the (N, kSaved) buffer the two kernels share.
namespace lenet5 {
// conv1 pads by 2: the input is kept as 32 rows of 32 with a zero border,
// rows 33 floats apart so that the rows a warp reads start in different banks.
constexpr int kImage = 28, kPadded = 32, kXStride = 33;
constexpr int kC1 = 6, kH1 = 28, kP1 = 14;           // conv1 out (6,28,28), pool1 out (6,14,14)
constexpr int kC2 = 16, kH2 = 10, kP2 = 5;           // conv2 out (16,10,10), pool2 out (16,5,5)
constexpr int kTaps = 25;                            // 5x5 filters
constexpr int kF1In = kC2 * kP2 * kP2, kF1 = 120, kF2 = 84;  // 400 -> 120 -> 84 -> C
constexpr int kMaxClasses = 32;                      // the softmax is one warp's lanes
constexpr int kW1 = kC1 * kTaps, kW2 = kC2 * kC1 * kTaps;  // 150, 2400
constexpr int kD2P = kH2 + 8;  // conv2's output gradient with a border of 4 zeros: 18x18 a channel
// conv2's filter rows in shared memory, 8 floats apart (5 taps, 3 zeros): a
// row is one float4 and one float, 2 loads where its 5 taps were 5.
constexpr int kW2Row = 8, kW2Shared = kC2 * kC1 * 5 * kW2Row;
// Per image: conv weight and bias gradients, then each fully connected
// layer's input and output gradient.
constexpr int kSavedW1 = 0, kSavedB1 = kSavedW1 + kW1, kSavedW2 = kSavedB1 + kC1, kSavedB2 = kSavedW2 + kW2;
constexpr int kSavedIn1 = kSavedB2 + kC2, kSavedD1 = kSavedIn1 + kF1In;
constexpr int kSavedIn2 = kSavedD1 + kF1, kSavedD2 = kSavedIn2 + kF1;
constexpr int kSavedIn3 = kSavedD2 + kF2, kSavedD3 = kSavedIn3 + kF2;
constexpr int kSaved = kSavedD3 + kMaxClasses;  // 3,412 floats

// Shared memory of one block, in floats, and the offsets of its arrays.
constexpr int kSmX = 0, kSmR1 = kSmX + kPadded * kXStride, kSmP1 = kSmR1 + kC1 * kH1 * kH1;
constexpr int kSmR2 = kSmP1 + kC1 * kP1 * kP1, kSmP2 = kSmR2 + kC2 * kH2 * kH2;
constexpr int kSmR3 = kSmP2 + kF1In, kSmR4 = kSmR3 + kF1, kSmZ5 = kSmR4 + kF2;
constexpr int kSmW1 = kSmZ5 + kMaxClasses, kSmB1 = kSmW1 + kW1, kSmW2 = kSmB1 + kC1, kSmB2 = kSmW2 + kW2Shared;
constexpr int kSmD5 = kSmB2 + kC2, kSmD4 = kSmD5 + kMaxClasses, kSmD3 = kSmD4 + kF2, kSmDP2 = kSmD3 + kF1;
constexpr int kSmDP1 = kSmDP2 + kF1In, kSmD2P = kSmDP1 + kC1 * kP1 * kP1;
constexpr int kSmFloats = kSmD2P + kC2 * kD2P * kD2P;  // 20,200 floats: 80,800 bytes
// float4 loads: conv2's filter rows, and the output gradients of the fully
// connected layers (lenet5_dense_back), start at multiples of 16 bytes.
static_assert(kSmW2 % 4 == 0 && kSmD5 % 4 == 0 && kSmD4 % 4 == 0 && kSmD3 % 4 == 0, "16-byte aligned rows");
}  // namespace lenet5

// The network's parameters, as the layers hold them: conv weights (K,C,5,5),
// fully connected weights (out, in), and their biases. By value: ten
// pointers travel with the launch (and a captured graph keeps them).
struct Lenet5Weights {
  const float *w1, *b1, *w2, *b2, *w3, *b3, *w4, *b4, *w5, *b5;
};
struct Lenet5Grads {
  float *w1, *b1, *w2, *b2, *w3, *b3, *w4, *b4, *w5, *b5;
};

// The winner of a 2x2 max-pool window whose top-left element is at `at` in
// a plane `width` wide, by the pool kernels' rule (pool_takes_over: the
// first largest in row-major order, or the last NaN).
__device__ __forceinline__ int lenet5_pool_winner(const float* plane, int at, int width) {
  const int others[3] = {at + 1, at + width, at + width + 1};
  int best = at;
  for (int q : others)
    if (pool_takes_over(plane[q], plane[best])) best = q;
  return best;
}

// A filter row of conv2 from shared memory (kW2Row floats apart, 16-byte
// aligned): its 5 taps in one float4 and one float.
__device__ __forceinline__ void lenet5_filter_row(const float* row, float (&taps)[5]) {
  const float4 first = warpnet::load_float4(row);
  taps[0] = first.x, taps[1] = first.y, taps[2] = first.z, taps[3] = first.w, taps[4] = row[4];
}

// out[o] = b[o] + Σ_i W[o][i]·in[i], o < OUT, i < IN, then ReLU when `relu`:
// warp w takes outputs w, w + WARPS, ...; lane l the inputs l, l + 32, ...
// (coalesced rows of W), merged by a butterfly of shuffles in a fixed order.
template <int BLOCK>
__device__ __forceinline__ void lenet5_dense(const float* __restrict__ W, const float* __restrict__ b,
                                             const float* in, float* out, int OUT, int IN, bool relu) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int o = warp; o < OUT; o += BLOCK / 32) {
    float acc = 0.0f;
    for (int i = lane; i < IN; i += 32) acc += W[o * IN + i] * in[i];
    acc = warpnet::warp_allreduce<warpnet::Sum>(acc) + b[o];
    if (lane == 0) out[o] = relu ? warpnet::Relu{}(acc) : acc;
  }
}

// d_in[i] = Σ_o W[o][i]·d_out[o], zeroed by ReLU's mask (kept[i] <= 0) when
// `kept` is given: thread i walks a column of W (consecutive i: coalesced).
// d_out (16-byte aligned) is read four at a time, one broadcast load for
// four outputs; the last OUT % 4 one by one.
template <int BLOCK>
__device__ __forceinline__ void lenet5_dense_back(const float* __restrict__ W, const float* d_out, int OUT,
                                                  int IN, const float* kept, float* d_in) {
  for (int i = threadIdx.x; i < IN; i += BLOCK) {
    float acc = 0.0f;
    int o = 0;
    for (; o + 4 <= OUT; o += 4) {
      const float4 d = warpnet::load_float4(d_out + o);
      acc += W[o * IN + i] * d.x;
      acc += W[(o + 1) * IN + i] * d.y;
      acc += W[(o + 2) * IN + i] * d.z;
      acc += W[(o + 3) * IN + i] * d.w;
    }
    for (; o < OUT; ++o) acc += W[o * IN + i] * d_out[o];
    d_in[i] = kept && kept[i] <= 0.0f ? 0.0f : acc;  // (a NaN passes, as ReluBackward)
  }
}

// X: (N,1,28,28); labels: (N) i32; probs: (N,C); row_loss: (N);
// saved: (N, lenet5::kSaved), written here and read by lenet5_sum_gradients.
// Launch: block (BLOCK), grid (N), dynamic shared memory lenet5::kSmFloats
// floats; both kernels here with launch_dependent_kernel (cuda_compat.hpp).
// __launch_bounds__: ptxas must fit a 1024-thread block's registers (64 a
// thread at most) or that candidate's launch fails; without it, it may not.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) lenet5_image_per_block(int N, int C, const float* __restrict__ X, const int* __restrict__ labels,
                                       Lenet5Weights w, float* __restrict__ probs, float* __restrict__ row_loss,
                                       float* __restrict__ saved) {
  using namespace lenet5;
  static_assert(BLOCK % 32 == 0 && BLOCK >= 32, "whole warps: the dense layers give each output a warp");
  warpnet::allow_dependent_grids();  // a programmatic dependent launch may start the next kernel now
  warpnet::wait_for_prior_grids();   // and this one's loads wait for the last kernel's results
  float* sm = warpnet::dynamic_shared<float>();
  float *x = sm + kSmX, *r1 = sm + kSmR1, *p1 = sm + kSmP1, *r2 = sm + kSmR2, *p2 = sm + kSmP2;
  float *r3 = sm + kSmR3, *r4 = sm + kSmR4, *z5 = sm + kSmZ5;
  float *w1 = sm + kSmW1, *b1 = sm + kSmB1, *w2 = sm + kSmW2, *b2 = sm + kSmB2;
  float *d5 = sm + kSmD5, *d4 = sm + kSmD4, *d3 = sm + kSmD3, *dp2 = sm + kSmDP2, *dp1 = sm + kSmDP1;
  float* d2p = sm + kSmD2P;  // (16, 18, 18): conv2's output gradient inside a border of 4 zeros
  const int n = blockIdx.x, t = threadIdx.x;
  float* mine = saved + size_t(n) * kSaved;  // this image's row of `saved`

  // The image with conv1's zero border, the conv weights, and the zeros
  // around conv2's output gradient (written inside them later).
  const float* image = X + size_t(n) * kImage * kImage;
  for (int i = t; i < kPadded * kXStride; i += BLOCK) {
    const int y = i / kXStride - 2, xx = i % kXStride - 2;
    x[i] = y >= 0 && y < kImage && xx >= 0 && xx < kImage ? image[y * kImage + xx] : 0.0f;
  }
  for (int i = t; i < kC2 * kD2P * kD2P; i += BLOCK) d2p[i] = 0.0f;
  for (int i = t; i < kW1; i += BLOCK) w1[i] = w.w1[i];
  for (int i = t; i < kW2Shared; i += BLOCK) w2[i] = i % kW2Row < 5 ? w.w2[i / kW2Row * 5 + i % kW2Row] : 0.0f;
  for (int i = t; i < kC1; i += BLOCK) b1[i] = w.b1[i];
  for (int i = t; i < kC2; i += BLOCK) b2[i] = w.b2[i];
  __syncthreads();

  // ---- forward ----
  // The convolutions give a thread a strip of outputs along a row, so each
  // value it loads from shared memory serves up to 5 of them (a filter row
  // is 5 wide): a strip of 7 loads 11 inputs and 5 weights for 35
  // multiply-adds, where an output at a time loads 2 values for each.
  // conv1 + ReLU: r1 (6,28,28), a thread per quarter row (7 outputs); a
  // warp's threads take one quarter of consecutive rows, whose inputs start
  // in consecutive banks (rows kXStride = 33 floats apart).
  for (int item = t; item < kC1 * kH1 * 4; item += BLOCK) {
    const int k = item / (kH1 * 4), x0 = item / kH1 % 4 * 7, y = item % kH1;
    float acc[7] = {};
    for (int r = 0; r < 5; ++r) {
      float in[11];
#pragma unroll
      for (int j = 0; j < 11; ++j) in[j] = x[(y + r) * kXStride + x0 + j];
#pragma unroll
      for (int s = 0; s < 5; ++s) {
        const float wv = w1[k * kTaps + r * 5 + s];
#pragma unroll
        for (int p = 0; p < 7; ++p) acc[p] += in[p + s] * wv;
      }
    }
#pragma unroll
    for (int p = 0; p < 7; ++p) r1[(k * kH1 + y) * kH1 + x0 + p] = warpnet::Relu{}(acc[p] + b1[k]);
  }
  __syncthreads();
  // pool1: p1 (6,14,14).
  for (int o = t; o < kC1 * kP1 * kP1; o += BLOCK) {
    const int c = o / (kP1 * kP1), y = o / kP1 % kP1, xx = o % kP1;
    const float* plane = r1 + c * kH1 * kH1;
    p1[o] = plane[lenet5_pool_winner(plane, 2 * y * kH1 + 2 * xx, kH1)];
  }
  __syncthreads();
  // conv2 + ReLU: r2 (16,10,10), a thread per half row (5 outputs).
  for (int item = t; item < kC2 * kH2 * 2; item += BLOCK) {
    const int k = item / (kH2 * 2), y = item / 2 % kH2, x0 = item % 2 * 5;
    float acc[5] = {};
    for (int c = 0; c < kC1; ++c)
      for (int r = 0; r < 5; ++r) {
        float in[9];
#pragma unroll
        for (int j = 0; j < 9; ++j) in[j] = p1[(c * kP1 + y + r) * kP1 + x0 + j];
        float taps[5];
        lenet5_filter_row(w2 + ((k * kC1 + c) * 5 + r) * kW2Row, taps);
#pragma unroll
        for (int s = 0; s < 5; ++s)
#pragma unroll
          for (int p = 0; p < 5; ++p) acc[p] += in[p + s] * taps[s];
      }
#pragma unroll
    for (int p = 0; p < 5; ++p) r2[(k * kH2 + y) * kH2 + x0 + p] = warpnet::Relu{}(acc[p] + b2[k]);
  }
  __syncthreads();
  // pool2: p2 (400), flattened (C,H,W) as nn::Flatten does: fc1's input.
  for (int o = t; o < kF1In; o += BLOCK) {
    const int k = o / (kP2 * kP2), y = o / kP2 % kP2, xx = o % kP2;
    const float* plane = r2 + k * kH2 * kH2;
    p2[o] = mine[kSavedIn1 + o] = plane[lenet5_pool_winner(plane, 2 * y * kH2 + 2 * xx, kH2)];
  }
  __syncthreads();
  lenet5_dense<BLOCK>(w.w3, w.b3, p2, r3, kF1, kF1In, true);
  __syncthreads();
  lenet5_dense<BLOCK>(w.w4, w.b4, r3, r4, kF2, kF1, true);
  __syncthreads();
  lenet5_dense<BLOCK>(w.w5, w.b5, r4, z5, C, kF2, false);
  __syncthreads();

  // ---- loss: softmax + cross-entropy in warp 0, as softmax_cross_entropy/02 ----
  // and its gradient d5 = (p − onehot)/N, the batch mean's.
  if (t < 32) {
    const float z = t < C ? z5[t] : -INFINITY;
    const float m = warpnet::warp_allreduce<warpnet::Max>(z);
    const float e = t < C ? expf(z - m) : 0.0f;
    const float sum = warpnet::warp_allreduce<warpnet::Sum>(e);
    const int label = labels[n];
    const bool valid = label >= 0 && label < C;
    if (t < C) {
      const float p = e * (1.0f / sum);
      probs[size_t(n) * C + t] = p;
      d5[t] = valid ? (p - (t == label ? 1.0f : 0.0f)) * (1.0f / float(N)) : NAN;
      mine[kSavedD3 + t] = d5[t];
    }
    if (t == 0) row_loss[n] = valid ? (m - z5[label]) + logf(sum) : NAN;
  }
  for (int i = t; i < kF2; i += BLOCK) mine[kSavedIn3 + i] = r4[i];
  for (int i = t; i < kF1; i += BLOCK) mine[kSavedIn2 + i] = r3[i];
  __syncthreads();

  // ---- backward ----
  lenet5_dense_back<BLOCK>(w.w5, d5, C, kF2, r4, d4);  // through fc3 and relu4
  __syncthreads();
  for (int i = t; i < kF2; i += BLOCK) mine[kSavedD2 + i] = d4[i];
  lenet5_dense_back<BLOCK>(w.w4, d4, kF2, kF1, r3, d3);  // through fc2 and relu3
  __syncthreads();
  for (int i = t; i < kF1; i += BLOCK) mine[kSavedD1 + i] = d3[i];
  lenet5_dense_back<BLOCK>(w.w3, d3, kF1, kF1In, nullptr, dp2);  // through fc1
  __syncthreads();
  // Through pool2 and relu2: each window's winner gets its gradient where
  // conv2's output was positive, the rest 0, into d2p's inside (the
  // windows tile the plane, a window per thread).
  for (int o = t; o < kF1In; o += BLOCK) {
    const int k = o / (kP2 * kP2), y = o / kP2 % kP2, xx = o % kP2;
    const float* plane = r2 + k * kH2 * kH2;
    const int at = 2 * y * kH2 + 2 * xx, winner = lenet5_pool_winner(plane, at, kH2);
    const float g = plane[winner] <= 0.0f ? 0.0f : dp2[o];
    const int window[4] = {at, at + 1, at + kH2, at + kH2 + 1};
    for (int q : window) d2p[(k * kD2P + q / kH2 + 4) * kD2P + q % kH2 + 4] = q == winner ? g : 0.0f;
  }
  __syncthreads();
  // conv2's weight gradient for this image: a thread per filter row (k, c,
  // r), its 5 taps at once, each row of d2 and of p1 loaded once for them.
  // A warp's threads share c, so its loads of p1 fall on 5 rows (r), which
  // start in different banks, and of d2 on 7 channels (k), which do too.
  for (int item = t; item < kC2 * kC1 * 5; item += BLOCK) {
    const int c = item / (kC2 * 5), k = item / 5 % kC2, r = item % 5;
    float acc[5] = {};
    for (int y = 0; y < kH2; ++y) {
      const float* d_row = d2p + (k * kD2P + y + 4) * kD2P + 4;  // d2[k][y][0..9]
      float in[kP1];
#pragma unroll
      for (int j = 0; j < kP1; ++j) in[j] = p1[(c * kP1 + y + r) * kP1 + j];
#pragma unroll
      for (int xx = 0; xx < kH2; ++xx) {
        const float dv = d_row[xx];
#pragma unroll
        for (int s = 0; s < 5; ++s) acc[s] += dv * in[xx + s];
      }
    }
#pragma unroll
    for (int s = 0; s < 5; ++s) mine[kSavedW2 + ((k * kC1 + c) * 5 + r) * 5 + s] = acc[s];
  }
  for (int k = t; k < kC2; k += BLOCK) {
    float acc = 0.0f;
    for (int y = 0; y < kH2; ++y)
      for (int xx = 0; xx < kH2; ++xx) acc += d2p[(k * kD2P + y + 4) * kD2P + xx + 4];
    mine[kSavedB2 + k] = acc;
  }
  // conv2's data gradient, dp1[c][y][x] = Σ d2[k][y−r][x−s]·w2[k][c][r][s]:
  // a thread per half row (7 outputs); the zeros around d2 stand for the
  // taps that fall outside it, so no tap is tested.
  for (int item = t; item < kC1 * kP1 * 2; item += BLOCK) {
    const int c = item / (kP1 * 2), y = item / 2 % kP1, x0 = item % 2 * 7;
    float acc[7] = {};
    for (int k = 0; k < kC2; ++k)
      for (int r = 0; r < 5; ++r) {
        float in[11];  // d2[k][y − r][x0 − 4 .. x0 + 6]
#pragma unroll
        for (int j = 0; j < 11; ++j) in[j] = d2p[(k * kD2P + y - r + 4) * kD2P + x0 + j];
        float taps[5];
        lenet5_filter_row(w2 + ((k * kC1 + c) * 5 + r) * kW2Row, taps);
#pragma unroll
        for (int s = 0; s < 5; ++s)
#pragma unroll
          for (int p = 0; p < 7; ++p) acc[p] += in[p - s + 4] * taps[s];
      }
#pragma unroll
    for (int p = 0; p < 7; ++p) dp1[(c * kP1 + y) * kP1 + x0 + p] = acc[p];
  }
  __syncthreads();
  // Through pool1 and relu1, in place in r1 as above.
  for (int o = t; o < kC1 * kP1 * kP1; o += BLOCK) {
    const int c = o / (kP1 * kP1), y = o / kP1 % kP1, xx = o % kP1;
    float* plane = r1 + c * kH1 * kH1;
    const int at = 2 * y * kH1 + 2 * xx, winner = lenet5_pool_winner(plane, at, kH1);
    const float g = plane[winner] <= 0.0f ? 0.0f : dp1[o];
    const int window[4] = {at, at + 1, at + kH1, at + kH1 + 1};
    for (int q : window) plane[q] = q == winner ? g : 0.0f;
  }
  __syncthreads();
  const float* d1 = r1;  // (6,28,28)
  // conv1's weight and bias gradients for this image (no data gradient: the
  // input needs none): 156 sums of 784 terms, too few to fill the block, so
  // in two passes. First a thread per filter row (k, r) and band of 4 rows
  // (rows b, b + 7, b + 14, b + 21: a warp's bands start in different
  // banks) sums its 5 taps over the band, a window of 5 inputs sliding
  // along each row; the r = 0 threads sum the band's d1 for the bias too.
  // The partial sums go to `rows`: the arrays from p1 to w2, all read for
  // the last time before the barrier above. Then each sum adds its 7 bands
  // in order.
  constexpr int kBands = 7;
  static_assert(kSmB2 - kSmP1 >= (kW1 + kC1) * kBands, "conv1's partial sums fit in the arrays p1 .. w2");
  float* rows = p1;                    // (6, 5, 7, 5): (k, r, band, s)
  float* bias_rows = p1 + kW1 * kBands;  // (6, 7): (k, band)
  for (int item = t; item < kC1 * 5 * kBands; item += BLOCK) {
    const int k = item / (5 * kBands), band = item / 5 % kBands, r = item % 5;
    float acc[5] = {}, bias = 0.0f;
    for (int i = 0; i < kH1 / kBands; ++i) {
      const int y = band + kBands * i;
      const float* d_row = d1 + (k * kH1 + y) * kH1;
      const float* x_row = x + (y + r) * kXStride;
      float window[5];
#pragma unroll
      for (int s = 0; s < 4; ++s) window[s] = x_row[s];
      for (int xx = 0; xx < kH1; ++xx) {
        window[4] = x_row[xx + 4];
        const float dv = d_row[xx];
#pragma unroll
        for (int s = 0; s < 5; ++s) acc[s] += dv * window[s];
        bias += dv;
#pragma unroll
        for (int s = 0; s < 4; ++s) window[s] = window[s + 1];
      }
    }
#pragma unroll
    for (int s = 0; s < 5; ++s) rows[((k * 5 + r) * kBands + band) * 5 + s] = acc[s];
    if (r == 0) bias_rows[k * kBands + band] = bias;
  }
  __syncthreads();
  for (int sum = t; sum < kW1 + kC1; sum += BLOCK) {
    float acc = 0.0f;
    if (sum < kW1) {
      const int k = sum / kTaps, r = sum % kTaps / 5, s = sum % 5;
      for (int band = 0; band < kBands; ++band) acc += rows[((k * 5 + r) * kBands + band) * 5 + s];
    } else {
      for (int band = 0; band < kBands; ++band) acc += bias_rows[(sum - kW1) * kBands + band];
    }
    mine[kSavedW1 + sum] = acc;  // kSavedB1 follows kSavedW1's 150
  }
}

// Each parameter's gradient: the images' shares added in image order.
// saved: (N, lenet5::kSaved) from lenet5_image_per_block. A conv weight or
// bias: Σ_n saved[n][its slot]; a fully connected weight W[o][i]:
// Σ_n d[n][o]·in[n][i]; its bias: Σ_n d[n][o].
// The N terms of a sum are loaded several at a time (sum_in_order): one
// after another, each would wait a latency of L2.
// Launch: block (BLOCK); any grid: the loop covers every parameter.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) lenet5_sum_gradients(int N, int C, const float* __restrict__ saved, Lenet5Grads g) {
  using namespace lenet5;
  using warpnet::sum_in_order;
  warpnet::allow_dependent_grids();  // a programmatic dependent launch may start the next kernel now
  warpnet::wait_for_prior_grids();   // and this one's loads wait for the last kernel's results
  const auto slot = [&](int n, int at) { return saved[size_t(n) * kSaved + at]; };
  const int total = kW1 + kC1 + kW2 + kC2 + kF1 * kF1In + kF1 + kF2 * kF1 + kF2 + C * kF2 + C;
  for (int p = blockIdx.x * BLOCK + threadIdx.x; p < total; p += gridDim.x * BLOCK) {
    int at = p;
    // A conv parameter: one slot per image. The four conv tensors sit in
    // the saved row in their order, so `at` is also the slot.
    if (at < kSavedIn1) {
      const float acc = sum_in_order(0.0f, N, [&](int n) { return slot(n, at); });
      float* out = at < kSavedB1 ? g.w1 + at : at < kSavedW2 ? g.b1 + (at - kSavedB1)
                   : at < kSavedB2 ? g.w2 + (at - kSavedW2) : g.b2 + (at - kSavedB2);
      *out = acc;
      continue;
    }
    at -= kSavedIn1;
    // A fully connected layer (out, in): its weights, then its biases. The
    // first layer whose range holds `at` writes it and sets `at` to -1.
    const auto dense = [&](int out, int in, int in_slot, int d_slot, float* w, float* b) {
      if (at < 0) return;
      if (at < out * in) {
        const int o = at / in, i = at % in;
        w[at] = sum_in_order(0.0f, N, [&](int n) { return slot(n, d_slot + o) * slot(n, in_slot + i); });
        at = -1;
        return;
      }
      at -= out * in;
      if (at < out) {
        b[at] = sum_in_order(0.0f, N, [&](int n) { return slot(n, d_slot + at); });
        at = -1;
        return;
      }
      at -= out;
    };
    dense(kF1, kF1In, kSavedIn1, kSavedD1, g.w3, g.b3);
    dense(kF2, kF1, kSavedIn2, kSavedD2, g.w4, g.b4);
    dense(C, kF2, kSavedIn3, kSavedD3, g.w5, g.b5);
  }
}
