#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/13_wgmma_tma.cu"  // its descriptor, accumulator map and encoder
#include "kernels/matmul/15_wgmma_fp8.cu"
}  // namespace
#include "device/kernels/matmul/fp8_operands.hpp"

namespace warpnet::device::gemm {
namespace {

void launch_v15(const Sizes& s, const Launch& l, Buffers b) {
  with_k_major_operands(s, b, [&](const uint8_t* a, const uint8_t* bk, int pitch) {
    WN_CHECK(wgmma_v13::encode_tiled(), "matmul/15_wgmma_fp8: the driver has no cuTensorMapEncodeTiled");
    WN_CHECK(wgmma_fp8_v15::launch(l.grid, M(s), N(s), K(s), pitch, a, bk, static_cast<float*>(b[2])),
             "matmul/15_wgmma_fp8: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s), " K=", K(s),
             " pitch=", pitch, tensor_map_refusal());
    check_launch();
  });
}

const Registration wgmma_fp8{Kernel{
    .op = "matmul",
    .version = 15,
    .name = "wgmma_fp8",
    // Inputs stored as fp8 e4m3 (relative error 2^-4 each against fp32); products exact.
    .precision = "fp8 e4m3 inputs, ~14-bit sums in the accumulator over all of K (sm_90a)",
    .shape_text = "block (384) = TMA producer + 2 consumer warpgroups, grid (ceil(N/128), ceil(M/128)): a 128x128 C "
                  "tile, wgmma m64n128k32 e4m3 per consumer, 7-stage mbarrier ring of 128-wide k-steps, 128B "
                  "swizzle, K-major operands; A when trans_a, B when not trans_b, and any operand TMA cannot read "
                  "in place (K off 16, or not 16-byte aligned) are first packed K-major (K padded to 16) by "
                  "pack_k_major, block (32, 8), inside the timed region; no fallback",
    .shape = [](const Sizes& s) {
      return Launch{tile_grid(s, 128, 128), dim3(wgmma_fp8_v15::THREADS), wgmma_fp8_v15::kSharedBytes};
    },
    .flops = flops,
    // 128x128 tiles of the K-major operands, plus the packing passes (fp8_bytes).
    .bytes = [](const Sizes& s) { return fp8_bytes(s, 128, 128); },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v15,
    .copy = kThisCopy,
    .input_format = &simt::kE4M3,
    .tensor_op = Kernel::TensorOp::wgmma,
    // Same instruction as cuBLASLt's fp8 on Hopper, which kept ~14 significand
    // bits inside one wgmma on an H200 (src/device/cuda/matmul_cublas.cu):
    // this kernel adds every wgmma into the one accumulator, never promoting
    // partial sums to a separate fp32 one (see the kernel's header).
    .accumulator_bits = 14,
}};

}  // namespace
}  // namespace warpnet::device::gemm
