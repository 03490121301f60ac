#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/22_wgmma_fp8_cluster.cu"  // includes 18 (and so 16, 13 and 15), whose pieces it uses
}  // namespace
#include "device/kernels/matmul/fp8_operands.hpp"
#include "device/kernels/matmul/setmaxnreg_registers.hpp"

namespace warpnet::device::gemm {
namespace {

void launch_v22(const Sizes& s, const Launch& l, Buffers b) {
  with_k_major_operands(s, b, [&](const uint8_t* a, const uint8_t* bk, int pitch) {
    WN_CHECK(wgmma_v13::encode_tiled(), "matmul/22_wgmma_fp8_cluster: the driver has no cuTensorMapEncodeTiled");
    require_launch_registers<gemm_wgmma_fp8_cluster>("matmul/22_wgmma_fp8_cluster");
    WN_CHECK(l.grid.x % warpnet::kPair == 0, "matmul/22_wgmma_fp8_cluster: a grid of ", l.grid.x,
             " blocks is not a whole number of clusters of ", warpnet::kPair);
    WN_CHECK(wgmma_fp8_v22::launch(int(l.grid.x), M(s), N(s), K(s), pitch, a, bk, static_cast<float*>(b[2])),
             "matmul/22_wgmma_fp8_cluster: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s),
             " K=", K(s), " pitch=", pitch, tensor_map_refusal());
    check_launch();
  });
}

const Registration wgmma_fp8_cluster{Kernel{
    .op = "matmul",
    .version = 22,
    .name = "wgmma_fp8_cluster",
    // Inputs stored as fp8 e4m3 (relative error 2^-4 each against fp32); products exact.
    .precision = "fp8 e4m3 inputs, ~14-bit sums in the accumulator over all of K (sm_90a)",
    .shape_text = "v18's block (384 = TMA producer + 2 consumer warpgroups, setmaxnreg 40/232) in clusters of 2 CTAs "
                  "along M, persistent over pairs of 128x256 C tiles (grid 2 x min(pairs, clusters the GPU holds at once)); each CTA "
                  "multicasts 128 rows of the shared B tile into both; wgmma m64n256k32 e4m3, 4-stage ring of "
                  "128-wide k-steps freed by the consumer warps of both CTAs; K-major operands, the others first "
                  "packed K-major by pack_k_major inside the timed region (as v15)",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(wgmma_fp8_v22::persistent_blocks(M(s), N(s))), dim3(wgmma_fp8_v22::THREADS),
                    wgmma_fp8_v22::kSharedBytes};
    },
    .flops = flops,
    // v18's bytes (fp8_bytes) less half of B's tile reads: one multicast per pair of tiles.
    .bytes = [](const Sizes& s) {
      const Fp8Route r = fp8_route(s);
      return fp8_bytes(s, wgmma_fp8_v22::BM, wgmma_fp8_v22::BN) -
             double(r.pitch) * N(s) * (ceil_div(M(s), wgmma_fp8_v22::BM) - warpnet::pair_rows(M(s), wgmma_fp8_v22::BM));
    },
    .min_sm = 90,
    .arch_specific = true,
    .launch = launch_v22,
    .copy = kThisCopy,
    .input_format = &simt::kE4M3,
    .tensor_op = Kernel::TensorOp::wgmma,
    // v18's accumulation: every wgmma into the one accumulator (see v15's registration).
    .accumulator_bits = 14,
}};

}  // namespace
}  // namespace warpnet::device::gemm
