// cp.async on the emulator: copies land at the wait_group that waits for
// their group, not before; and the HGEMM that pipelines them with ldmatrix
// and mma.sync equals a plain loop (small-integer inputs: exact in fp16 and fp32).
#include <doctest/doctest.h>

#include <tuple>

#include "kernels/common/ptx.hpp"
#include "tests/simt/device_buffer.hpp"

namespace {
#include "kernels/examples/tensor_cores/hgemm_mma.cu"

// src: (8,) floats; seen: (5, 8) what one thread observes in shared memory:
// after issuing two groups, after wait_group 1, after wait_group 0, and a 16-byte
// copy with 8 source bytes (zero-filled upper half).
__global__ void async_groups(const float* src, float* seen) {
  __shared__ __align__(16) float s[8];
  for (int i = 0; i < 8; ++i) s[i] = -1.0f;
  warpnet::ptx::cp_async_ca<8>(&s[0], &src[0]);
  warpnet::ptx::cp_async_commit();  // group 1: s[0..1]
  warpnet::ptx::cp_async_ca<16>(&s[4], &src[4]);
  warpnet::ptx::cp_async_commit();  // group 2: s[4..7]
  for (int i = 0; i < 8; ++i) seen[0 * 8 + i] = s[i];
  warpnet::ptx::cp_async_wait<1>();  // group 1 done, group 2 may still fly
  for (int i = 0; i < 8; ++i) seen[1 * 8 + i] = s[i];
  warpnet::ptx::cp_async_wait<0>();
  for (int i = 0; i < 8; ++i) seen[2 * 8 + i] = s[i];
  warpnet::ptx::cp_async_cg(&s[0], &src[0], 8);
  warpnet::ptx::cp_async_wait_all();
  for (int i = 0; i < 8; ++i) seen[3 * 8 + i] = s[i];
  warpnet::ptx::cp_async_ca<4>(&s[1], &src[2]);  // uncommitted copies are not waited for by wait_group
  warpnet::ptx::cp_async_wait<0>();
  for (int i = 0; i < 8; ++i) seen[4 * 8 + i] = s[i];
}

__global__ void misaligned_async(const float* src) {
  __shared__ __align__(16) float s[8];
  warpnet::ptx::cp_async_cg(&s[1], src);
  warpnet::ptx::cp_async_wait_all();
}

std::vector<__half> to_half(const std::vector<float>& v) {
  std::vector<__half> h;
  for (float x : v) h.push_back(__float2half(x));
  return h;
}

}  // namespace

TEST_CASE("cp.async: copies land at the wait_group for their group; src-size zero-fills") {
  const std::vector<float> src{1, 2, 3, 4, 5, 6, 7, 8};
  DeviceBuffer<float> d_src(src), seen(5 * 8);
  warpnet::simt::launch(async_groups, dim3(1), dim3(1), 0, d_src.get(), seen.get());
  const auto v = seen.download();
  auto row = [&](int r) { return std::vector<float>(v.begin() + 8 * r, v.begin() + 8 * r + 8); };
  CHECK(row(0) == std::vector<float>{-1, -1, -1, -1, -1, -1, -1, -1});
  CHECK(row(1) == std::vector<float>{1, 2, -1, -1, -1, -1, -1, -1});
  CHECK(row(2) == std::vector<float>{1, 2, -1, -1, 5, 6, 7, 8});
  CHECK(row(3) == std::vector<float>{1, 2, 0, 0, 5, 6, 7, 8});
  CHECK(row(4) == row(3));

  CHECK_THROWS_WITH_AS(warpnet::simt::launch(misaligned_async, dim3(1), dim3(1), 0, d_src.get()),
                       doctest::Contains("cp.async.cg.shared.global at "), warpnet::simt::LaunchError);
}

TEST_CASE("tensor cores: HGEMM with cp.async, ldmatrix and mma.sync equals a plain loop off the tile grid") {
  // 40x24x40: K, N multiples of 8 (16-byte cp.async chunks, zero-filled past M and K);
  // 33x17x19: rows not 16-byte aligned (element copies); 64x64x48: full tiles, three k-steps.
  for (const auto& [M, N, K] : {std::tuple{40, 24, 40}, {33, 17, 19}, {64, 64, 48}, {1, 1, 1}}) {
    INFO("M=", M, " N=", N, " K=", K);
    std::vector<float> a(size_t(M) * K), b(size_t(K) * N);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 7 % 9) - 4);
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 5 % 7) - 3);
    std::vector<float> want(size_t(M) * N, 0.0f);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k) want[m * N + n] += a[m * K + k] * b[k * N + n];
    DeviceBuffer<__half> d_a(to_half(a)), d_b(to_half(b));
    DeviceBuffer<float> d_c(size_t(M) * N);
    warpnet::simt::launch(hgemm_mma_ldmatrix, dim3((N + 31) / 32, (M + 31) / 32), dim3(128), 0, M, N, K, d_a.get(),
                          d_b.get(), d_c.get());
    CHECK(d_c.download() == want);
  }
}
