#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/12_mma_sync.cu"           // for shapes TMA cannot describe
#include "kernels/matmul/16_wgmma_persistent.cu"  // includes 13_wgmma_tma.cu, whose pieces it uses
}  // namespace
#include "device/kernels/matmul/setmaxnreg_registers.hpp"
#include "device/kernels/matmul/stream_k_workspace.hpp"
#include "device/kernels/matmul/v12_fallback.hpp"

namespace warpnet::device::gemm {
namespace {



template <bool TA, bool TB>
void launch_v16(const Sizes& s, const Launch& l, Buffers b) {
  const auto* A = static_cast<const __nv_bfloat16*>(b[0]);
  const auto* B = static_cast<const __nv_bfloat16*>(b[1]);
  if (!wgmma_v13::describable<TA, TB>(M(s), N(s), K(s), A, B)) return launch_v12_fallback(s, b);  // checks its own launch
  WN_CHECK(wgmma_v13::encode_tiled(), "matmul/16_wgmma_persistent: the driver has no cuTensorMapEncodeTiled");
  require_launch_registers<gemm_wgmma_persistent<TA, TB>>("matmul/16_wgmma_persistent");
  const int blocks = int(l.grid.x);
  const StreamKWorkspace stream_k("matmul/16_wgmma_persistent", blocks, M(s), N(s), K(s), wgmma_v16::BK);
  WN_CHECK((wgmma_v16::launch<TA, TB>(blocks, M(s), N(s), K(s), A, B, static_cast<float*>(b[2]), stream_k.data())),
           "matmul/16_wgmma_persistent: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s), " K=", K(s),
           " trans_a=", TA, " trans_b=", TB, tensor_map_refusal());
  check_launch();
}

const Registration wgmma_persistent{Kernel{
    .op = "matmul",
    .version = 16,
    .name = "wgmma_persistent",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (wgmma, sm_90a)",
    .shape_text = "block (384) = TMA producer (setmaxnreg 40) + 2 consumer warpgroups (setmaxnreg 232), persistent "
                  "grid (min(tiles, SMs)) walking 128x256 C tiles in groups of 8 tile rows (with WARPNET_STREAM_K=1 "
                  "a last partial round's tiles shared out by k-steps, stream-K); wgmma m64n256k16 per consumer, "
                  "4-stage mbarrier ring of 64-wide k-steps carried across tiles, 128B swizzle; when A's "
                  "or B's contiguous dimension is not a multiple of 8, v12 runs instead",
    // The grid's x is the block count whatever the problem; the launch reads only that.
    .shape = [](const Sizes& s) {
      return Launch{dim3(wgmma_v16::persistent_blocks(M(s), N(s))), dim3(wgmma_v16::THREADS),
                    wgmma_v16::kSharedBytes<false, false>};
    },
    .flops = flops,
    // 128x256 tiles of 2-byte inputs, fetched once each by TMA (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, wgmma_v16::BM, wgmma_v16::BN, 2); },
    .min_sm = 90,
    .arch_specific = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const bool ta = s[3] != 0, tb = s[4] != 0;
      if (ta) tb ? launch_v16<true, true>(s, l, b) : launch_v16<true, false>(s, l, b);
      else tb ? launch_v16<false, true>(s, l, b) : launch_v16<false, false>(s, l, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::wgmma,
}};

}  // namespace
}  // namespace warpnet::device::gemm
