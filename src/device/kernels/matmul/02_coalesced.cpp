#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/02_coalesced.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration coalesced{Kernel{
    .op = "matmul",
    .version = 2,
    .name = "coalesced",
    .precision = "fp32",
    .shape_text = "block (16,16), grid (ceil(N/16), ceil(M/16)): one thread per C element, lanes along columns",
    .shape = [](const Sizes& s) { return Launch{tile_grid(s, 16, 16), dim3(16, 16), 0}; },
    .flops = flops,
    // The same requests as v1; only the sectors they touch change.
    .bytes = [](const Sizes& s) { return 4.0 * (2.0 * M(s) * N(s) * K(s) + double(M(s)) * N(s)); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_coalesced<TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
