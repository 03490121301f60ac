#include "device/kernels/matmul/gemm_registration.hpp"

namespace {
#include "kernels/matmul/23_mma_sync_pipelined.cu"  // includes 17 and 12, whose pieces it uses
}  // namespace

namespace warpnet::device::gemm {
namespace {

using mma_sync_v23::Registered;

template <bool TA, bool TB>
void launch_v23(const Sizes& s, Buffers b) {
  mma_sync_v23::launch<Registered, TA, TB>(M(s), N(s), K(s), static_cast<const __nv_bfloat16*>(b[0]),
                                           static_cast<const __nv_bfloat16*>(b[1]), static_cast<float*>(b[2]));
  check_launch();
}

const Registration mma_sync_pipelined{Kernel{
    .op = "matmul",
    .version = 23,
    .name = "mma_sync_pipelined",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "v17's: block (256) = 8 warps, grid (ceil(M/128) * ceil(N/256)) in groups of 8 tile rows, a "
                  "128x256 C tile, 64x64 per warp, 4-stage cp.async ring in 100-120 KiB of dynamic shared "
                  "memory; each warp's ldmatrix one k16 slice ahead of its mma.sync, two fragment sets in registers",
    .shape = [](const Sizes& s) {
      const bool ta = s[3] != 0, tb = s[4] != 0;
      const size_t shared = ta ? (tb ? Registered::kSharedBytes<true, true> : Registered::kSharedBytes<true, false>)
                               : (tb ? Registered::kSharedBytes<false, true> : Registered::kSharedBytes<false, false>);
      return Launch{mma_sync_v17::grid(M(s), N(s), Registered::BN), dim3(Registered::THREADS), shared};
    },
    .flops = flops,
    // 128x256 tiles of 2-byte inputs (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, mma_sync_v17::BM, Registered::BN, 2); },
    // The launch takes its grid and shared memory from the sizes, as shape() gives them.
    .launch = [](const Sizes& s, const Launch&, Buffers b) {
      const bool ta = s[3] != 0, tb = s[4] != 0;
      if (ta) tb ? launch_v23<true, true>(s, b) : launch_v23<true, false>(s, b);
      else tb ? launch_v23<false, true>(s, b) : launch_v23<false, false>(s, b);
    },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
}};

}  // namespace
}  // namespace warpnet::device::gemm
