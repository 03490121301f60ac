#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/04_implicit_gemm.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

// 128 output pixels x 64 output channels per block, 8 taps deep; 8x4 per thread.
constexpr int BM = 128, BN = 64, BK = 8, TM = 8, TN = 4;

const Registration implicit_gemm{Kernel{
    .op = "conv2d",
    .version = 4,
    .name = "implicit_gemm",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*P*Q/128), ceil(K/64)): a 128 (pixels) x 64 (channels) tile of the GEMM "
                  "view, 8 taps per step gathered from x into shared memory, 8x4 outputs per thread",
    .shape = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return Launch{dim3(ceil_div(g.gemm_m(), BM), ceil_div(g.K, BN)), dim3((BM / TM) * (BN / TN)), 0};
    },
    .flops = flops,
    // Matmul's tiled_bytes for M = N·P·Q, N' = K, K' = C·R·S: the virtual A is
    // read once per column of tiles (an upper bound: padding taps are not
    // read; the R·S/stride² overlapping reads of one x pixel come from cache),
    // w once per row of tiles, y written once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const double M = g.gemm_m(), N = g.K, K = g.crs();
      return 4.0 * (M * K * ceil_div(g.K, BN) + K * N * ceil_div(g.gemm_m(), BM) + M * N);
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(conv2d_implicit_gemm<BM, BN, BK, TM, TN>, l.grid, l.block, l.dynamic_shared, shape_of(s),
                    x_of(b), w_of(b), y_of(b));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
