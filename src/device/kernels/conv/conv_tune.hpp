// The tune of every autotuned conv version (autotuned.hpp) on a real GPU:
// the sizes completed and checked, two random inputs and the output on the
// device, every candidate that applies timed and checked against the pass's
// definition (within the pass's bound, a Winograd candidate within its own:
// winograd_bound.hpp), the fastest one remembered, and the line that says
// so.
// What differs between the three passes (the buffers, the output's indices,
// the definition of one output element) is a PassCheck. The CUDA copy of
// the registrations alone includes it (nvcc); an anonymous namespace as the
// other registration headers (copy.hpp).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/winograd_bound.hpp"
#include "device/kernels/gpu_timing.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace warpnet::device::conv {
namespace {

// What a tuner checks a pass's candidates against.
struct PassCheck {
  // The buffers {in0, in1, out} in floats, and the products summed into one
  // output element (the check's error bound grows with them).
  struct Floats {
    size_t in0, in1, out;
    double terms;
  };
  Floats (*buffers)(const ConvShape&);
  const char* out_name;  // "y"
  // Output element e's four indices, in the output's order (n, k, p, q for y).
  std::array<int, 4> (*where)(const ConvShape&, size_t e);
  // That element by the definition, in double.
  gpu_timing::Reference (*reference)(const ConvShape&, const std::vector<float>& in0, const std::vector<float>& in1,
                                     std::array<int, 4> at);
};

// Forward: x (N, C, H, W) and w (K, C, R, S) in, y (N, K, P, Q) out.
inline PassCheck::Floats forward_buffers(const ConvShape& g) {
  return {size_t(g.N) * g.C * g.H * g.W, size_t(g.K) * g.crs(), size_t(g.N) * g.K * g.P * g.Q, double(g.crs())};
}
inline std::array<int, 4> forward_where(const ConvShape& g, size_t e) {
  const size_t PQ = size_t(g.P) * g.Q;
  return {int(e / (size_t(g.K) * PQ)), int(e / PQ % g.K), int(e % PQ / g.Q), int(e % g.Q)};
}
// y[n,k,p,q] by the definition: a sum of C·R·S products (src/device/ops/conv2d.cpp's bound).
inline gpu_timing::Reference forward_reference(const ConvShape& g, const std::vector<float>& x,
                                               const std::vector<float>& w, std::array<int, 4> at) {
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
}

// Data gradient: dy (N, K, P, Q) and w in, dx (N, C, H, W) out.
inline PassCheck::Floats dgrad_buffers(const ConvShape& g) {
  return {size_t(g.N) * g.K * g.P * g.Q, size_t(g.K) * g.crs(), size_t(g.N) * g.C * g.H * g.W,
          double(g.K) * g.R * g.S};
}
inline std::array<int, 4> dgrad_where(const ConvShape& g, size_t e) {
  const size_t HW = size_t(g.H) * g.W;
  return {int(e / (size_t(g.C) * HW)), int(e / HW % g.C), int(e % HW / g.W), int(e % g.W)};
}
// dx[n,c,h,x] by the definition: a sum of K·R·S products at most (src/device/ops/conv2d.cpp's bound).
inline gpu_timing::Reference dgrad_reference(const ConvShape& g, const std::vector<float>& dy,
                                             const std::vector<float>& w, std::array<int, 4> at) {
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
}

// Weight gradient: x and dy in, dw (K, C, R, S) out.
inline PassCheck::Floats wgrad_buffers(const ConvShape& g) {
  return {size_t(g.N) * g.C * g.H * g.W, size_t(g.N) * g.K * g.P * g.Q, size_t(g.K) * g.crs(),
          double(g.N) * g.P * g.Q};
}
inline std::array<int, 4> wgrad_where(const ConvShape& g, size_t e) {
  const size_t RS = size_t(g.R) * g.S;
  return {int(e / (size_t(g.C) * RS)), int(e / RS % g.C), int(e % RS / g.S), int(e % g.S)};
}
// dw[k,c,r,s] by the definition: a sum of N·P·Q products at most.
inline gpu_timing::Reference wgrad_reference(const ConvShape& g, const std::vector<float>& x,
                                             const std::vector<float>& dy, std::array<int, 4> at) {
  const auto [k, c, r, sx] = at;
  gpu_timing::Reference ref;
  for (int n = 0; n < g.N; ++n)
    for (int p = 0; p < g.P; ++p)
      for (int q = 0; q < g.Q; ++q) {
        const int ih = p * g.stride - g.pad + r * g.dil, iw = q * g.stride - g.pad + sx * g.dil;
        if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
        ref.add(double(dy[((size_t(n) * g.K + k) * g.P + p) * g.Q + q]) *
                double(x[((size_t(n) * g.C + c) * g.H + ih) * g.W + iw]));
      }
  return ref;
}

inline PassCheck pass_check(ConvPass pass) {
  switch (pass) {
    case ConvPass::forward: return {forward_buffers, "y", forward_where, forward_reference};
    case ConvPass::dgrad: return {dgrad_buffers, "dx", dgrad_where, dgrad_reference};
    case ConvPass::wgrad: break;
  }
  return {wgrad_buffers, "dw", wgrad_where, wgrad_reference};
}

// Times every candidate of `version` that applies on `given` with CUDA
// events (a wgrad candidate's ordered sum included), checks each one's
// output against the definition in double, remembers the fastest in `tuned`.
// Returns "measured by <id>'s tune: <winner> (<each candidate> <ms>, ...)".
inline std::string tune_conv(const AutotunedConv& version, const Sizes& given, TunedChoices& tuned) {
  const std::string who_text = cat(version.id, " tune");
  const char* who = who_text.c_str();
  const Op& the_op = op(op_name(version.pass));
  const Sizes s = complete_sizes(the_op, given);
  const ConvShape g = shape_of(s);
  WN_CHECK(g.N > 0 && g.C > 0 && g.H > 0 && g.W > 0 && g.K > 0 && g.P > 0 && g.Q > 0, who,
           ": sizes give no output, got ", describe_sizes(the_op, s));

  const PassCheck check = pass_check(version.pass);
  constexpr uint64_t kSeed = 2026;
  Rng rng(kSeed);
  const PassCheck::Floats n = check.buffers(g);
  std::vector<float> in0, in1;
  const gpu_timing::DeviceFloats d_in0 = gpu_timing::random_on_device(in0, n.in0, rng, who);
  const gpu_timing::DeviceFloats d_in1 = gpu_timing::random_on_device(in1, n.in1, rng, who);
  const gpu_timing::DeviceFloats d_out(n.out, who);
  void* const buffers[] = {d_in0.p, d_in1.p, d_out.p};
  const auto run = [&](int i) { version.launch(i, s, version.shape(i, s), Buffers(buffers)); };
  const auto applies = [&](int i) { return !version.applies || version.applies(i, g); };

  const gpu_timing::Timed t = gpu_timing::pick_fastest(version.count, who, run, describe_sizes(the_op, s), applies);
  const auto element_name = [&](size_t e) {
    const std::array<int, 4> i = check.where(g, e);
    return cat(check.out_name, "[", i[0], ",", i[1], ",", i[2], ",", i[3], "]");
  };
  const auto reference_at = [&](size_t e) { return check.reference(g, in0, in1, check.where(g, e)); };
  for (const int i : gpu_timing::launched_winner_first(t)) {
    const auto launch = [&] { run(i); };
    const std::string what = cat(version.name(i), " at ", describe_sizes(the_op, s));
    const WinogradTile tile = version.winograd ? version.winograd(i) : WinogradTile::none;
    if (tile != WinogradTile::none) {
      // A Winograd candidate is held to the bound of its own arithmetic, as
      // every check of it on the emulator is (autotuned.hpp's Kernel::tolerance).
      const auto winograd_bound_at = [&](size_t e, const gpu_timing::Reference&) {
        return version.pass == ConvPass::forward ? winograd_bound::forward_at(s, in0, in1, check.where(g, e), tile)
                                                 : winograd_bound::dgrad_at(s, in0, in1, check.where(g, e), tile);
      };
      gpu_timing::verify_candidate(who, what, launch, d_out, n.out, n.terms, rng, reference_at, winograd_bound_at,
                                   element_name);
    } else {
      gpu_timing::verify_candidate(who, what, launch, d_out, n.out, n.terms, rng, reference_at,
                                   gpu_timing::sum_bound(n.terms), element_name);
    }
  }

  tuned.remember(s, t.best);
  const std::string all = gpu_timing::describe_times(t.ms, version.name);
  return cat("measured by ", version.id, "'s tune: ", version.name(t.best), " (", all, ")");
}

}  // namespace
}  // namespace warpnet::device::conv
