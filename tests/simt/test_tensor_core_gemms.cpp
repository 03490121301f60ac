// The mma.sync GEMMs (matmul v12 bf16, v14 fp8 e4m3) and the e4m3 mma.sync
// they need, on the emulator. Inputs are small integers, exact in bf16 and
// e4m3, whose products and sums are exact in fp32: results must equal a plain
// loop bit for bit, in every layout, at sizes off every tile grid.
#include <doctest/doctest.h>

#include <cstdio>
#include <tuple>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/small_integers.hpp"

// A named namespace, not an anonymous one: the registration includes the same
// kernels, and the emulator adds up the __shared__ variables of every kernel
// instance with the same mangled name when it checks the 48 KB static limit.
namespace gemms_test {
#include "kernels/matmul/12_mma_sync.cu"
#include "kernels/matmul/14_fp8.cu"

constexpr uint64_t kSeed = 11;  // small integers from a fixed LCG


unsigned char e4m3_bits(float f) { return __nv_fp8_e4m3(f).__x; }

// A fragment by the PTX ISA's words for m16n8k32 with .e4m3 ("Matrix Fragments
// for mma.m16n8k32"), written here independently of src/simt/tensor_cores.hpp.
// A: (16,32) row-major, B: (32,8) row-major (k,n), C, D: (16,8) row-major; inputs as e4m3 bytes.
// Launch: one warp.
__global__ void mma_e4m3_fragments(const unsigned char* A, const unsigned char* B, const float* C, float* D) {
  const int lane = threadIdx.x, groupID = lane >> 2, threadID_in_group = lane % 4;
  uint32_t ra[4] = {}, rb[2] = {};
  for (int i = 0; i < 16; ++i) {  // "row = groupID for ai where 0 <= i < 4 || 8 <= i < 12, groupID + 8 otherwise"
    const int row = ((0 <= i && i < 4) || (8 <= i && i < 12)) ? groupID : groupID + 8;
    const int col = i < 8 ? threadID_in_group * 4 + (i & 0x3) : threadID_in_group * 4 + (i & 0x3) + 16;
    ra[i / 4] |= uint32_t(A[row * 32 + col]) << (8 * (i % 4));  // the lowest element in the lowest byte
  }
  for (int i = 0; i < 8; ++i) {  // "row = threadID_in_group * 4 + (i & 0x3) for bi where i < 4, + 16 otherwise; col = groupID"
    const int row = i < 4 ? threadID_in_group * 4 + (i & 0x3) : threadID_in_group * 4 + (i & 0x3) + 16;
    rb[i / 4] |= uint32_t(B[row * 8 + groupID]) << (8 * (i % 4));
  }
  float c[4], d[4];
  for (int i = 0; i < 4; ++i) c[i] = C[(i < 2 ? groupID : groupID + 8) * 8 + threadID_in_group * 2 + (i & 0x1)];
  warpnet::ptx::mma_m16n8k32_e4m3_f32(d, ra, rb, c);
  for (int i = 0; i < 4; ++i) D[(i < 2 ? groupID : groupID + 8) * 8 + threadID_in_group * 2 + (i & 0x1)] = d[i];
}

// C (M,N) = op(A) @ op(B); A stored (M,K) or (K,M) when ta, B (K,N) or (N,K) when tb.
std::vector<float> plain_matmul(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K, bool ta,
                                bool tb) {
  std::vector<float> C(size_t(M) * N, 0.0f);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k)
        C[m * N + n] += A[ta ? k * M + m : m * K + k] * B[tb ? n * K + k : k * N + n];
  return C;
}

template <class T>
std::vector<T> narrowed(const std::vector<float>& v) {
  std::vector<T> out;
  for (float x : v) out.push_back(T(x));
  return out;
}

// v12 or v14 (Fp8) with the registry's tiles in layout (TA, TB) at M x N x K.
template <bool Fp8, bool TA, bool TB>
void check_gemm(int M, int N, int K) {
  INFO((Fp8 ? "v14 fp8" : "v12 bf16"), " M=", M, " N=", N, " K=", K, " TA=", TA, " TB=", TB, " seed ", kSeed);
  const auto a = small_integers(size_t(M) * K, kSeed), b = small_integers(size_t(K) * N, kSeed + 1);
  DeviceBuffer<float> d_c(size_t(M) * N);
  const dim3 grid((N + 127) / 128, (M + 127) / 128);
  if constexpr (Fp8) {
    DeviceBuffer<__nv_fp8_e4m3> d_a(narrowed<__nv_fp8_e4m3>(a)), d_b(narrowed<__nv_fp8_e4m3>(b));
    warpnet::simt::launch(gemm_fp8<128, 128, 64, 64, 32, TA, TB>, grid, dim3(256), 0, M, N, K, d_a.get(), d_b.get(),
                          d_c.get());
  } else {
    DeviceBuffer<__nv_bfloat16> d_a(narrowed<__nv_bfloat16>(a)), d_b(narrowed<__nv_bfloat16>(b));
    warpnet::simt::launch(gemm_mma_sync<128, 128, 32, 64, 32, TA, TB>, grid, dim3(256), 0, M, N, K, d_a.get(),
                          d_b.get(), d_c.get());
  }
  CHECK(d_c.download() == plain_matmul(a, b, M, N, K, TA, TB));
}

template <bool Fp8>
void check_all_layouts(int M, int N, int K) {
  check_gemm<Fp8, false, false>(M, N, K);
  check_gemm<Fp8, true, false>(M, N, K);
  check_gemm<Fp8, false, true>(M, N, K);
  check_gemm<Fp8, true, true>(M, N, K);
}

}  // namespace gemms_test
using namespace gemms_test;

TEST_CASE("tensor cores: mma.sync m16n8k32 e4m3 with fragments built by the ISA's formulas") {
  const auto a = small_integers(16 * 32, kSeed), b = small_integers(32 * 8, kSeed + 1), c = small_integers(16 * 8, kSeed + 2);
  std::vector<unsigned char> a_bits, b_bits;
  for (float x : a) a_bits.push_back(e4m3_bits(x));
  for (float x : b) b_bits.push_back(e4m3_bits(x));
  DeviceBuffer<unsigned char> d_a(a_bits), d_b(b_bits);
  DeviceBuffer<float> d_c(c), d_d(16 * 8);
  warpnet::simt::launch(mma_e4m3_fragments, dim3(1), dim3(32), 0, d_a.get(), d_b.get(), d_c.get(), d_d.get());
  std::vector<float> want = plain_matmul(a, b, 16, 8, 32, false, false);
  for (int i = 0; i < 16 * 8; ++i) want[i] += c[i];
  CHECK(d_d.download() == want);
}

TEST_CASE("tensor cores: an e4m3 register of 4 bytes is one ldmatrix b16 pair-of-pairs (what v14 relies on)") {
  // ldmatrix gives lane l the 4 bytes 4(l%4)..4(l%4)+3 of row l/4: the m16n8k32
  // A slot (row groupID, k = 4*threadID_in_group + 0..3), lowest byte first.
  for (unsigned lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      const auto e = warpnet::simt::mma_a8_element(lane, i);
      CHECK(e.row == int(lane / 4));
      CHECK(e.col == int(4 * (lane % 4)) + i);
      const auto f = warpnet::simt::mma_b8_element(lane, i);
      CHECK(f.col == int(lane / 4));
      CHECK(f.row == int(4 * (lane % 4)) + i);
    }
}

TEST_CASE("matmul v12 (bf16 mma.sync) equals a plain loop in all four layouts, on and off the tile grid") {
  for (const auto& [M, N, K] : {std::tuple{1, 1, 1}, {7, 9, 5}, {130, 129, 72}, {64, 136, 40}})
    check_all_layouts<false>(M, N, K);
}

TEST_CASE("matmul v14 (fp8 e4m3 mma.sync) equals a plain loop in all four layouts, on and off the tile grid") {
  for (const auto& [M, N, K] : {std::tuple{1, 1, 1}, {7, 9, 5}, {130, 129, 80}, {64, 136, 160}})
    check_all_layouts<true>(M, N, K);
}
