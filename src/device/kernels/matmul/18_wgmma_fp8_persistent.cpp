#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/18_wgmma_fp8_persistent.cu"  // includes 16 (and so 13) and 15, whose pieces it uses
}  // namespace
#include "device/kernels/matmul/fp8_operands.hpp"
#include "device/kernels/matmul/setmaxnreg_registers.hpp"
#include "device/kernels/matmul/stream_k_workspace.hpp"

namespace warpnet::device::gemm {
namespace {

void launch_v18(const Sizes& s, const Launch& l, Buffers b) {
  with_k_major_operands(s, b, [&](const uint8_t* a, const uint8_t* bk, int pitch) {
    WN_CHECK(wgmma_v13::encode_tiled(), "matmul/18_wgmma_fp8_persistent: the driver has no cuTensorMapEncodeTiled");
    require_launch_registers<gemm_wgmma_fp8_persistent>("matmul/18_wgmma_fp8_persistent");
    const int blocks = int(l.grid.x);
    const StreamKWorkspace stream_k("matmul/18_wgmma_fp8_persistent", blocks, M(s), N(s), K(s), wgmma_fp8_v18::BK);
    WN_CHECK(wgmma_fp8_v18::launch(blocks, M(s), N(s), K(s), pitch, a, bk, static_cast<float*>(b[2]), stream_k.data()),
             "matmul/18_wgmma_fp8_persistent: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s),
             " K=", K(s), " pitch=", pitch, tensor_map_refusal());
    check_launch();
  });
}

const Registration wgmma_fp8_persistent{Kernel{
    .op = "matmul",
    .version = 18,
    .name = "wgmma_fp8_persistent",
    // Inputs stored as fp8 e4m3 (relative error 2^-4 each against fp32); products exact.
    .precision = "fp8 e4m3 inputs, ~14-bit sums in the accumulator over all of K (sm_90a)",
    .shape_text = "block (384) = TMA producer (setmaxnreg 40) + 2 consumer warpgroups (setmaxnreg 232), persistent "
                  "grid (min(tiles, SMs)) walking 128x256 C tiles in groups of 8 tile rows (with WARPNET_STREAM_K=1 "
                  "a last partial round's tiles shared out by k-steps, stream-K); wgmma m64n256k32 e4m3 per consumer, "
                  "4-stage mbarrier ring of 128-wide k-steps carried across tiles, 128B swizzle, "
                  "K-major operands, the others first packed K-major by pack_k_major inside the timed region (as v15)",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(wgmma_v16::persistent_blocks(M(s), N(s))), dim3(wgmma_fp8_v18::THREADS),
                    wgmma_fp8_v18::kSharedBytes};
    },
    .flops = flops,
    // 128x256 tiles of the K-major operands, plus the packing passes (fp8_bytes).
    .bytes = [](const Sizes& s) { return fp8_bytes(s, wgmma_fp8_v18::BM, wgmma_fp8_v18::BN); },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v18,
    .copy = kThisCopy,
    .input_format = &simt::kE4M3,
    .tensor_op = Kernel::TensorOp::wgmma,
    // v15's instruction family and accumulation: every wgmma into the one
    // accumulator (see v15's registration).
    .accumulator_bits = 14,
}};

}  // namespace
}  // namespace warpnet::device::gemm
