// The tune of conv2d_nhwc v14, v15 and v16 on a real GPU. Each has two
// tiles for the same problem (v14 and v15: two consumer warpgroups or
// three; v16: 8 rows a thread or 6), and a rule that picks one from the SM
// count by arithmetic (conv_v14::consumers_for, conv_v15::consumers_for,
// conv_v16::rows_per_thread). Here both run on random inputs of the sizes
// and are timed, each is checked against the definition (every element at
// the tests' sizes, sampled ones at a bench layer's:
// gpu_timing::verify_candidate), and the faster is remembered: the
// measurement the rule is a guess at, in the record's "tuned" line. A wrong
// tile fails the tune whether it wins or not: the tune is the one place a
// GPU runs both (the registry's GPU check runs the winner).
// The CUDA copy of the registrations alone includes it (nvcc); an anonymous
// namespace as the other registration headers (../copy.hpp).
#pragma once
#if !defined(__CUDACC__)
#error "device/kernels/conv/tile_tune.hpp is for the CUDA copy of the registrations (nvcc) only"
#endif
#include <array>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/gpu_timing.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace warpnet::device::conv {
namespace {

// A version's two tiles: candidate 0 is the rule's tie-breaker (the larger
// tile), 1 the other.
struct TileCandidates {
  const char* who;                                   // "conv2d_nhwc/14's tune"
  const char* (*name)(int candidate, const Sizes&);  // "192x128, 3 consumer warpgroups"
  // Candidate i's grid, block and shared memory: asked once, before the
  // timing, as the bench asks Kernel::shape once (v15's asks the driver how
  // many clusters fit).
  Launch (*shape)(int candidate, const Sizes&);
  // Launches candidate i with its shape on x, w and y (the op's buffers); the caller checks the error.
  void (*launch)(int candidate, const Sizes&, const Launch&, Buffers);
};

// y[n,p,q,k] of conv2d_nhwc by the definition, in double: x (N,H,W,C),
// w (K,R,S,C), y (N,P,Q,K); output element e in y's order.
inline gpu_timing::Reference nhwc_forward_reference(const ConvShape& g, const std::vector<float>& x,
                                                    const std::vector<float>& w, size_t e) {
  const int k = int(e % g.K), q = int(e / g.K % g.Q), p = int(e / (size_t(g.K) * g.Q) % g.P);
  const int n = int(e / (size_t(g.K) * g.Q * g.P));
  gpu_timing::Reference ref;
  for (int r = 0; r < g.R; ++r)
    for (int sx = 0; sx < g.S; ++sx) {
      const int ih = p * g.stride - g.pad + r * g.dil, iw = q * g.stride - g.pad + sx * g.dil;
      if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
      const size_t x0 = ((size_t(n) * g.H + ih) * g.W + iw) * g.C, w0 = ((size_t(k) * g.R + r) * g.S + sx) * g.C;
      for (int c = 0; c < g.C; ++c) ref.add(double(x[x0 + c]) * double(w[w0 + c]));
    }
  return ref;
}

// T: the element type of x, w and y (float, or __nv_bfloat16 for v14 and
// v15). TMA's path only: at sizes it cannot describe both candidates run
// the same direct kernel, and there is nothing to choose.
template <class T>
std::string tune_tiles(const TileCandidates& c, const Sizes& s, TunedChoices& tuned) {
  const auto name = [&](int i) { return c.name(i, s); };
  if (const auto known = tuned.find(s)) return cat("tuned before: ", name(*known));
  const ConvShape g = shape_of(s);
  if (!conv_v14::describable(g, nullptr, nullptr, int(sizeof(T)))) return "one kernel here: TMA cannot describe x or w";
  using gpu_timing::DeviceArray;
  Rng rng(2026);
  std::vector<float> x_host, w_host;
  DeviceArray<T> x = gpu_timing::random_on_device<T>(x_host, size_t(g.N) * g.H * g.W * g.C, rng, c.who);
  DeviceArray<T> w = gpu_timing::random_on_device<T>(w_host, size_t(g.K) * g.R * g.S * g.C, rng, c.who);
  const size_t outputs = size_t(g.N) * g.P * g.Q * g.K;
  DeviceArray<T> y(outputs, c.who);
  void* const buffers[3] = {x.p, w.p, y.p};
  const std::array<Launch, 2> shapes = {c.shape(0, s), c.shape(1, s)};
  const auto launch = [&](int i) { c.launch(i, s, shapes[size_t(i)], Buffers(buffers)); };
  const gpu_timing::Timed t = gpu_timing::pick_fastest(2, c.who, launch, describe_sizes(op("conv2d_nhwc"), s));

  // The op's bound (an fp32 sum of C·R·S products), widened as every check
  // of a bf16 output is by its rounding (Kernel::output_rounding: 2^-8).
  const double terms = double(g.C) * g.R * g.S;
  const double rounding = std::is_same_v<T, float> ? 0.0 : std::ldexp(1.0, -8);
  const auto bound_at = [&](size_t e, const gpu_timing::Reference& r) {
    const double sums = gpu_timing::sum_bound(terms)(e, r);
    return sums + rounding * (std::abs(r.want) + sums);
  };
  const auto reference_at = [&](size_t e) { return nhwc_forward_reference(g, x_host, w_host, e); };
  const auto element_name = [&](size_t e) {
    return cat("y[", e / (size_t(g.K) * g.Q * g.P), ",", e / (size_t(g.K) * g.Q) % g.P, ",", e / g.K % g.Q, ",",
               e % g.K, "]");
  };
  for (const int i : gpu_timing::launched_winner_first(t))
    gpu_timing::verify_candidate(c.who, cat(name(i), " at ", describe_sizes(op("conv2d_nhwc"), s)),
                                 [&] { launch(i); }, y, outputs, terms, rng, reference_at, bound_at, element_name);
  tuned.remember(s, t.best);
  return cat("measured by ", c.who, ": ", name(t.best), " (", gpu_timing::describe_times(t.ms, name), ")");
}

}  // namespace
}  // namespace warpnet::device::conv
