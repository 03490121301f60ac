#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/07_bank_conflict_free.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration bank_conflict_free{Kernel{
    .op = "matmul",
    .version = 7,
    .name = "bank_conflict_free",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N/128), ceil(M/128)): 128x128 C tile per block, BK=8, "
                  "8x8 per thread (two float4 column groups 64 apart), float4 loads and stores, "
                  "As (BK, BM+4) and Bs (BK, BN+4) padded",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 128, 128), dim3((128 / 8) * (128 / 8)), 0}; },
    .flops = flops,
    // v6's global traffic: the padding and the column order change only
    // where the bytes sit in shared memory.
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_bank_conflict_free<128, 128, 8, 8, 8, TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
