// Tensor-core kernels under the checker and tracer: no false race, bounds or
// uninitialized-read reports; ldmatrix rows and cp.async copies are seen as
// the 16-byte accesses they are. Compiled with warpnet_simt_traced.
#include <doctest/doctest.h>

#include <tuple>

// Before the kernel headers: it pulls in standard headers that spell
// __attribute__((__noinline__)), which cuda.hpp's __noinline__ macro would break.
#include "simt/trace.hpp"

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/device_buffer.hpp"

namespace {
#include "kernels/examples/tensor_cores/hgemm_mma.cu"
#include "kernels/matmul/11_wmma.cu"
}  // namespace

using warpnet::simt::Space;

namespace {

// One warpgroup computes two tiles into one set of accumulators (fp8
// m64n128k32 on shared tiles its threads zero), reading them for the
// epilogue between. Misuses: kNoWgmmaFence forgets the wgmma.fence between
// those reads and the second tile's wgmma; kNoProxyFence the
// fence.proxy.async after the zeros (plain stores, which the wgmma reads
// through the async proxy); kNoBarrier the __syncthreads() after them.
enum Misuse { kNone, kNoWgmmaFence, kNoProxyFence, kNoBarrier };
__global__ void two_tiles_one_accumulator(float* C, int misuse) {
  using namespace warpnet::ptx;
  unsigned char* raw = warpnet::dynamic_shared<unsigned char>();
  unsigned char* a = raw + (1024 - shared_address(raw) % 1024) % 1024;  // the 128-byte swizzle's alignment
  unsigned char* b = a + 64 * 128;
  for (int i = int(threadIdx.x); i < 64 * 128 + 128 * 128; i += int(blockDim.x)) a[i] = 0;
  if (misuse != kNoProxyFence) fence_proxy_async_shared();  // plain stores, read by the wgmma (the async proxy)
  if (misuse != kNoBarrier) __syncthreads();
  // K-major, 128-byte swizzle: rows of 128 bytes, 1024 bytes between groups of 8 rows.
  auto descriptor = [](uint32_t address) {
    return uint64_t((address & 0x3FFFFu) >> 4) | uint64_t(1024 >> 4) << 32 | uint64_t(1) << 62;
  };
  float acc[64] = {};
  for (int tile = 0; tile < 2; ++tile) {
    if (tile == 0 || misuse != kNoWgmmaFence) wgmma_fence();
    wgmma_m64n128k32_e4m3(acc, descriptor(shared_address(a)), descriptor(shared_address(b)));
    wgmma_commit();
    wgmma_wait<0>();
    C[tile * 128 + int(threadIdx.x)] = acc[0];  // the epilogue reads the registers
  }
}

}  // namespace

TEST_CASE("traced: a wgmma after the threads read its accumulators needs a wgmma.fence between") {
  DeterministicScope deterministic;
  DeviceBuffer<float> c(2 * 128);
  const size_t shared = 1024 + 64 * 128 + 128 * 128;
  const auto launch = [&](Misuse misuse) {
    warpnet::simt::launch(two_tiles_one_accumulator, dim3(1), dim3(128), shared, c.get(), int(misuse));
  };
  REQUIRE_NOTHROW(launch(kNone));
  CHECK(c.download() == std::vector<float>(2 * 128, 0.0f));
  CHECK_THROWS_WITH_AS(launch(kNoWgmmaFence), doctest::Contains("lane 0 accessed its accumulators at "),
                       warpnet::simt::LaunchError);
  CHECK_THROWS_WITH_AS(launch(kNoWgmmaFence),
                       doctest::Contains("(two_tiles_one_accumulator) after the wgmma.wait_group that gave them back, "
                                         "and no wgmma.fence came between"),
                       warpnet::simt::LaunchError);
}

TEST_CASE("traced: a wgmma reads plain stores only after their fence.proxy.async and a barrier") {
  DeterministicScope deterministic;  // warps in order: warp 0 issues before warps 1-3 store
  DeviceBuffer<float> c(2 * 128);
  const size_t shared = 1024 + 64 * 128 + 128 * 128;
  const auto launch = [&](Misuse misuse) {
    warpnet::simt::launch(two_tiles_one_accumulator, dim3(1), dim3(128), shared, c.get(), int(misuse));
  };
  CHECK_THROWS_WITH_AS(launch(kNoProxyFence),
                       doctest::Contains("with no fence.proxy.async after it: wgmma reads shared memory through the "
                                         "async proxy"),
                       warpnet::simt::LaunchError);
  CHECK_THROWS_WITH_AS(
      launch(kNoProxyFence),
      doctest::Contains("kernel two_tiles_one_accumulator, block (0,0,0), thread (0,0,0): the wgmma.mma_async"),
      warpnet::simt::LaunchError);
  CHECK_THROWS_WITH_AS(launch(kNoBarrier), doctest::Contains("which no thread of the block has written before it"),
                       warpnet::simt::LaunchError);
}

TEST_CASE("trace: the cp.async + ldmatrix + mma.sync HGEMM is clean, its 16-byte shared loads conflict-free") {
  DeterministicScope deterministic;
  const int M = 64, N = 64, K = 48;
  std::vector<__half> a(M * K, __float2half(1.0f)), b(K * N, __float2half(0.5f));
  DeviceBuffer<__half> d_a(a), d_b(b);
  DeviceBuffer<float> d_c(M * N);
  warpnet::simt::launch(hgemm_mma_ldmatrix, dim3(2, 2), dim3(128), 0, M, N, K, d_a.get(), d_b.get(), d_c.get());
  CHECK(d_c.download() == std::vector<float>(M * N, 24.0f));
  const auto trace = warpnet::simt::last_trace();
  REQUIRE(trace.has_value());
  uint64_t ldmatrix_requests = 0, copy_requests = 0;
  for (const auto& i : trace->instructions) {
    if (i.space != Space::shared || i.bytes != 16) continue;
    if (i.write) {
      copy_requests += i.requests;  // cp.async landing in shared memory
    } else {
      ldmatrix_requests += i.requests;
      // 8 rows of 48 or 80 bytes per quarter warp: every bank once, the fewest passes.
      CHECK(i.wavefronts == i.ideal_wavefronts);
    }
  }
  // 4 blocks x 4 warps x 3 k-steps x 2 ldmatrix (A and B).
  CHECK(ldmatrix_requests == 4 * 4 * 3 * 2);
  CHECK(copy_requests > 0);
}

// The plain copy (test_async_copy.cpp) checks these sizes' values; here
// the checker watches every access: the zero-filled copies past M, N and K
// and the element copies of rows not 16-byte aligned read nothing outside.
TEST_CASE("trace: the cp.async + ldmatrix + mma.sync HGEMM runs clean under the checker off the tile grid") {
  DeterministicScope deterministic;
  for (const auto& [M, N, K] : {std::tuple{33, 17, 19}, {40, 24, 40}, {1, 1, 1}}) {
    INFO("M=", M, " N=", N, " K=", K);
    DeviceBuffer<__half> d_a(std::vector<__half>(size_t(M) * K, __float2half(1.0f)));
    DeviceBuffer<__half> d_b(std::vector<__half>(size_t(K) * N, __float2half(0.5f)));
    DeviceBuffer<float> d_c(size_t(M) * N);
    REQUIRE_NOTHROW(warpnet::simt::launch(hgemm_mma_ldmatrix, dim3((N + 31) / 32, (M + 31) / 32), dim3(128), 0, M, N,
                                          K, d_a.get(), d_b.get(), d_c.get()));
    CHECK(d_c.download() == std::vector<float>(size_t(M) * N, 0.5f * float(K)));
  }
}

TEST_CASE("trace: the wmma GEMM runs clean under the checker at an awkward size") {
  DeterministicScope deterministic;
  const int M = 33, N = 17, K = 20;
  DeviceBuffer<__half> d_a(std::vector<__half>(M * K, __float2half(1.0f)));
  DeviceBuffer<__half> d_b(std::vector<__half>(K * N, __float2half(2.0f)));
  DeviceBuffer<float> d_c(M * N);
  warpnet::simt::launch(gemm_wmma<__half>, dim3(1), dim3(256), 0, M, N, K, d_a.get(), d_b.get(), d_c.get());
  CHECK(d_c.download() == std::vector<float>(M * N, 40.0f));
}
