#include "device/kernels/matmul/gemm_registration.hpp"
#include "device/kernels/tuned_choices.hpp"

namespace {
#include "kernels/matmul/24_mma_sync_autotuned.cu"  // includes 23, 17 and 12
}  // namespace

namespace warpnet::device::gemm {
namespace {

// The measured winner for these sizes, or the table's choice.
int choice(const Sizes& s) { return tuned().find(s).value_or(mma_sync_v24::table_choice(M(s), N(s))); }

Launch shape_of(int candidate, const Sizes& s) {
  return mma_sync_v24::with_candidate(candidate, [&]<class T>() {
    const size_t shared = with_layout(s, []<bool TA, bool TB>() { return T::template dynamic_shared<TA, TB>(); });
    return Launch{T::grid(M(s), N(s)), dim3(T::THREADS), shared};
  });
}

// Candidate i on buffers {A, B, C}; its grid and shared memory follow from the sizes (shape_of).
void launch_candidate(int i, const Sizes& s, Buffers b) {
  with_layout(s, [&]<bool TA, bool TB>() {
    mma_sync_v24::launch<TA, TB>(i, M(s), N(s), K(s), static_cast<const __nv_bfloat16*>(b[0]),
                                 static_cast<const __nv_bfloat16*>(b[1]), static_cast<float*>(b[2]));
  });
  check_launch();
}

#if defined(__CUDACC__)
std::string tune_on_gpu(const Sizes& s);  // below
#endif

const Registration mma_sync_autotuned{Kernel{
    .op = "matmul",
    .version = 24,
    .name = "mma_sync_autotuned",
    // Inputs stored as bf16 (relative error 2^-8 each against fp32); products exact, sums fp32.
    .precision = "bf16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "v12's, v17's or v23's kernel in one of 15 configurations per problem (128x128 in 8 warps of 64x32 "
                  "or 4 of 64x64 with 2-4 stages, 128x256 in 8 warps with 3 or 4 stages, v17's with its own or "
                  "hoisted copies and v23's; 64x64 in 4 warps), measured by "
                  "the tune on a GPU, else v12's 128x128 when it gives >= 132 blocks, else 64x64: e.g. block "
                  "(256), grid (ceil(N/128), ceil(M/128)) for v12's",
    .shape = [](const Sizes& s) { return shape_of(choice(s), s); },
    .flops = flops,
    // The chosen block's A and B tiles of 2-byte inputs (see tiled_bytes).
    .bytes = [](const Sizes& s) {
      return mma_sync_v24::with_candidate(choice(s), [&]<class T>() { return tiled_bytes(s, T::BM, T::BN, 2); });
    },
    .launch = [](const Sizes& s, const Launch&, Buffers b) { launch_candidate(choice(s), s, b); },
    .copy = kThisCopy,
    .input_format = &simt::kBfloat16,
    .tensor_op = Kernel::TensorOp::mma_sync,
#if defined(__CUDACC__)
    .tune = tune_on_gpu,
#endif
    .candidate = [](const Sizes& s) { return mma_sync_v24::candidate_name(choice(s)); },
}};

}  // namespace
}  // namespace warpnet::device::gemm

#if defined(__CUDACC__)
#include "device/kernels/matmul/matmul_tune.hpp"

namespace warpnet::device::gemm {
namespace {

std::string tune_on_gpu(const Sizes& s) {
  const GemmCandidates candidates{
      .who = "matmul/24's tune",
      .count = mma_sync_v24::kCandidates,
      .name = mma_sync_v24::candidate_name,
      .launch = launch_candidate,
  };
  return describe_tuning("matmul/24's tune", tune_gemm<__nv_bfloat16>(candidates, s, tuned()));
}

}  // namespace
}  // namespace warpnet::device::gemm
#endif
