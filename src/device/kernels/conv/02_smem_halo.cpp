#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/02_smem_halo.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

constexpr int TP = 16, TQ = 16, KB = 8;
constexpr size_t kDefaultSharedBytes = 48 * 1024;  // what a block gets without opting in

const Registration smem_halo{Kernel{
    .op = "conv2d",
    .version = 2,
    .name = "smem_halo",
    .precision = "fp32",
    .shape_text = "block (16,16), grid (ceil(Q/16), ceil(P/16), N*ceil(K/8)): a 16x16 output tile for 8 output "
                  "channels; per input channel the haloed input tile and the 8 filters in shared memory",
    .shape = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const long long floats = conv2d_smem_halo_floats<TP, TQ, KB>(g.R, g.S, g.stride, g.dil);
      return Launch{dim3(ceil_div(g.Q, TQ), ceil_div(g.P, TP), g.N * ceil_div(g.K, KB)), dim3(TQ, TP),
                    size_t(floats) * 4};
    },
    .flops = flops,
    // Per block and input channel: the haloed tile (an upper bound: padding
    // is written as zeros, not read) and KB filter slices; y written once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const double blocks = double(ceil_div(g.Q, TQ)) * ceil_div(g.P, TP) * g.N * ceil_div(g.K, KB);
      return 4.0 * blocks * g.C * conv2d_smem_halo_floats<TP, TQ, KB>(g.R, g.S, g.stride, g.dil) +
             4.0 * outputs(g);
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      // Refused here, naming the shape: the launch's own error would speak of
      // cudaFuncSetAttribute, and past int's range the kernel's window wraps.
      const ConvShape g = shape_of(s);
      const HaloWindow window = conv2d_smem_halo_window<TP, TQ>(g.R, g.S, g.stride, g.dil);
      WN_CHECK(l.dynamic_shared <= kDefaultSharedBytes, "at stride ", g.stride, ", dilation ", g.dil, " and a ", g.R,
               "x", g.S, " filter, a ", TP, "x", TQ, " output tile reads a ", window.rows, "x", window.cols,
               " input window: with ", KB, " filters, more than the ", kDefaultSharedBytes,
               " bytes of shared memory a block gets (conv2d/01, direct, takes any shape)");
      launch_kernel(conv2d_smem_halo<TP, TQ, KB>, l.grid, l.block, l.dynamic_shared, shape_of(s), x_of(b), w_of(b),
                    y_of(b));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
