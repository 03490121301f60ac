// What the tuners of the autotuned conv versions (conv2d/07 and 08,
// conv2d_dgrad/03 and 04, conv2d_wgrad/03) share on a real GPU: the sizes
// completed and checked, two random inputs and the output on the device,
// every candidate timed, the fastest one checked against the op's
// definition, remembered, and the line that says so. Each version gives its
// buffers' sizes, its launch and the definition of one output element. The
// CUDA copy of the registrations alone includes it (nvcc); an anonymous
// namespace as the other registration headers (copy.hpp).
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/gpu_timing.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace warpnet::device::conv {
namespace {

// One op's buffers {in0, in1, out} in floats, the products summed into an
// output element, and the output's name and index order ("y", n,k,p,q).
struct ConvTuneBuffers {
  size_t in0, in1, out;
  double terms;
};

// `id` names the version ("conv2d_wgrad/03"), `op_name` its op. launch(i, s,
// buffers) launches candidate i, of those applies(i) allows (all when
// empty); where(g, e) splits output element e into its four indices;
// reference(g, in0, in1, index) is that element by the definition, in double
// (gpu_timing::Reference). Returns "measured by <id>'s tune: <winner> (<each
// candidate> <ms>, ...)".
template <class LaunchCandidate, class Where, class ReferenceAt>
std::string tune_conv(const char* id, const char* op_name, const Sizes& given, TunedChoices& tuned, int candidates,
                      const char* (*candidate_name)(int), ConvTuneBuffers (*buffers_of)(const ConvShape&),
                      LaunchCandidate launch, const char* out_name, Where where, ReferenceAt reference,
                      const std::function<bool(int)>& applies = {}) {
  const std::string who_text = cat(id, "_autotuned tune");
  const char* who = who_text.c_str();
  const Op& the_op = op(op_name);
  const Sizes s = complete_sizes(the_op, given);
  const ConvShape g = shape_of(s);
  WN_CHECK(g.N > 0 && g.C > 0 && g.H > 0 && g.W > 0 && g.K > 0 && g.P > 0 && g.Q > 0, who,
           ": sizes give no output, got ", describe_sizes(the_op, s));

  constexpr uint64_t kSeed = 2026;
  Rng rng(kSeed);
  const ConvTuneBuffers n = buffers_of(g);
  std::vector<float> in0, in1;
  const gpu_timing::DeviceFloats d_in0 = gpu_timing::random_on_device(in0, n.in0, rng, who);
  const gpu_timing::DeviceFloats d_in1 = gpu_timing::random_on_device(in1, n.in1, rng, who);
  const gpu_timing::DeviceFloats d_out(n.out, who);
  void* const buffers[] = {d_in0.p, d_in1.p, d_out.p};
  const auto run = [&](int i) { launch(i, s, Buffers(buffers)); };

  const gpu_timing::Timed t = gpu_timing::pick_fastest(candidates, who, run, describe_sizes(the_op, s), applies);
  const auto element_name = [&](size_t e) {
    const std::array<int, 4> i = where(g, e);
    return cat(out_name, "[", i[0], ",", i[1], ",", i[2], ",", i[3], "]");
  };
  gpu_timing::verify_winner(
      who, cat(candidate_name(t.best), " at ", describe_sizes(the_op, s)), [&] { run(t.best); }, d_out, n.out, rng,
      n.terms, [&](size_t e) { return reference(g, in0, in1, where(g, e)); }, element_name);

  tuned.remember(s, t.best);
  const std::string all = gpu_timing::describe_times(t.ms, candidate_name);
  return cat("measured by ", id, "'s tune: ", candidate_name(t.best), " (", all, ")");
}

}  // namespace
}  // namespace warpnet::device::conv
