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
    .shape = [](const Sizes& s) { return gemm_tiles<BM, BN>(s, (BM / TM) * (BN / TN)); },
    .flops = flops,
    .bytes = [](const Sizes& s) { return gemm_tile_bytes<BM, BN>(s, 4.0); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(conv2d_implicit_gemm<BM, BN, BK, TM, TN>, l.grid, l.block, l.dynamic_shared, shape_of(s),
                    x_of(b), w_of(b), y_of(b));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
