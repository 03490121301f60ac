#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/dgrad_02_implicit_gemm.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

// conv v4's tile: 128 input pixels x 64 input channels per block, 8 taps deep; 8x4 per thread.
constexpr int BM = 128, BN = 64, BK = 8, TM = 8, TN = 4;

const Registration dgrad_implicit_gemm{Kernel{
    .op = "conv2d_dgrad",
    .version = 2,
    .name = "dgrad_implicit_gemm",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*H*W/128), ceil(C/64)): a 128 (input pixels) x 64 (input channels) tile "
                  "of dX = gather(dy) @ w, 8 taps (k,r,s) per step gathered from dy into shared memory, 8x4 outputs "
                  "per thread",
    .shape = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return Launch{dim3(ceil_div(g.N * g.H * g.W, BM), ceil_div(g.C, BN)), dim3((BM / TM) * (BN / TN)), 0};
    },
    // The forward's FLOPs: the same products, summed the other way (the
    // zeros a strided dgrad multiplies are not counted).
    .flops = flops,
    // Tiled GEMM bytes for M = N·H·W, N' = C, K' = K·R·S: the virtual A read
    // once per column of tiles (an upper bound: at stride > 1 most of its
    // taps hit no output and are not read), w once per row of tiles, dx
    // written once.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const double M = double(g.N) * g.H * g.W, N = g.C, K = double(g.K) * g.R * g.S;
      return 4.0 * (M * K * ceil_div(g.C, BN) + K * N * ceil_div(g.N * g.H * g.W, BM) + M * N);
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(conv2d_dgrad_implicit_gemm<BM, BN, BK, TM, TN>, l.grid, l.block, l.dynamic_shared, shape_of(s),
                    static_cast<const float*>(b[0]), static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
