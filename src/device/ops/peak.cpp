// The peak op: the ceilings of the instructions a GEMM's inner loop is made
// of (kernels/peak/peak_tile.hpp). Sizes {blocks, repeats}; inputs A (128,16)
// and B (16,256); output C (blocks, 128, 256), every block's C = repeats ·
// (A @ B). Each version keeps the operands on chip and issues one kind of
// instruction over and over: FFMA (v1, v2), mma.sync (v3-v5), wgmma (v6). Its
// TFLOP/s against the datasheet's peak and against the matmul ladder's
// vendor rates in the same run is the point; the output only shows that the
// instructions did the work they were timed for.
#include <vector>

#include "device/registry.hpp"

namespace warpnet::device {
namespace {

constexpr int64_t kTileM = 128, kTileN = 256, kTileK = 16;
// Inputs are small integers, so every partial sum of every version is an
// integer below 2^24, exact in fp32 and in bf16's inputs: |A @ B| ≤ 16·2·2 =
// 64 per repeat, and 64 · 2^18 = 2^24.
constexpr int64_t kMaxRepeats = int64_t(1) << 18;

// Integers in [-2, 2]: exact in every input format (fp32, bf16).
Tensor small_integers(Shape shape, Rng& rng) {
  Tensor t = Tensor::empty(std::move(shape));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = float(int64_t(rng.below(5)) - 2);
  return t;
}

void check_sizes(const Op& op, const Sizes& s) {
  require_at_least(op, s, {1, 1});
  WN_CHECK(s[1] <= kMaxRepeats, op.name, ": repeats = ", s[1], " at ", describe_sizes(op, s), " is more than ",
           kMaxRepeats, ", past which the sums of its integer inputs are no longer exact in fp32");
  require_indexable(op, s, Shape{s[0], kTileM, kTileN}, "the output");
}

std::vector<Tensor> reference(const Sizes& s, const std::vector<Tensor>& in) {
  const Tensor a = in[0].to(DType::f64), b = in[1].to(DType::f64);
  const double *pa = a.data<double>(), *pb = b.data<double>();
  std::vector<double> tile(size_t(kTileM * kTileN), 0.0);
  for (int64_t m = 0; m < kTileM; ++m)
    for (int64_t k = 0; k < kTileK; ++k)
      for (int64_t n = 0; n < kTileN; ++n) tile[m * kTileN + n] += pa[m * kTileK + k] * pb[k * kTileN + n];
  Tensor c = Tensor::empty({s[0], kTileM, kTileN}, DType::f64);
  double* pc = c.data<double>();
  for (int64_t block = 0; block < s[0]; ++block)
    for (int64_t i = 0; i < kTileM * kTileN; ++i) pc[block * kTileM * kTileN + i] = double(s[1]) * tile[i];
  return {c};
}

const Registration peak{Op{
    .name = "peak",
    .size_names = {"blocks", "repeats"},
    // One block, and a few blocks of a few repeats each: enough to see every
    // accumulator's layout and the loop's count on the emulator; 11 repeats
    // take v7's and v8's ring of four 2-repeat stages round once and a half,
    // so v8 reads stages it refilled.
    .test_sizes = {{1, 1}, {2, 3}, {3, 2}, {1, 11}},
    .defaults = {1056, 4096},
    .make_inputs = [](const Sizes&, Rng& rng) {
      return std::vector<Tensor>{small_integers({kTileM, kTileK}, rng), small_integers({kTileK, kTileN}, rng)};
    },
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0], kTileM, kTileN}}; },
    .reference = reference,
    // Integer sums below 2^24: exact.
    .tolerance = [](const Sizes& s, const std::vector<Tensor>&) {
      return std::vector<Tensor>{Tensor::zeros({s[0], kTileM, kTileN}, DType::f64)};
    },
    // 1056 blocks = 8 per SM of an H100/H200 (one resident at a time: a
    // block holds most of an SM's registers), 4096 repeats: 4.5 TFLOP, a
    // few ms on the tensor cores and about 0.1 s on the FP32 pipes, well past
    // a launch's overhead.
    .bench_sizes = {{1056, 4096}},
    .reduction_length = [](const Sizes& s) { return s[1] * kTileK; },
    .check_sizes = check_sizes,
}};

}  // namespace
}  // namespace warpnet::device
