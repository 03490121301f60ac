// Lesson 05 — convolution: what it computes, what it costs, how a GPU kernel
// climbs from the definition's loops to implicit GEMM, and its backward pass.
//
// 1. Shapes: the output-size formula, checked against cpu::conv_out_size and
//    the shape cpu::conv2d returns, at LeNet-5, mini-AlexNet, AlexNet (2012)
//    and ResNet layers, strided and dilated ones among them.
// 2. FLOPs as a GEMM: 2·N·K·P·Q·C·R·S is the count of the (K)×(C·R·S)×(N·P·Q)
//    product im2col builds; how much of it multiplies padding zeros; and the
//    im2col buffer's size, measured by the memory tracker on cpu::conv2d.
// 3. The GPU ladder: every conv kernel version of the registry traced on the
//    emulator at one layer (ladder.cpp), and the GPU figures recorded in
//    bench/results/ (none yet for conv).
// 4. The backward pass as two more convolutions: dx is a convolution of dy
//    (spread out by the stride) with the flipped filter, dw a correlation of x
//    with dy; both checked against cpu::conv2d_backward.
// 5. The CPU: warpnet's conv2d (im2col + Eigen GEMM) timed against the direct
//    seven loops (cpu::conv2d_direct) at a LeNet-5 and a mini-AlexNet layer.
// The program exits non-zero when a claim the chapter makes does not hold.
//
// Run: build/bin/lesson05 [--quick | --markdown]
//   --quick     smaller batches for the CPU timings (what the CTest test runs)
//   --markdown  only part 3's tables and the GPU records, as the README holds
//               them (scripts/lesson-tables.sh pastes them there)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/cost.hpp"
#include "core/memory.hpp"
#include "core/text.hpp"
#include "core/timer.hpp"
#include "cpu/ops.hpp"
#include "device/registry.hpp"
#include "lessons/05-convolution/ladder.hpp"
#include "lessons/lesson_args.hpp"

using namespace warpnet;
using lesson05::Claims;

namespace {

// A layer as the registry's conv ops size it: {N, C, H, W, K, R, S, stride, pad, dilation}.
struct Layer {
  std::string name;
  device::Sizes s;
  int64_t n() const { return s[0]; }
  int64_t c() const { return s[1]; }
  int64_t h() const { return s[2]; }
  int64_t w() const { return s[3]; }
  int64_t k() const { return s[4]; }
  int64_t r() const { return s[5]; }
  int64_t taps_s() const { return s[6]; }  // S, the filter's width (`s` is taken by the sizes)
  cpu::Conv2dParams params() const { return {int(s[7]), int(s[8]), int(s[9])}; }
  int64_t p() const { return cpu::conv_out_size(h(), r(), params()); }
  int64_t q() const { return cpu::conv_out_size(w(), taps_s(), params()); }
  int64_t crs() const { return c() * r() * taps_s(); }
  Layer with_batch(int64_t batch) const {
    Layer l = *this;
    l.s[0] = batch;
    return l;
  }
};

// The networks warpnet trains (src/nn/models.cpp), at batch 64.
const Layer kLenetConv1{"LeNet-5 conv1", {64, 1, 28, 28, 6, 5, 5, 1, 2, 1}};
const Layer kLenetConv2{"LeNet-5 conv2", {64, 6, 14, 14, 16, 5, 5, 1, 0, 1}};
const Layer kAlexConv1{"mini-AlexNet conv1", {64, 1, 28, 28, 32, 3, 3, 1, 1, 1}};
const Layer kAlexConv2{"mini-AlexNet conv2", {64, 32, 14, 14, 64, 3, 3, 1, 1, 1}};
const Layer kAlexConv3{"mini-AlexNet conv3", {64, 64, 7, 7, 128, 3, 3, 1, 1, 1}};
const Layer kAlexConv4{"mini-AlexNet conv4", {64, 128, 7, 7, 128, 3, 3, 1, 1, 1}};
const Layer kAlexConv5{"mini-AlexNet conv5", {64, 128, 7, 7, 64, 3, 3, 1, 1, 1}};

// The layer part 3 traces: mini-AlexNet's conv2 at batch 2. Small enough for
// the emulator to trace every version in seconds; big enough that the tiles
// of v2 and v4 are mostly full (14x14 outputs, 64 channels out, 288 taps).
const Layer kTraced = kAlexConv2.with_batch(2);

// ---- 1. shapes --------------------------------------------------------------

// The definition's formula: the filter spans dil·(R−1)+1 input pixels, and the
// window moves by `stride` over the padded input.
int64_t out_size(int64_t in, int64_t filter, int64_t stride, int64_t pad, int64_t dil) {
  return (in + 2 * pad - dil * (filter - 1) - 1) / stride + 1;
}

void shapes(Claims& claims) {
  std::printf(
      "1. What a convolution computes\n"
      "  y[n,k,p,q] = sum over c,r,s of x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil] · w[k,c,r,s]\n"
      "  (zero outside the image: the padding)\n"
      "  P = floor((H + 2·pad − dil·(R−1) − 1) / stride) + 1, Q alike with W and S\n\n");
  const std::vector<Layer> layers = {
      kLenetConv1,
      kLenetConv2,
      kAlexConv2,
      {"AlexNet (2012) conv1, 11×11 stride 4", {128, 3, 227, 227, 96, 11, 11, 4, 0, 1}},
      {"ResNet 3×3, stride 2 (downsampling)", {64, 64, 56, 56, 128, 3, 3, 2, 1, 1}},
      {"3×3, dilation 2 (atrous)", {64, 64, 56, 56, 64, 3, 3, 1, 2, 2}},
  };
  std::printf("  %s %-16s %-16s %6s %4s %4s  %s\n", pad_right("layer", 38).c_str(), "x (N,C,H,W)", "w (K,C,R,S)",
              "stride", "pad", "dil", "y (N,K,P,Q)");
  bool ok = true;
  for (const Layer& l : layers) {
    const int64_t p = out_size(l.h(), l.r(), l.s[7], l.s[8], l.s[9]),
                  q = out_size(l.w(), l.taps_s(), l.s[7], l.s[8], l.s[9]);
    // The shape cpu::conv2d gives one image (it does not depend on N).
    const Shape y = cpu::conv2d(Tensor::zeros({1, l.c(), l.h(), l.w()}),
                                Tensor::zeros({l.k(), l.c(), l.r(), l.taps_s()}), Tensor(), l.params())
                        .shape();
    ok = ok && p == l.p() && q == l.q() && y == Shape{1, l.k(), p, q};
    std::printf("  %s %-16s %-16s %6lld %4lld %4lld  %s\n", pad_right(l.name, 38).c_str(),
                Shape{l.n(), l.c(), l.h(), l.w()}.str().c_str(), Shape{l.k(), l.c(), l.r(), l.taps_s()}.str().c_str(),
                (long long)l.s[7], (long long)l.s[8], (long long)l.s[9], Shape{l.n(), l.k(), p, q}.str().c_str());
  }
  std::printf("  check: the formula, cpu::conv_out_size and cpu::conv2d's output agree: %s\n\n", ok ? "ok" : "FAIL");
  claims.expect(ok, "the output-size formula gives the shape cpu::conv2d returns");
}

// ---- 2. FLOPs as a GEMM, and the im2col buffer ------------------------------------

// Multiply-adds whose input pixel is inside the image: per output row p, the
// filter rows r that land inside, times the same along q. The rest multiply
// padding zeros, which im2col + GEMM (and the dense FLOP count) include.
double in_image_macs(const Layer& l) {
  const auto taps_inside = [&](int64_t in, int64_t out, int64_t filter) {
    int64_t n = 0;
    for (int64_t o = 0; o < out; ++o)
      for (int64_t f = 0; f < filter; ++f) {
        const int64_t i = o * l.s[7] - l.s[8] + f * l.s[9];
        n += i >= 0 && i < in;
      }
    return double(n);
  };
  return double(l.n()) * l.k() * l.c() * taps_inside(l.h(), l.p(), l.r()) * taps_inside(l.w(), l.q(), l.taps_s());
}

// Workspace bytes the memory tracker saw cpu::conv2d allocate at once.
int64_t measured_workspace(const Layer& l) {
  Rng rng(7);
  Tensor x = Tensor::empty({l.n(), l.c(), l.h(), l.w()}), w = Tensor::empty({l.k(), l.c(), l.r(), l.taps_s()});
  fill_uniform(x, rng, -1, 1);
  fill_uniform(w, rng, -1, 1);
  MemoryTracker& tracker = MemoryTracker::instance();
  tracker.reset_peaks();
  const int64_t before = tracker.tag(MemTag::workspace).current;
  cpu::conv2d(x, w, Tensor(), l.params());
  return tracker.tag(MemTag::workspace).peak - before;
}

void flops_and_im2col(Claims& claims) {
  std::printf(
      "2. FLOPs as a GEMM, and what im2col costs in memory\n"
      "  im2col copies each output pixel's C·R·S inputs into a column: y (K, N·P·Q) = W (K, C·R·S) · col (C·R·S, "
      "N·P·Q)\n"
      "  FLOPs = 2·N·K·P·Q·C·R·S = the GEMM's 2·M·N·K with M = K, N = N·P·Q, K = C·R·S (batch 64 throughout)\n\n");
  const std::vector<Layer> layers = {kLenetConv1, kLenetConv2, kAlexConv1, kAlexConv2,
                                     kAlexConv3,  kAlexConv4,  kAlexConv5};
  std::printf("  %s %22s %10s %10s %12s\n", pad_right("layer", 20).c_str(), "GEMM (K)×(C·R·S)×(N·P·Q)", "MFLOP",
              "GEMM MFLOP", "in the image");
  bool counts_ok = true;
  for (const Layer& l : layers) {
    const OpCost conv = conv2d_cost(l.n(), l.c(), l.h(), l.w(), l.k(), l.r(), l.taps_s(), l.p(), l.q());
    const OpCost gemm = matmul_cost(l.k(), l.n() * l.p() * l.q(), l.crs());
    counts_ok = counts_ok && conv.flops == gemm.flops && 2 * in_image_macs(l) <= conv.flops;
    const std::string gemm_shape = cat("(", l.k(), ")×(", l.crs(), ")×(", l.n() * l.p() * l.q(), ")");
    std::printf("  %s %22s %10.1f %10.1f %11.1f%%\n", pad_right(l.name, 20).c_str(), gemm_shape.c_str(),
                conv.flops / 1e6, gemm.flops / 1e6, 100 * 2 * in_image_macs(l) / conv.flops);
  }
  // Every conv2d version in the registry counts the same FLOPs: the dense count.
  const Layer& a = kAlexConv2;
  const double dense = conv2d_cost(a.n(), a.c(), a.h(), a.w(), a.k(), a.r(), a.taps_s(), a.p(), a.q()).flops;
  for (const device::Kernel* k : device::kernels(device::Copy::traced))
    if (k->op == "conv2d") counts_ok = counts_ok && k->flops(a.s) == dense;
  std::printf("  check: conv FLOPs = GEMM FLOPs = every registered conv2d version's count: %s\n",
              counts_ok ? "ok" : "FAIL");
  claims.expect(counts_ok, "a convolution's FLOPs equal its im2col GEMM's, and the registry counts the same");

  std::printf(
      "\n  The column matrix of one image holds C·R·S × P·Q floats: each input pixel copied about R·S/stride² "
      "times.\n"
      "  cpu::conv2d unfolds one image at a time per thread (%d threads here); the tracker measured its "
      "workspace:\n\n",
      cpu::num_threads());
  std::printf("  %s %10s %12s %7s %14s %14s %8s\n", pad_right("layer", 20).c_str(), "x / image", "col / image",
              "col / x", "col, batch 64", "measured", "= cols");
  bool workspace_ok = true;
  for (const Layer& l : layers) {
    const int64_t x_bytes = 4 * l.c() * l.h() * l.w(), col = 4 * l.crs() * l.p() * l.q();
    const int64_t measured = measured_workspace(l);
    // A whole number of columns: one per thread that took part (1 for a small conv).
    const int64_t cols = col ? measured / col : 0;
    workspace_ok =
        workspace_ok && measured == cols * col && cols >= 1 && cols <= std::min<int64_t>(cpu::num_threads(), l.n());
    std::printf("  %s %10s %12s %6.1f× %14s %14s %8lld\n", pad_right(l.name, 20).c_str(), format_bytes(x_bytes).c_str(),
                format_bytes(col).c_str(), double(col) / x_bytes, format_bytes(col * l.n()).c_str(),
                format_bytes(measured).c_str(), (long long)cols);
  }
  std::printf("  check: the measured workspace is one column matrix per thread at work: %s\n\n",
              workspace_ok ? "ok" : "FAIL");
  claims.expect(workspace_ok, "cpu::conv2d's workspace is one image's column matrix per thread");
}

// ---- 4. the backward pass as convolutions ---------------------------------------

Tensor uniform(const Shape& shape, Rng& rng) {
  Tensor t = Tensor::empty(shape, DType::f64);
  fill_uniform(t, rng, -1, 1);
  return t;
}

// The largest |a − b| over the largest |b|: both are f64 sums of at most a few
// hundred terms of size ≤ 1, so they agree to about 1e-14 unless the formula
// is wrong, when they differ by O(1).
double relative_difference(const Tensor& a, const Tensor& b) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, std::abs(a.item(i) - b.item(i)));
    scale = std::max(scale, std::abs(b.item(i)));
  }
  return scale ? diff / scale : diff;
}

// dx as a forward convolution: spread dy out by the stride (stride − 1 zeros
// between its pixels), pad it by dil·(R−1) − pad (plus what the stride's
// rounding cut off at the bottom and right), and correlate it with the filter
// flipped in r and s and with C and K swapped, at stride 1.
Tensor dgrad_as_convolution(const Layer& l, const Tensor& dy, const Tensor& w) {
  const int64_t st = l.s[7], pad = l.s[8], dil = l.s[9], P = l.p(), Q = l.q();
  const int64_t top = dil * (l.r() - 1) - pad, left = dil * (l.taps_s() - 1) - pad;
  WN_CHECK(top >= 0 && left >= 0, "this construction needs pad <= dil·(R−1)");
  // The spread-out dy's extent for a stride-1 correlation to give H (and W) back.
  const int64_t rows = l.h() + dil * (l.r() - 1), cols = l.w() + dil * (l.taps_s() - 1);
  Tensor z = Tensor::zeros({l.n(), l.k(), rows, cols}, DType::f64);
  for (int64_t nk = 0; nk < l.n() * l.k(); ++nk)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t q = 0; q < Q; ++q)
        z.set((nk * rows + top + p * st) * cols + left + q * st, dy.item((nk * P + p) * Q + q));
  Tensor flipped = Tensor::empty({l.c(), l.k(), l.r(), l.taps_s()}, DType::f64);  // (C,K,R,S)
  for (int64_t k = 0; k < l.k(); ++k)
    for (int64_t c = 0; c < l.c(); ++c)
      for (int64_t r = 0; r < l.r(); ++r)
        for (int64_t s = 0; s < l.taps_s(); ++s)
          flipped.set(((c * l.k() + k) * l.r() + r) * l.taps_s() + s,
                      w.item(((k * l.c() + c) * l.r() + l.r() - 1 - r) * l.taps_s() + l.taps_s() - 1 - s));
  return cpu::conv2d(z, flipped, Tensor(), {1, 0, int(dil)});
}

// dw as a forward convolution: the images' channels become the batch
// (x as (C, N, H, W)), dy's channels the filters (dy as (K, N, P, Q)), and the
// stride and dilation swap places. The result is (C, K, R', S') with R' ≥ R
// when the stride's rounding left input rows unused; dw is its first R×S.
Tensor wgrad_as_convolution(const Layer& l, const Tensor& x, const Tensor& dy) {
  const Tensor xt = x.transpose(0, 1).contiguous(), dyt = dy.transpose(0, 1).contiguous();
  const Tensor r = cpu::conv2d(xt, dyt, Tensor(), {int(l.s[9]), int(l.s[8]), int(l.s[7])});  // (C,K,R',S')
  Tensor dw = Tensor::empty({l.k(), l.c(), l.r(), l.taps_s()}, DType::f64);
  for (int64_t k = 0; k < l.k(); ++k)
    for (int64_t c = 0; c < l.c(); ++c)
      for (int64_t i = 0; i < l.r(); ++i)
        for (int64_t j = 0; j < l.taps_s(); ++j)
          dw.set(((k * l.c() + c) * l.r() + i) * l.taps_s() + j,
                 r.item(((c * l.k() + k) * r.dim(2) + i) * r.dim(3) + j));
  return dw;
}

void backward(Claims& claims) {
  std::printf(
      "4. The backward pass is two more convolutions\n"
      "  dx[n,c,h,w] = sum over k,r,s of dy[n,k,p,q]·w[k,c,r,s] where h = p·stride − pad + r·dil (w alike):\n"
      "    dy spread out by the stride, padded by dil·(R−1) − pad (needs pad <= dil·(R−1); plus the rows and "
      "columns\n    the stride's rounding left unread, at the bottom and right), correlated with w flipped "
      "(r → R−1−r,\n    s → S−1−s), C and K swapped\n"
      "  dw[k,c,r,s] = sum over n,p,q of x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil]·dy[n,k,p,q]:\n"
      "    x (channels as the batch) correlated with dy (as filters), stride and dilation swapped; its first "
      "R×S taps\n"
      "  Both against cpu::conv2d_backward (im2col, GEMMs, col2im), f64; the largest difference over the largest "
      "value:\n\n");
  const std::vector<Layer> layers = {
      {"3×3, pad 1", {2, 3, 7, 9, 4, 3, 3, 1, 1, 1}},
      {"3×3, stride 2, pad 1", {2, 3, 9, 8, 4, 3, 3, 2, 1, 1}},
      {"3×3, stride 2, pad 2, dilation 2", {1, 2, 11, 10, 3, 3, 3, 2, 2, 2}},
      {"5×5, pad 2 (LeNet conv1)", {2, 2, 12, 12, 3, 5, 5, 1, 2, 1}},
  };
  Rng rng(11);
  for (const Layer& l : layers) {
    const Tensor x = uniform({l.n(), l.c(), l.h(), l.w()}, rng), w = uniform({l.k(), l.c(), l.r(), l.taps_s()}, rng);
    const Tensor dy = uniform({l.n(), l.k(), l.p(), l.q()}, rng);
    const cpu::Conv2dGrads g = cpu::conv2d_backward(x, w, dy, l.params(), false, true);
    const double dx = relative_difference(dgrad_as_convolution(l, dy, w), g.dx);
    const double dw = relative_difference(wgrad_as_convolution(l, x, dy), g.dw);
    std::printf("  %s dx %.1e   dw %.1e\n", pad_right(l.name, 34).c_str(), dx, dw);
    claims.expect(dx < 1e-12, l.name + ": dx is the flipped-filter convolution of the spread-out dy");
    claims.expect(dw < 1e-12, l.name + ": dw is the correlation of x with dy");
  }
  std::printf(
      "  The gradients themselves are checked by central differences in tests/cpu/test_conv2d.cpp\n"
      "  (\"conv2d_backward matches central differences for dx, dw and db\").\n\n");
}

// ---- 5. the CPU: im2col + GEMM against the direct loops ---------------------------

// The fastest of at least 3 calls after a warm-up, calling again while under
// `budget_s` seconds have passed (at most 20): other work on the machine only
// ever makes a call slower, so the fastest is the least disturbed.
template <class Fn>
double best_ms(double budget_s, Fn&& fn) {
  fn();  // warm-up: the output's pages, the workspace
  double best = 1e30;
  const Timer total;
  for (int i = 0; i < 20 && (i < 3 || total.seconds() < budget_s); ++i) {
    Timer timer;
    fn();
    best = std::min(best, timer.milliseconds());
  }
  return best;
}

void cpu_timing(bool quick, Claims& claims) {
  const int64_t batch = quick ? 8 : 64;
  const double budget_s = quick ? 0.2 : 2.0;
  // One thread: the ratio then compares the two algorithms, and a call does
  // not wait at a barrier for a second thread that another process holds up.
  const int threads = cpu::num_threads();
  cpu::set_num_threads(1);
  std::printf(
      "5. The CPU: im2col + Eigen GEMM (cpu::conv2d) against the direct loops (cpu::conv2d_direct)\n"
      "  f32 in and out; the direct loops sum in double. Batch %lld, 1 thread, the fastest of 3 to 20 calls\n"
      "  after a warm-up; GFLOP/s from the dense count 2·N·K·P·Q·C·R·S:\n\n",
      (long long)batch);
  std::printf("  %s %12s %10s %12s %10s %9s\n", pad_right("layer", 30).c_str(), "im2col+GEMM", "GFLOP/s", "direct",
              "GFLOP/s", "speed-up");
  for (const Layer& full : {kLenetConv2, kAlexConv2}) {
    const Layer l = full.with_batch(batch);
    Rng rng(13);
    Tensor x = Tensor::empty({l.n(), l.c(), l.h(), l.w()}), w = Tensor::empty({l.k(), l.c(), l.r(), l.taps_s()});
    fill_uniform(x, rng, -1, 1);
    fill_uniform(w, rng, -1, 1);
    Tensor fast, direct;
    const double gemm_ms = best_ms(budget_s, [&] { fast = cpu::conv2d(x, w, Tensor(), l.params()); });
    const double direct_ms = best_ms(budget_s, [&] { direct = cpu::conv2d_direct(x, w, Tensor(), l.params()); });
    // The two agree within the conv2d op's bound for an fp32 sum of C·R·S products.
    const Tensor bound = device::op("conv2d").tolerance(l.s, {x, w})[0];
    bool agree = true;
    for (int64_t i = 0; i < fast.numel(); ++i)
      agree = agree && std::abs(fast.item(i) - direct.item(i)) <= bound.item(i);
    const double flops = conv2d_cost(l.n(), l.c(), l.h(), l.w(), l.k(), l.r(), l.taps_s(), l.p(), l.q()).flops;
    std::printf("  %s %9.3f ms %10.1f %9.3f ms %10.1f %8.1f×\n", pad_right(cat(l.name, ", batch ", batch), 30).c_str(),
                gemm_ms, flops / gemm_ms / 1e6, direct_ms, flops / direct_ms / 1e6, direct_ms / gemm_ms);
    claims.expect(agree, l.name + ": im2col + GEMM and the direct loops agree within the fp32 bound");
    // A timing is reported, not asserted: on a loaded machine either may lose.
    if (gemm_ms >= direct_ms)
      std::printf("  (the direct loops won this run: other work on the machine can turn a timing around; "
                  "run it again on an idle one)\n");
  }
  cpu::set_num_threads(threads);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<lesson::Mode> mode = lesson::parse_mode(argc, argv, "part 3's tables only");
  if (!mode) return 2;
  const bool markdown = mode->markdown;
  Claims claims;
  try {
    if (markdown) {
      lesson05::trace_ladder(kTraced.s, true, claims);
      lesson05::print_gpu_records();
    } else {
      std::printf("Lesson 05 — Convolution\n=======================\n\n");
      shapes(claims);
      flops_and_im2col(claims);
      std::printf("3. The GPU ladder, traced on the emulator at %s (%s)\n", kTraced.name.c_str(),
                  device::describe_sizes(device::op("conv2d"), kTraced.s).c_str());
      lesson05::trace_ladder(kTraced.s, false, claims);
      lesson05::print_gpu_records();
      std::printf("\n");
      backward(claims);
      cpu_timing(mode->quick, claims);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lesson05: %s\n", e.what());
    return 1;
  }
  if (claims.failed)
    std::fprintf(stderr, "\n%d claim(s) of the chapter did not hold\n", claims.failed);
  else if (!markdown)
    std::printf("All checks passed.\n");
  return claims.failed ? 1 : 0;
}
