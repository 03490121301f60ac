#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/12_mma_sync.cu"     // for shapes TMA cannot describe
#include "kernels/matmul/19_mma_sync_tma.cu"  // includes 16_wgmma_persistent.cu, whose tiles and ring it uses
}  // namespace
#include "device/kernels/matmul/setmaxnreg_registers.hpp"
#include "device/kernels/matmul/v12_fallback.hpp"

namespace warpnet::device::gemm {
namespace {

template <bool TA, bool TB>
void launch_v19(const Sizes& s, const Launch& l, Buffers b) {
  const auto* A = static_cast<const __nv_bfloat16*>(b[0]);
  const auto* B = static_cast<const __nv_bfloat16*>(b[1]);
  if (!wgmma_v13::describable<TA, TB>(M(s), N(s), K(s), A, B)) return launch_v12_fallback(s, b);  // checks its own launch
  WN_CHECK(wgmma_v13::encode_tiled(), "matmul/19_mma_sync_tma: the driver has no cuTensorMapEncodeTiled");
  require_launch_registers<gemm_mma_sync_tma<TA, TB>>("matmul/19_mma_sync_tma");
  WN_CHECK((mma_sync_v19::launch<TA, TB>(int(l.grid.x), M(s), N(s), K(s), A, B, static_cast<float*>(b[2]))),
           "matmul/19_mma_sync_tma: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s), " K=", K(s),
           " trans_a=", TA, " trans_b=", TB, tensor_map_refusal());
  check_launch();
}

const Registration mma_sync_tma{Kernel{
    .op = "matmul",
    .version = 19,
    .name = "mma_sync_tma",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (tensor cores, TMA: sm_90a)",
    .shape_text = "block (384) = TMA producer warpgroup (setmaxnreg 40) + 8 consumer warps (setmaxnreg 232), persistent grid (min(tiles, SMs)) walking "
                  "128x256 C tiles in groups of 8 tile rows (v16's); 64x64 per warp (4x8 mma.sync m16n8k16, "
                  "ldmatrix.x4 from the 128B swizzle), 4-stage mbarrier ring of 64-wide k-steps carried across "
                  "tiles; when A's or B's contiguous dimension is not a multiple of 8, v12 runs instead",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(wgmma_v16::persistent_blocks(M(s), N(s))), dim3(mma_sync_v19::THREADS),
                    wgmma_v16::kSharedBytes<false, false>};
    },
    .flops = flops,
    // 128x256 tiles of 2-byte inputs, fetched once each by TMA (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, mma_sync_v19::BM, mma_sync_v19::BN, 2); },
    .min_sm = 90,
    .arch_specific = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const bool ta = s[3] != 0, tb = s[4] != 0;
      if (ta) tb ? launch_v19<true, true>(s, l, b) : launch_v19<true, false>(s, l, b);
      else tb ? launch_v19<false, true>(s, l, b) : launch_v19<false, false>(s, l, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
}};

}  // namespace
}  // namespace warpnet::device::gemm
