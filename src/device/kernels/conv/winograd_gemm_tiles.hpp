// conv v10's candidates — its two Winograd GEMM tiles where they apply, then
// v9's — as a registration launches them, for the versions that offer them
// (conv2d/10, and 11 after its fused kernel): the launch shape of candidate
// i, its launch, its global bytes. Included after
// kernels/conv/10_winograd.cu; an anonymous namespace as the other
// registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/pipelined_tiles.hpp"
#include "device/kernels/conv/winograd_tiles.hpp"

namespace warpnet::device::conv {
namespace {

inline Launch v10_shape(int candidate, const Sizes& s) {
  using conv_v10::kWinograd;
  return candidate < kWinograd ? winograd_shape(candidate, shape_of(s)) : v09_shape(candidate - kWinograd, s);
}

// Candidate i launched; the caller checks the launches' errors. `id` names
// the version in the errors for sizes its kernels cannot take.
inline void launch_v10(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  using conv_v10::kWinograd;
  if (candidate >= kWinograd) return launch_v09(id, candidate - kWinograd, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(winograd::applies(g), id, ": Winograd F(2x2,3x3) takes 3x3 filters at stride 1 and dilation 1, got ",
           describe_sizes(op("conv2d"), s));
  launch_winograd_tile<false>(id, candidate, g, x_of(b), w_of(b), y_of(b));
}

inline double v10_bytes(int candidate, const Sizes& s) {
  using conv_v10::kWinograd;
  return candidate < kWinograd ? winograd_bytes(candidate, shape_of(s)) : v09_bytes(candidate - kWinograd, s);
}

}  // namespace
}  // namespace warpnet::device::conv
