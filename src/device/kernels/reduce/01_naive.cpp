#include "device/kernels/reduce/reduce_registration.hpp"

namespace {
#include "kernels/reduce/01_naive.cu"
}  // namespace

namespace warpnet::device::reduce_kernels {
namespace {

// Version 1 of the op `op` ("sum_rows" with Sum, "max_rows" with Max).
template <class Op>
Kernel naive(const char* op) {
  return Kernel{
      .op = op,
      .version = 1,
      .name = "naive",
      .precision = "fp32",
      .shape_text = "block (128), grid (ceil(N/128)): one thread per row",
      .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(N(s), 128)), dim3(128), 0}; },
      .flops = flops,
      // The same bytes as every version; here in 8x the sectors (uncoalesced).
      .bytes = bytes,
      .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_reduce(s, l, b, reduce_naive<Op, 128>); },
      .copy = kThisCopy,
  };
}

const Registration sum_rows{naive<warpnet::Sum>("sum_rows")};
const Registration max_rows{naive<warpnet::Max>("max_rows")};

}  // namespace
}  // namespace warpnet::device::reduce_kernels
