// conv v7's GEMM tiles as a registration launches them, for the versions
// that offer them (conv2d/07, and 08 beside its direct kernel): the launch
// shape of candidate i, its launch, its global bytes, and a tuner on a GPU
// with what it checks a winner against. Included after
// kernels/conv/07_autotuned.cu; an anonymous namespace as the other
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

inline Launch conv_tile_shape(int candidate, const Sizes& s) {
  return conv_v07::with_candidate(candidate, [&]<class T>() { return gemm_tiles<T::BM, T::BN>(s, T::threads); });
}

// Candidate i's kernel, launched; the caller checks the launch's error. `id`
// names the version in the error for sizes the tap table cannot hold.
inline void launch_conv_tile(const char* id, int candidate, const Sizes& s, const Launch& l, Buffers b) {
  const ConvShape g = shape_of(s);
  // The tap table's 16-bit displacements and its "no tap" mark (v7's preconditions).
  WN_CHECK(g.H + g.pad <= conv_v07::kNoTap && g.W + g.pad <= conv_v07::kNoTap &&
               g.dil * (g.R - 1) < conv_v07::kNoTap && g.dil * (g.S - 1) < conv_v07::kNoTap,
           id, ": H + pad, W + pad and the filter's span must be below ", conv_v07::kNoTap);
  conv_v07::with_candidate(candidate, [&]<class T>() {
    launch_kernel(T::kernel(), l.grid, l.block, l.dynamic_shared, g, x_of(b), w_of(b), y_of(b));
  });
}

// The tile's bytes, v4's formula (the table is built from the sizes alone: no global reads).
inline double conv_tile_bytes(int candidate, const Sizes& s) {
  return conv_v07::with_candidate(candidate, [&]<class T>() { return gemm_tile_bytes<T::BM, T::BN>(s, 4.0); });
}

}  // namespace
}  // namespace warpnet::device::conv

#if defined(__CUDACC__)
#include "device/kernels/conv/conv_tune.hpp"

namespace warpnet::device::conv {
namespace {

// On the current GPU: times every candidate that applies on `given`
// (launch(i, sizes, buffers) launches candidate i) with CUDA events, checks
// the fastest one's output against a double-precision direct convolution,
// remembers it in `tuned`, and says so (conv_tune.hpp).
template <class LaunchCandidate>
std::string tune_conv_forward(const char* id, const Sizes& given, TunedChoices& tuned, int candidates,
                              const char* (*candidate_name)(int), LaunchCandidate launch,
                              const std::function<bool(int)>& applies = {}) {
  return tune_conv(
      id, "conv2d", given, tuned, candidates, candidate_name,
      [](const ConvShape& g) {
        return ConvTuneBuffers{size_t(g.N) * g.C * g.H * g.W, size_t(g.K) * g.crs(), size_t(g.N) * g.K * g.P * g.Q,
                               double(g.crs())};
      },
      launch, "y",
      [](const ConvShape& g, size_t e) {
        const size_t PQ = size_t(g.P) * g.Q;
        return std::array{int(e / (size_t(g.K) * PQ)), int(e / PQ % g.K), int(e % PQ / g.Q), int(e % g.Q)};
      },
      // y[n,k,p,q] by the definition: a sum of C·R·S products (src/device/ops/conv2d.cpp's bound).
      [](const ConvShape& g, const std::vector<float>& x, const std::vector<float>& w, std::array<int, 4> at) {
        const auto [n, k, p, q] = at;
        const int CRS = g.crs();
        gpu_timing::Reference ref;
        for (int crs = 0; crs < CRS; ++crs) {
          const int c = crs / (g.R * g.S), r = crs / g.S % g.R, sx = crs % g.S;
          const int ih = p * g.stride - g.pad + r * g.dil, iw = q * g.stride - g.pad + sx * g.dil;
          if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
          ref.add(double(x[((size_t(n) * g.C + c) * g.H + ih) * g.W + iw]) * double(w[size_t(k) * CRS + crs]));
        }
        return ref;
      },
      applies);
}

}  // namespace
}  // namespace warpnet::device::conv
#endif
