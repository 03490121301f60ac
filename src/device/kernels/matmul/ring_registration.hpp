// What the registrations of matmul v17 and v23 share: v17's 128x256 block of
// 8 warps with its 4-stage cp.async ring (mma_sync_v17::Registered), its
// launch shape, bytes and launch. Included after the kernel file, which
// defines mma_sync_v17; an anonymous namespace as the other registration
// headers (../copy.hpp).
#pragma once
#include "device/kernels/matmul/gemm_registration.hpp"

namespace warpnet::device::gemm {
namespace {

using mma_sync_v17::Registered;

// The grid of 128x256 tiles in grouped order, 256 threads, the layout's ring in dynamic shared memory.
inline Launch ring_shape(const Sizes& s) {
  const size_t shared = with_layout(s, []<bool TA, bool TB>() { return Registered::shared_bytes<TA, TB>(); });
  return Launch{mma_sync_v17::grid(M(s), N(s), Registered::BN), dim3(Registered::THREADS), shared};
}

// 128x256 tiles of 2-byte inputs (see tiled_bytes).
inline double ring_bytes(const Sizes& s) { return tiled_bytes(s, mma_sync_v17::BM, Registered::BN, 2); }

// launch.template operator()<TA, TB>(M, N, K, A, B, C) for the layout in the
// sizes, on buffers {A, B, C}: the kernel's host launcher, which takes its
// grid and shared memory from the sizes as ring_shape gives them.
template <class Launcher>
void launch_ring(const Sizes& s, Buffers b, Launcher launch) {
  with_layout(s, [&]<bool TA, bool TB>() {
    launch.template operator()<TA, TB>(M(s), N(s), K(s), static_cast<const __nv_bfloat16*>(b[0]),
                                       static_cast<const __nv_bfloat16*>(b[1]), static_cast<float*>(b[2]));
  });
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::gemm
