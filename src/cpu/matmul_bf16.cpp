// matmul_bf16 (matmul_bf16.hpp): bf16 dot products on AVX512_BF16.
#include "cpu/matmul_bf16.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/ops.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WARPNET_X86_BF16 1
#else
#define WARPNET_X86_BF16 0
#endif

namespace warpnet::cpu {

namespace {

constexpr int64_t kLanes = 32;  // bf16 values per 512-bit register

// The top half of an fp32 that is a bf16; throws where it is not.
uint16_t bf16_bits(float x, const char* name, int64_t index) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  WN_CHECK((bits & 0xFFFFu) == 0, "matmul_bf16: ", name, "[", index, "] = ", x,
           " is not a bf16 value (round the inputs to bf16 first)");
  return uint16_t(bits >> 16);
}

#if WARPNET_X86_BF16
// The sum of a register's 16 lanes, pairwise in 4 levels: add the register
// to itself with its 256-bit halves swapped, then its 128-bit quarters, then
// 64-bit pairs, then neighbours; lane 0 holds the sum. The masked forms
// with every lane set: GCC 12's unmasked ones (and _mm512_reduce_add_ps)
// fill their unused source with a self-initialized variable and trip
// -Wuninitialized inside its own header.
__attribute__((target("avx512f"))) inline float lane_sum(__m512 v) {
  constexpr __mmask16 all = 0xFFFF;
  v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, all, v, v, 0x4E));  // 128-bit blocks (2,3,0,1)
  v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, all, v, v, 0xB1));  // (1,0,3,2)
  v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, all, v, 0x4E));        // within 128 bits: (2,3,0,1)
  v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, all, v, 0xB1));        // (1,0,3,2)
  return _mm512_cvtss_f32(v);
}

// A (R x C) block of C: rows of pa (each kp long, kp % 32 == 0) against
// rows of pbt (columns of B). R x C accumulators, so each loaded row of A
// serves C products and each row of B^T serves R, and the R x C chains of
// vdpbf16ps run independently.
template <int R, int C>
__attribute__((target("avx512f,avx512bf16"))) void dot_block(const uint16_t* pa, const uint16_t* pbt, int64_t kp,
                                                              float* c, int64_t ldc) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) acc[r][j] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kp; k += kLanes) {
    __m512bh vb[C];
    for (int j = 0; j < C; ++j) vb[j] = (__m512bh)_mm512_loadu_si512(pbt + j * kp + k);
    for (int r = 0; r < R; ++r) {
      const __m512bh va = (__m512bh)_mm512_loadu_si512(pa + r * kp + k);
      for (int j = 0; j < C; ++j) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], va, vb[j]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) c[r * ldc + j] = lane_sum(acc[r][j]);
}

using BlockFn = void (*)(const uint16_t*, const uint16_t*, int64_t, float*, int64_t);
constexpr int kBlock = 4;  // 4 x 4 accumulators: 16 of the 32 zmm registers
// block_fns[r - 1][c - 1]: the edge blocks too.
template <int... I>
constexpr auto make_block_fns(std::integer_sequence<int, I...>) {
  return std::array<BlockFn, sizeof...(I)>{&dot_block<I / kBlock + 1, I % kBlock + 1>...};
}
constexpr auto kBlockFns = make_block_fns(std::make_integer_sequence<int, kBlock * kBlock>{});
#endif

}  // namespace

bool has_avx512_bf16() {
#if WARPNET_X86_BF16
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

// a: (M,K), b: (K,N); returns (M,N)
Tensor matmul_bf16(const Tensor& a, const Tensor& b) {
  const MatmulDims d = matmul_dims("matmul_bf16", a, b, false, false);
  WN_CHECK(a.dtype() == DType::f32, "matmul_bf16: inputs are f32 tensors holding bf16 values, got ", a.describe());
  WN_CHECK(has_avx512_bf16(), "matmul_bf16: this CPU has no AVX512_BF16 (use the fp32 GEMM on the bf16 values)");
  const int64_t kp = (d.k + kLanes - 1) / kLanes * kLanes;
  // Packed, zero-padded along K: pa (M,kp), pbt (N,kp) = B^T.
  std::vector<uint16_t> pa(size_t(d.m * kp), 0), pbt(size_t(d.n * kp), 0);
  const float *pa_src = a.data<float>(), *pb_src = b.data<float>();
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t k = 0; k < d.k; ++k) pa[size_t(i * kp + k)] = bf16_bits(pa_src[i * d.k + k], "A", i * d.k + k);
  for (int64_t k = 0; k < d.k; ++k)
    for (int64_t j = 0; j < d.n; ++j) pbt[size_t(j * kp + k)] = bf16_bits(pb_src[k * d.n + j], "B", k * d.n + j);
  Tensor c = Tensor::empty({d.m, d.n});
#if WARPNET_X86_BF16
  float* pc = c.data<float>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < d.m; i += kBlock)
    for (int64_t j = 0; j < d.n; j += kBlock) {
      const int64_t rows = std::min<int64_t>(kBlock, d.m - i), cols = std::min<int64_t>(kBlock, d.n - j);
      kBlockFns[size_t((rows - 1) * kBlock + cols - 1)](pa.data() + i * kp, pbt.data() + j * kp, kp, pc + i * d.n + j,
                                                        d.n);
    }
#endif
  return c;
}

}  // namespace warpnet::cpu
