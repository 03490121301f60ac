#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/dgrad_01_direct.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

const Registration dgrad_direct{Kernel{
    .op = "conv2d_dgrad",
    .version = 1,
    .name = "dgrad_direct",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*C*H*W/256)): one thread per element of dx, gathering K*R*S taps",
    .shape = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return Launch{dim3(ceil_div(g.N * g.C * g.H * g.W, 256)), dim3(256), 0};
    },
    // The forward's FLOPs: the same products, summed the other way.
    .flops = flops,
    // Every dx element reads at most K·R·S elements of dy and of w (fewer:
    // taps that hit no output are skipped) and writes itself.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return 4.0 * double(g.N) * g.C * g.H * g.W * (2.0 * g.K * g.R * g.S + 1.0);
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(conv2d_dgrad_direct<256>, l.grid, l.block, l.dynamic_shared, shape_of(s),
                    static_cast<const float*>(b[0]), static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
