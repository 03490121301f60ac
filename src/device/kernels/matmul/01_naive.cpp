#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/01_naive.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {

const Registration naive{Kernel{
    .op = "matmul",
    .version = 1,
    .name = "naive",
    .precision = "fp32",
    .shape_text = "block (16,16), grid (ceil(M/16), ceil(N/16)): one thread per C element, lanes along rows",
    .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(M(s), 16), ceil_div(N(s), 16)), dim3(16, 16), 0}; },
    .flops = flops,
    // Every thread reads a row of A and a column of B: 2·M·N·K floats, no reuse.
    .bytes = [](const Sizes& s) { return 4.0 * (2.0 * M(s) * N(s) * K(s) + double(M(s)) * N(s)); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_gemm(s, l, b, []<bool TA, bool TB>() { return sgemm_naive<TA, TB>; });
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
