#include "device/kernels/softmax/ce_registration.hpp"

namespace {
#include "kernels/softmax/ce_backward_01_grid_stride.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

const Registration ce_backward_grid_stride{Kernel{
    .op = "softmax_cross_entropy_backward",
    .version = 1,
    .name = "ce_backward_grid_stride",
    .precision = "fp32",
    .shape_text = "block (256), grid (min(ceil(N*C/256), 1056)): grid-stride loop, one element of dZ per thread "
                  "per iteration",
    .shape = ce_backward_grid,
    // A subtraction and a product per element (the scale's division once per thread).
    .flops = [](const Sizes& s) { return 2.0 * double(N(s)) * C(s); },
    // P read and dZ written once, labels[i / C] asked for once per element
    // (from cache after a row's first: DRAM sees about 8 bytes per element),
    // and dloss once per thread.
    .bytes = [](const Sizes& s) {
      const Launch l = ce_backward_grid(s);
      return 12.0 * double(N(s)) * C(s) + 4.0 * double(l.grid.x) * l.block.x;
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_ce_backward(s, l, b, softmax_cross_entropy_backward_grid_stride<kGridStrideBlock>);
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
