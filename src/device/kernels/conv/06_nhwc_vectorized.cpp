#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/06_nhwc_vectorized.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

// v4's block tile (128 pixels x 64 output channels, 8 taps deep, 8x4 per
// thread), so the difference from v4 is the layout and the float4s alone.
constexpr int BM = 128, BN = 64, BK = 8, TM = 8, TN = 4;

// The op conv2d_nhwc (src/device/ops/conv2d.cpp): x (N,H,W,C), w (K,R,S,C),
// y (N,P,Q,K); the same sizes and ConvShape as conv2d.
const Registration nhwc_vectorized{Kernel{
    .op = "conv2d_nhwc",
    .version = 6,
    .name = "nhwc_vectorized",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*P*Q/128), ceil(K/64)): v4's 128 (pixels) x 64 (channels) tile over "
                  "NHWC x and KRSC w, 8 taps (channels innermost) per step as float4s, 8x4 outputs per thread "
                  "stored as float4s along K",
    .shape = [](const Sizes& s) { return gemm_tiles<BM, BN>(s, (BM / TM) * (BN / TN)); },
    .flops = flops,
    // v4's formula: the layout changes how the bytes are asked for, not how many.
    .bytes = [](const Sizes& s) { return gemm_tile_bytes<BM, BN>(s, 4.0); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(conv2d_nhwc_vectorized<BM, BN, BK, TM, TN>, l.grid, l.block, l.dynamic_shared, shape_of(s),
                    x_of(b), w_of(b), y_of(b));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
