#include "device/kernels/reduce/reduce_registration.hpp"

namespace {
#include "kernels/reduce/05_wide_block.cu"
}  // namespace

namespace warpnet::device::reduce_kernels {
namespace {

constexpr int kBlock = 1024;  // CUDA's largest block

// Version 5 of the op `op` ("sum_rows" with Sum, "max_rows" with Max).
template <class Op>
Kernel wide_block(const char* op) {
  return Kernel{
      .op = op,
      .version = 5,
      .name = "wide_block",
      .precision = "fp32",
      .shape_text = "block (1024), grid (N): a 1024-thread block per row, warp-shuffle reduction",
      .shape = [](const Sizes& s) { return Launch{dim3(N(s)), dim3(kBlock), 0}; },
      .flops = flops,
      .bytes = bytes,
      .launch = [](const Sizes& s, const Launch& l, Buffers b) {
        launch_reduce(s, l, b, reduce_warp_shuffle<Op, kBlock>);
      },
      .copy = kThisCopy,
  };
}

const Registration sum_rows{wide_block<warpnet::Sum>("sum_rows")};
const Registration max_rows{wide_block<warpnet::Max>("max_rows")};

}  // namespace
}  // namespace warpnet::device::reduce_kernels
