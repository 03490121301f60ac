#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/09_warptiling.cu"  // for shapes TMA cannot describe
#include "kernels/matmul/20_sgemm_tma.cu"   // includes 16_wgmma_persistent.cu, whose ring, walk and registers it uses
}  // namespace
#include "device/kernels/matmul/setmaxnreg_registers.hpp"

namespace warpnet::device::gemm {
namespace {

template <bool TA, bool TB>
void launch_v20(const Sizes& s, const Launch& l, Buffers b) {
  const auto* A = static_cast<const float*>(b[0]);
  const auto* B = static_cast<const float*>(b[1]);
  if (!wgmma_v13::describable<TA, TB>(M(s), N(s), K(s), A, B, 4)) {  // a row pitch off 16 bytes: v09, as registered
    launch_gemm(s, Launch{tile_grid(s, 128, 128), dim3(256), 0}, b,
                []<bool TA_, bool TB_>() { return sgemm_warptiling<128, 128, 16, 64, 32, 2, 2, 4, 4, TA_, TB_>; });
    return;
  }
  WN_CHECK(wgmma_v13::encode_tiled(), "matmul/20_sgemm_tma: the driver has no cuTensorMapEncodeTiled");
  require_launch_registers<sgemm_tma<TA, TB>>("matmul/20_sgemm_tma");
  WN_CHECK((sgemm_v20::launch<TA, TB>(int(l.grid.x), M(s), N(s), K(s), A, B, static_cast<float*>(b[2]))),
           "matmul/20_sgemm_tma: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s), " K=", K(s),
           " trans_a=", TA, " trans_b=", TB, tensor_map_refusal());
  check_launch();
}

const Registration sgemm_tma_registration{Kernel{
    .op = "matmul",
    .version = 20,
    .name = "sgemm_tma",
    .precision = "fp32 (CUDA cores; TMA: sm_90a)",
    .shape_text = "block (384) = TMA producer warpgroup (setmaxnreg 40) + 2 consumer warpgroups (setmaxnreg 232), "
                  "persistent grid (min(tiles, SMs)) walking 128x256 C tiles in groups of 8 tile rows (v16's); "
                  "8x16 FFMA per consumer thread, 16-byte loads from the 128B swizzle, 4-stage mbarrier ring of "
                  "32-wide k-steps carried across tiles; when A's or B's contiguous dimension is not a multiple "
                  "of 4, v09 runs instead",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(wgmma_v16::persistent_blocks(M(s), N(s))), dim3(sgemm_v20::THREADS),
                    sgemm_v20::kSharedBytes<false, false>};
    },
    .flops = flops,
    // 128x256 tiles of 4-byte inputs, fetched once each by TMA (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, sgemm_v20::BM, sgemm_v20::BN); },
    .min_sm = 90,
    .arch_specific = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const bool ta = s[3] != 0, tb = s[4] != 0;
      if (ta) tb ? launch_v20<true, true>(s, l, b) : launch_v20<true, false>(s, l, b);
      else tb ? launch_v20<false, true>(s, l, b) : launch_v20<false, false>(s, l, b);
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::gemm
