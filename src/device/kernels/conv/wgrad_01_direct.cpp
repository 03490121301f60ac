#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/wgrad_01_direct.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

const Registration wgrad_direct{Kernel{
    .op = "conv2d_wgrad",
    .version = 1,
    .name = "wgrad_direct",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(K*C*R*S/256)): one thread per element of dw, summing N*P*Q terms",
    .shape = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return Launch{dim3(ceil_div(g.K * g.crs(), 256)), dim3(256), 0};
    },
    // The forward's FLOPs: the same products, summed the other way.
    .flops = flops,
    // Every dw element reads at most N·P·Q elements of x and of dy (padding
    // taps are skipped) and writes itself.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return 4.0 * double(g.K) * g.crs() * (2.0 * g.N * g.P * g.Q + 1.0);
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(conv2d_wgrad_direct<256>, l.grid, l.block, l.dynamic_shared, shape_of(s),
                    static_cast<const float*>(b[0]), static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
