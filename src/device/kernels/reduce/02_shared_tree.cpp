#include "device/kernels/reduce/reduce_registration.hpp"

namespace {
#include "kernels/reduce/02_shared_tree.cu"
}  // namespace

namespace warpnet::device::reduce_kernels {
namespace {

// Version 2 of the op `op` ("sum_rows" with Sum, "max_rows" with Max).
template <class Op>
Kernel shared_tree(const char* op) {
  return Kernel{
      .op = op,
      .version = 2,
      .name = "shared_tree",
      .precision = "fp32",
      .shape_text = "block (256), grid (N): a block per row, shared-memory tree",
      .shape = [](const Sizes& s) { return Launch{dim3(N(s)), dim3(256), 0}; },
      .flops = flops,
      .bytes = bytes,
      .launch = [](const Sizes& s, const Launch& l, Buffers b) {
        launch_reduce(s, l, b, reduce_shared_tree<Op, 256>);
      },
      .copy = kThisCopy,
  };
}

const Registration sum_rows{shared_tree<warpnet::Sum>("sum_rows")};
const Registration max_rows{shared_tree<warpnet::Max>("max_rows")};

}  // namespace
}  // namespace warpnet::device::reduce_kernels
