#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/12_mma_sync.cu"       // for shapes TMA cannot describe
#include "kernels/matmul/21_wgmma_cluster.cu"  // includes 16_wgmma_persistent.cu and 13_wgmma_tma.cu, whose pieces it uses
}  // namespace
#include "device/kernels/matmul/setmaxnreg_registers.hpp"
#include "device/kernels/matmul/v12_fallback.hpp"

namespace warpnet::device::gemm {
namespace {

template <bool TA, bool TB>
void launch_v21(const Sizes& s, const Launch& l, Buffers b) {
  const auto* A = static_cast<const __nv_bfloat16*>(b[0]);
  const auto* B = static_cast<const __nv_bfloat16*>(b[1]);
  if (!wgmma_v13::describable<TA, TB>(M(s), N(s), K(s), A, B)) return launch_v12_fallback(s, b);  // checks its own launch
  WN_CHECK(wgmma_v13::encode_tiled(), "matmul/21_wgmma_cluster: the driver has no cuTensorMapEncodeTiled");
  require_launch_registers<gemm_wgmma_cluster<TA, TB>>("matmul/21_wgmma_cluster");
  WN_CHECK(l.grid.x % warpnet::kPair == 0, "matmul/21_wgmma_cluster: a grid of ", l.grid.x,
           " blocks is not a whole number of clusters of ", warpnet::kPair);
  WN_CHECK((wgmma_v21::launch<TA, TB>(int(l.grid.x), M(s), N(s), K(s), A, B, static_cast<float*>(b[2]))),
           "matmul/21_wgmma_cluster: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s), " K=", K(s),
           " trans_a=", TA, " trans_b=", TB, tensor_map_refusal());
  check_launch();
}

const Registration wgmma_cluster{Kernel{
    .op = "matmul",
    .version = 21,
    .name = "wgmma_cluster",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "v16's block (384 = TMA producer + 2 consumer warpgroups, setmaxnreg 40/232) in clusters of 2 CTAs "
                  "along M, persistent over pairs of 128x256 C tiles (grid 2 x min(pairs, clusters the GPU holds at once)); each CTA "
                  "multicasts half of the shared B tile into both; 4-stage ring freed by the consumer warps of both "
                  "CTAs; when A's or B's contiguous dimension is not a multiple of 8, v12 runs instead",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(wgmma_v21::persistent_blocks(M(s), N(s))), dim3(wgmma_v21::THREADS),
                    wgmma_v21::kSharedBytes<false, false>};
    },
    .flops = flops,
    // Each 128x256 tile's A rows once; its B columns once per pair of tiles (the multicast).
    .bytes = [](const Sizes& s) {
      return 2.0 * (double(M(s)) * K(s) * ceil_div(N(s), wgmma_v21::BN) +
                    double(K(s)) * N(s) * ceil_div(M(s), wgmma_v21::BM * warpnet::kPair)) +
             4.0 * M(s) * N(s);
    },
    .min_sm = 90,
    .arch_specific = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const bool ta = s[3] != 0, tb = s[4] != 0;
      if (ta) tb ? launch_v21<true, true>(s, l, b) : launch_v21<true, false>(s, l, b);
      else tb ? launch_v21<false, true>(s, l, b) : launch_v21<false, false>(s, l, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wgmma,
}};

}  // namespace
}  // namespace warpnet::device::gemm
