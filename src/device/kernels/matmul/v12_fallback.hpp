// v12 with its registered tiles, for the TMA versions (13, 16) on operands
// TMA cannot describe (a row pitch off 16 bytes). Included by their
// registrations after kernels/matmul/12_mma_sync.cu.
#pragma once
#include "device/kernels/matmul/gemm_registration.hpp"

namespace warpnet::device::gemm {
namespace {

inline void launch_v12_fallback(const Sizes& s, Buffers b) {
  launch_gemm<__nv_bfloat16>(s, Launch{tile_grid(s, 128, 128), dim3(256), 0}, b,
                             []<bool TA, bool TB>() { return gemm_mma_sync<128, 128, 32, 64, 32, TA, TB>; });
}

}  // namespace
}  // namespace warpnet::device::gemm
