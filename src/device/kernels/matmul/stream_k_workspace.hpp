// The stream-K workspace of a persistent wgmma launch (v16, v18; see
// kernels/common/stream_k.hpp). Off unless WARPNET_STREAM_K=1 is in the
// environment: on the H200 on 2026-12-04 the first version of it gained
// nothing at 8192^3 and cost some 30 us a launch at 4096^3 (the kernels'
// headers); the version since, which signals a warp at a time, has not yet
// run on a GPU. When on, made when the launch's plan shares tiles and its
// blocks can all be resident at once, which stream-K's waits need (no more
// blocks than SMs: both kernels fit one block per SM); otherwise none, and
// the kernel walks every tile whole. Included by their registrations after
// kernels/matmul/16_wgmma_persistent.cu.
#pragma once
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/error.hpp"
#include "device/kernels/workspace.hpp"

namespace warpnet::device::gemm {
namespace {

class StreamKWorkspace {
 public:
  // Slot 0 may hold the launch's packed operands (v18, fp8_operands.hpp).
  static constexpr int kSlot = 1;
  // `blocks` blocks over M x N in 128x256 tiles, K in steps of `k_step`.
  StreamKWorkspace(const char* id, int blocks, int M, int N, int K, int k_step) {
    // Asked first, and at every launch (a test turns it on midway): off, a launch asks nothing of the device.
    if (const char* env = std::getenv("WARPNET_STREAM_K"); !env || std::strcmp(env, "1") != 0) return;
    const warpnet::StreamK plan =
        warpnet::plan_stream_k(wgmma_v16::tile_count(M, N), warpnet::ceil_div(K, k_step), blocks, true);
    if (plan.shared_blocks == 0 || blocks > wgmma_v16::sm_count() || blocks > warpnet::kMaxStreamKBlocks) return;
    workspace_.emplace(warpnet::stream_k_bytes(blocks, wgmma_v16::kPartialFloats), kSlot);
    if (!workspace_->created()) return;  // its flags are as the last launch left them: zero
    check_cuda(cudaMemsetAsync(workspace_->data(), 0, warpnet::stream_k_flag_bytes(), launch_stream()), id,
               ": zeroing stream-K's flags: cudaMemsetAsync");
  }
  void* data() const { return workspace_ ? workspace_->data() : nullptr; }

 private:
  std::optional<Workspace> workspace_;
};

}  // namespace
}  // namespace warpnet::device::gemm
