#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/06_vectorized.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration vectorized{Kernel{
    .op = "matmul",
    .version = 6,
    .name = "vectorized",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N/128), ceil(M/128)): 128x128 C tile per block, BK=8, "
                  "8x8 per thread, float4 loads and stores, As transposed (BK, BM)",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 128, 128), dim3((128 / 8) * (128 / 8)), 0}; },
    .flops = flops,
    // The same bytes as v5 in a quarter of the instructions. The scalar
    // fallback skips the elements past an edge; the float4 path reads none
    // past K or N either (whole float4s are in or out), so still an upper bound.
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_vectorized<128, 128, 8, 8, 8, TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
