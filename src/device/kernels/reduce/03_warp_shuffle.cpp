#include "device/kernels/reduce/reduce_registration.hpp"

namespace {
#include "kernels/reduce/03_warp_shuffle.cu"
}  // namespace

namespace warpnet::device::reduce_kernels {
namespace {

// Version 3 of the op `op` ("sum_rows" with Sum, "max_rows" with Max).
template <class Op>
Kernel warp_shuffle(const char* op) {
  return Kernel{
      .op = op,
      .version = 3,
      .name = "warp_shuffle",
      .precision = "fp32",
      .shape_text = "block (256), grid (N): a block per row, warp-shuffle reduction",
      .shape = [](const Sizes& s) { return Launch{dim3(N(s)), dim3(256), 0}; },
      .flops = flops,
      .bytes = bytes,
      .launch = [](const Sizes& s, const Launch& l, Buffers b) {
        launch_reduce(s, l, b, reduce_warp_shuffle<Op, 256>);
      },
      .copy = kThisCopy,
  };
}

const Registration sum_rows{warp_shuffle<warpnet::Sum>("sum_rows")};
const Registration max_rows{warp_shuffle<warpnet::Max>("max_rows")};

}  // namespace
}  // namespace warpnet::device::reduce_kernels
