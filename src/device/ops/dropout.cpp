// The dropout op: x (n) and seed (i32 (2): the 64-bit seed, low word
// first) -> y (n), mask (n), two outputs. Sizes {n, p_millionths}
// (dropout_sizes.hpp). Element i is kept iff counter_hash(seed, i) >=
// floor(p·2^32) (kernels/common/counter_hash.hpp); a kept element's mask is
// 1/(1 − p) rounded to fp32, a dropped one's 0, and y = x·mask. The
// backward, dy ⊙ mask, is the elementwise op `mul`.
#include <vector>

#include "cpu/ops.hpp"
#include "device/ops/dropout_sizes.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// Any 64-bit seed: both words reach the hash.
std::vector<Tensor> inputs(const Sizes& s, Rng& rng) {
  check_dropout_sizes(s);
  Tensor x = Tensor::empty({dropout_n(s)});
  fill_uniform(x, rng, -1.0, 1.0);
  return {std::move(x), cpu::dropout_seed_words(rng.next_u64())};
}

// cpu::dropout with the p the sizes encode and the seed of the input, in fp32.
std::vector<Tensor> cpu_fp32(const Sizes& s, const std::vector<Tensor>& in) {
  check_dropout_sizes(s);
  cpu::DropoutResult r = cpu::dropout(in[0], dropout_p(s), cpu::dropout_seed_of(in[1]));
  return {std::move(r.y), std::move(r.mask)};
}

// The reference is the CPU's fp32 result, not one in double: the mask is
// 1/(1 − p) rounded to fp32 (what a kernel stores, and what the CPU's f32
// path multiplies by), and y the fp32 product x·mask, one correctly rounded
// multiply. Both are then the same bits on every conforming machine, and any
// difference is a different keep decision or scale: zero tolerance. (A
// reference in double would hold 1/(1 − p) unrounded, off by up to 2^-24
// relative from every kept element.)
std::vector<Tensor> reference(const Sizes& s, const std::vector<Tensor>& in) {
  std::vector<Tensor> out = cpu_fp32(s, in);
  return {out[0].to(DType::f64), out[1].to(DType::f64)};
}
std::vector<Tensor> exact(const Sizes& s, const std::vector<Tensor>&) {
  return {Tensor::zeros({dropout_n(s)}, DType::f64), Tensor::zeros({dropout_n(s)}, DType::f64)};
}

// n at least 1, and p below 1: at p = 1 every element is dropped and the
// kept ones' scale, 1 / (1 - p), is infinite.
void check_sizes(const Op& op, const Sizes& s) {
  require_at_least(op, s, {1, 0});
  WN_CHECK(s[1] <= 999999, "dropout: p_millionths = ", s[1], " at ", describe_sizes(op, s),
           ": p must be below 1 (at most 999999 millionths)");
  require_indexable(op, s, Shape{s[0]}, "x");
}

const Registration dropout{Op{
    .name = "dropout",
    .size_names = {"n", "p_millionths"},
    // n: 1, 7, 33, 1031, 4099 (not warp or block multiples) and 1081351, past
    // the grid cap (1056 blocks of 256), so the grid-stride loop comes round.
    // p: 0 (all kept), 0.1, 0.5, 0.9, 0.999999. Each check draws its own seed.
    .test_sizes = {{1, 500000}, {7, 500000}, {33, 100000}, {1031, 0}, {1031, 999999}, {4099, 900000}, {1081351, 500000}},
    .defaults = {1 << 20, 500000},
    .make_inputs = inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0]}, Shape{s[0]}}; },
    .reference = reference,
    .tolerance = exact,
    // 64M elements: 256 MiB per tensor, memory-bound.
    .bench_sizes = {{64 << 20, 500000}},
    .reduction_length = [](const Sizes&) { return int64_t(1); },
    .cpu_fp32 = cpu_fp32,
    .check_sizes = check_sizes,
}};

}  // namespace
}  // namespace warpnet::device
