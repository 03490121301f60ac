// dgrad v6's candidates — its two Winograd GEMM tiles where they apply,
// then dgrad v5's — as a registration launches them, for the versions that
// offer them (conv2d_dgrad/06, and 07 after its fused kernel): the launch
// shape of candidate i, its launch, its global bytes. Included after
// kernels/conv/dgrad_06_winograd.cu; an anonymous namespace as the other
// registration headers (../copy.hpp).
#pragma once
#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/dgrad_pipelined_tiles.hpp"
#include "device/kernels/conv/winograd_tiles.hpp"

namespace warpnet::device::conv {
namespace {

inline Launch dgrad_v06_shape(int candidate, const Sizes& s) {
  using conv_dgrad_v06::kWinograd;
  if (candidate >= kWinograd) return dgrad_v05_shape(candidate - kWinograd, s);
  return winograd_shape(candidate, conv_dgrad_v06::forward_view(shape_of(s)));
}

// Candidate i launched; the caller checks the launches' errors. `id` names
// the version in the errors for sizes its kernels cannot take.
inline void launch_dgrad_v06(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  using conv_dgrad_v06::kWinograd;
  if (candidate >= kWinograd) return launch_dgrad_v05(id, candidate - kWinograd, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_dgrad_v06::applies(g), id,
           ": Winograd F(2x2,3x3) takes 3x3 filters at stride 1, dilation 1 and padding <= 2, got ",
           describe_sizes(op("conv2d_dgrad"), s));
  // Buffers {dy, w, dx}: dy is the forward view's x, dx its y.
  launch_winograd_tile<true>(id, candidate, conv_dgrad_v06::forward_view(g), static_cast<const float*>(b[0]),
                            static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
}

inline double dgrad_v06_bytes(int candidate, const Sizes& s) {
  using conv_dgrad_v06::kWinograd;
  if (candidate >= kWinograd) return dgrad_v05_bytes(candidate - kWinograd, s);
  return winograd_bytes(candidate, conv_dgrad_v06::forward_view(shape_of(s)));
}

}  // namespace
}  // namespace warpnet::device::conv
