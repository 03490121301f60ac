#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/01_direct.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

const Registration direct{Kernel{
    .op = "conv2d",
    .version = 1,
    .name = "direct",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*K*P*Q/256)): one thread per output element, C*R*S taps each",
    .shape = [](const Sizes& s) {
      return Launch{dim3(ceil_div(int(outputs(shape_of(s))), 256)), dim3(256), 0};
    },
    .flops = flops,
    // Every output reads its C·R·S taps of x and of w (taps in the padding
    // are skipped, so this is an upper bound) and writes itself once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return 4.0 * outputs(g) * (2.0 * g.crs() + 1.0);
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(conv2d_direct<256>, l.grid, l.block, l.dynamic_shared, shape_of(s), x_of(b), w_of(b), y_of(b));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
