// What the tests of the conv versions' candidates share (conv2d,
// conv2d_dgrad and conv2d_wgrad): a size row as the kernels' ConvShape, and
// each size's inputs, reference and bound made by the registry's op
// (device/ops/conv2d.cpp), as the registry test makes them for the one
// candidate a tuning table picks; here every other candidate is held to the
// same. Include it before the kernel files: their ConvShape is this one's.
#pragma once
#include <doctest/doctest.h>

#include <iterator>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "device/kernels/conv/winograd_bound.hpp"
#include "device/registry.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/traced/candidate_check.hpp"

namespace conv_candidates {

using warpnet::device::conv::WinogradTile;

// {N, C, H, W, K, R, S, stride, pad, dilation} as the kernels see them.
inline ConvShape shape(const int (&s)[10]) {
  return conv_shape(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9]);
}

inline std::vector<double> as_doubles(const warpnet::Tensor& t) {
  std::vector<double> out(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[size_t(i)] = t.item(i);
  return out;
}

// Calls check_all(g, at, a, b, want, bound) for every size row of `op_name`:
// a and b its two inputs on the device (x and w for conv2d, dy and w for
// conv2d_dgrad, x and dy for conv2d_wgrad), uniform in [-1, 1] from
// candidate_check::kSeed; want and bound the op's reference and tolerance,
// flat, in the output's NCHW (or KCRS) order; `at` names the sizes and the
// seed. A Winograd `arithmetic` takes that bound instead (winograd_bound.hpp:
// the forward's, and for dgrad the forward's at the view its candidates run).
template <size_t COUNT, class CheckAll>
void for_each_size(const std::string& op_name, const int (&sizes)[COUNT][10], CheckAll check_all,
                   WinogradTile arithmetic = WinogradTile::none) {
  namespace winograd_bound = warpnet::device::conv::winograd_bound;
  const warpnet::device::Op& op = warpnet::device::op(op_name);
  for (const auto& size : sizes) {
    const warpnet::device::Sizes s(std::begin(size), std::end(size));
    warpnet::Rng rng(candidate_check::kSeed);
    const std::vector<warpnet::Tensor> inputs = op.make_inputs(s, rng);
    REQUIRE(inputs.size() == 2);
    const std::vector<double> want = as_doubles(op.reference(s, inputs).at(0));
    std::vector<double> bound;
    if (arithmetic == WinogradTile::none)
      bound = as_doubles(op.tolerance(s, inputs).at(0));
    else if (op_name == "conv2d")
      bound = as_doubles(winograd_bound::forward_tolerance(s, inputs, arithmetic).at(0));
    else
      bound = as_doubles(winograd_bound::dgrad_tolerance(s, inputs, arithmetic).at(0));
    const auto values = [](const warpnet::Tensor& t) {
      return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
    };
    DeviceBuffer<float> a(values(inputs[0])), b(values(inputs[1]));
    check_all(shape(size), warpnet::cat(" at ", warpnet::device::describe_sizes(op, s), ", seed ", candidate_check::kSeed),
              a.get(), b.get(), want, bound);
  }
}

}  // namespace conv_candidates
