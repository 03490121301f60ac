// dgrad v3's GEMM tiles as a registration launches them, for the versions
// that offer them (conv2d_dgrad/03, and 04 beside its direct kernel): the
// launch shape of candidate i, its launch, its global bytes, and what a tuner
// on a GPU checks a winner against. Included after
// kernels/conv/dgrad_03_autotuned.cu; an anonymous namespace as the other
// registration headers (../copy.hpp).
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "device/kernels/conv/conv_registration.hpp"

namespace warpnet::device::conv {
namespace {

// A tile over dX (N·H·W, C): BM input pixels x BN input channels per block.
inline Launch dgrad_tile_shape(int candidate, const Sizes& s) {
  const ConvShape g = shape_of(s);
  return conv_dgrad_v03::with_candidate(candidate, [&]<class T>() {
    return Launch{dim3(ceil_div(g.N * g.H * g.W, T::BM), ceil_div(g.C, T::BN)), dim3(T::threads), 0};
  });
}

// Candidate i's kernel (the tap table's at stride 1, dgrad v2's otherwise),
// launched; the caller checks the launch's error. `id` names the version in
// the error for sizes the tap table cannot hold.
inline void launch_dgrad_tile(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  // The tap table's 16-bit displacements and its "no tap" mark (dgrad v3's preconditions).
  WN_CHECK(g.stride != 1 || (g.H + g.pad <= conv_dgrad_v03::kNoTap && g.W + g.pad <= conv_dgrad_v03::kNoTap &&
                             g.dil * (g.R - 1) < conv_dgrad_v03::kNoTap && g.dil * (g.S - 1) < conv_dgrad_v03::kNoTap),
           id, ": H + pad, W + pad and the filter's span must be below ", conv_dgrad_v03::kNoTap);
  conv_dgrad_v03::with_candidate(candidate, [&]<class T>() {
    launch_kernel(T::kernel(g), l.grid, l.block, l.dynamic_shared, g, static_cast<const float*>(b[0]),
                  static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  });
}

// dgrad v2's formula at candidate i's tile (the tables are built from the
// sizes alone: no global reads): the virtual A (N·H·W, K·R·S) read once per
// column of tiles, w once per row of tiles, dx written once.
inline double dgrad_tile_bytes(int candidate, const Sizes& s) {
  const ConvShape g = shape_of(s);
  return conv_dgrad_v03::with_candidate(candidate, [&]<class T>() {
    const double M = double(g.N) * g.H * g.W, N = g.C, K = double(g.K) * g.R * g.S;
    return 4.0 * (M * K * ceil_div(g.C, T::BN) + K * N * ceil_div(g.N * g.H * g.W, T::BM) + M * N);
  });
}

}  // namespace
}  // namespace warpnet::device::conv

#if defined(__CUDACC__)
#include "device/kernels/conv/conv_tune.hpp"

namespace warpnet::device::conv {
namespace {

// On the current GPU: times every candidate that applies on `given`
// (launch(i, sizes, buffers) launches candidate i) with CUDA events, checks
// the fastest one's output against a double-precision dgrad by the
// definition, remembers it in `tuned`, and says so (conv_tune.hpp).
template <class LaunchCandidate>
std::string tune_dgrad(const char* id, const Sizes& given, TunedChoices& tuned, int candidates,
                       const char* (*candidate_name)(int), LaunchCandidate launch,
                       const std::function<bool(int)>& applies = {}) {
  return tune_conv(
      id, "conv2d_dgrad", given, tuned, candidates, candidate_name,
      [](const ConvShape& g) {
        return ConvTuneBuffers{size_t(g.N) * g.K * g.P * g.Q, size_t(g.K) * g.crs(), size_t(g.N) * g.C * g.H * g.W,
                               double(g.K) * g.R * g.S};
      },
      launch, "dx",
      [](const ConvShape& g, size_t e) {
        const size_t HW = size_t(g.H) * g.W;
        return std::array{int(e / (size_t(g.C) * HW)), int(e / HW % g.C), int(e % HW / g.W), int(e % g.W)};
      },
      // dx[n,c,h,x] by the definition: a sum of K·R·S products at most (src/device/ops/conv2d.cpp's bound).
      [](const ConvShape& g, const std::vector<float>& dy, const std::vector<float>& w, std::array<int, 4> at) {
        const auto [n, c, h, x] = at;
        gpu_timing::Reference ref;
        for (int k = 0; k < g.K; ++k)
          for (int r = 0; r < g.R; ++r)
            for (int sx = 0; sx < g.S; ++sx) {
              // Output (p, q) read input (h, x) through tap (r, sx) if p·stride = h + pad − r·dil, likewise q.
              const int ph = h + g.pad - r * g.dil, qw = x + g.pad - sx * g.dil;
              if (ph < 0 || qw < 0 || ph % g.stride || qw % g.stride) continue;
              const int p = ph / g.stride, q = qw / g.stride;
              if (p >= g.P || q >= g.Q) continue;
              ref.add(double(dy[((size_t(n) * g.K + k) * g.P + p) * g.Q + q]) *
                      double(w[((size_t(k) * g.C + c) * g.R + r) * g.S + sx]));
            }
        return ref;
      },
      applies);
}

}  // namespace
}  // namespace warpnet::device::conv
#endif
