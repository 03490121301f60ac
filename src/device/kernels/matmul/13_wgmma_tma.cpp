#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/12_mma_sync.cu"  // for shapes TMA cannot describe
#include "kernels/matmul/13_wgmma_tma.cu"
}  // namespace
#include "device/kernels/matmul/v12_fallback.hpp"

namespace warpnet::device::gemm {
namespace {



template <bool TA, bool TB>
void launch_v13(const Sizes& s, const Launch& l, Buffers b) {
  const auto* A = static_cast<const __nv_bfloat16*>(b[0]);
  const auto* B = static_cast<const __nv_bfloat16*>(b[1]);
  if (!wgmma_v13::describable<TA, TB>(M(s), N(s), K(s), A, B)) return launch_v12_fallback(s, b);  // checks its own launch
  WN_CHECK(wgmma_v13::encode_tiled(), "matmul/13_wgmma_tma: the driver has no cuTensorMapEncodeTiled");
  WN_CHECK((wgmma_v13::launch<TA, TB>(l.grid, M(s), N(s), K(s), A, B, static_cast<float*>(b[2]))),
           "matmul/13_wgmma_tma: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s), " K=", K(s),
           " trans_a=", TA, " trans_b=", TB, tensor_map_refusal());
  check_launch();
}

const Registration wgmma_tma{Kernel{
    .op = "matmul",
    .version = 13,
    .name = "wgmma_tma",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "block (384) = TMA producer + 2 consumer warpgroups, grid (ceil(N/128), ceil(M/128)): a 128x128 C "
                  "tile, wgmma m64n128k16 per consumer, 4-stage mbarrier ring of 64-wide k-steps, 128B swizzle; "
                  "when A's or B's contiguous dimension is not a multiple of 8, v12 runs instead",
    .shape = [](const Sizes& s) {
      return Launch{tile_grid(s, 128, 128), dim3(wgmma_v13::THREADS), wgmma_v13::kSharedBytes<false, false>};
    },
    .flops = flops,
    // 128x128 tiles of 2-byte inputs, fetched once each by TMA (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 128, 128, 2); },
    .min_sm = 90,
    .arch_specific = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const bool ta = s[3] != 0, tb = s[4] != 0;
      if (ta) tb ? launch_v13<true, true>(s, l, b) : launch_v13<true, false>(s, l, b);
      else tb ? launch_v13<false, true>(s, l, b) : launch_v13<false, false>(s, l, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wgmma,
}};

}  // namespace
}  // namespace warpnet::device::gemm
