// matmul v12 (bf16 mma.sync) and v14 (fp8 mma.sync) under the checker and
// tracer: clean at awkward sizes in every layout, and every ldmatrix row read
// (a 16-byte shared load) served in the fewest wavefronts — what the 16-byte
// padding of their shared rows is for.
#include <doctest/doctest.h>

// Before the kernel headers (see test_tensor_cores_traced.cpp).
#include "simt/trace.hpp"

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/device_buffer.hpp"

// A named namespace, not an anonymous one: the registration includes the same
// kernels, and the emulator adds up the __shared__ variables of every kernel
// instance with the same mangled name when it checks the 48 KB static limit.
namespace gemms_traced_test {
#include "kernels/matmul/12_mma_sync.cu"
#include "kernels/matmul/14_fp8.cu"

using warpnet::simt::Space;

// The ldmatrix rows of the last launch: requests, and whether each was conflict-free.
uint64_t conflict_free_ldmatrix_requests() {
  const auto trace = warpnet::simt::last_trace();
  REQUIRE(trace.has_value());
  uint64_t requests = 0;
  for (const auto& i : trace->instructions) {
    if (i.space != Space::shared || i.bytes != 16 || i.write) continue;
    CHECK(i.wavefronts == i.ideal_wavefronts);
    requests += i.requests;
  }
  return requests;
}

template <bool Fp8, bool TA, bool TB>
void check_traced(int M, int N, int K) {
  INFO((Fp8 ? "v14" : "v12"), " M=", M, " N=", N, " K=", K, " TA=", TA, " TB=", TB);
  DeviceBuffer<float> d_c(size_t(M) * N);
  const dim3 grid((N + 127) / 128, (M + 127) / 128);
  // All ones times all twos: every output is 2K.
  if constexpr (Fp8) {
    DeviceBuffer<__nv_fp8_e4m3> d_a(std::vector<__nv_fp8_e4m3>(size_t(M) * K, __nv_fp8_e4m3(1.0f)));
    DeviceBuffer<__nv_fp8_e4m3> d_b(std::vector<__nv_fp8_e4m3>(size_t(K) * N, __nv_fp8_e4m3(2.0f)));
    warpnet::simt::launch(gemm_fp8<128, 128, 64, 64, 32, TA, TB>, grid, dim3(256), 0, M, N, K, d_a.get(), d_b.get(),
                          d_c.get());
  } else {
    DeviceBuffer<__nv_bfloat16> d_a(std::vector<__nv_bfloat16>(size_t(M) * K, __float2bfloat16(1.0f)));
    DeviceBuffer<__nv_bfloat16> d_b(std::vector<__nv_bfloat16>(size_t(K) * N, __float2bfloat16(2.0f)));
    warpnet::simt::launch(gemm_mma_sync<128, 128, 32, 64, 32, TA, TB>, grid, dim3(256), 0, M, N, K, d_a.get(),
                          d_b.get(), d_c.get());
  }
  CHECK(d_c.download() == std::vector<float>(size_t(M) * N, 2.0f * K));
  // Per block, warp and 16 (bf16) or 32 (fp8) of K: 4 ldmatrix.x4 for A, 2 for B.
  const int k_per_mma = Fp8 ? 32 : 16, k_tile = Fp8 ? 64 : 32;
  const uint64_t k_steps = uint64_t((K + k_tile - 1) / k_tile) * (k_tile / k_per_mma);
  CHECK(conflict_free_ldmatrix_requests() == uint64_t(grid.x) * grid.y * 8 * k_steps * 6);
}

template <bool Fp8>
void check_all_layouts(int M, int N, int K) {
  check_traced<Fp8, false, false>(M, N, K);
  check_traced<Fp8, true, false>(M, N, K);
  check_traced<Fp8, false, true>(M, N, K);
  check_traced<Fp8, true, true>(M, N, K);
}

}  // namespace gemms_traced_test
using namespace gemms_traced_test;

TEST_CASE("trace: matmul v12 runs clean in every layout, its ldmatrix rows conflict-free") {
  DeterministicScope deterministic;
  check_all_layouts<false>(128, 128, 64);  // cp.async everywhere
  check_all_layouts<false>(33, 130, 20);   // element-wise staging where rows are not 16-byte aligned
}

TEST_CASE("trace: matmul v14 runs clean in every layout, its ldmatrix rows conflict-free") {
  DeterministicScope deterministic;
  check_all_layouts<true>(128, 128, 128);
  check_all_layouts<true>(33, 130, 20);
}
