// Tensor cores on the emulator: ldmatrix and mma.sync against the PTX ISA's
// lane-to-element layouts, and wmma against a plain loop. Inputs are small
// integers, exact in fp16 and bf16, whose products and sums are exact in fp32:
// the emulated result must equal the plain loop bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/small_integers.hpp"

namespace {
#include "kernels/examples/tensor_cores/mma_layout.cu"
#include "kernels/matmul/11_wmma.cu"

constexpr uint64_t kSeed = 7;  // small integer inputs from a fixed LCG

unsigned short half_bits(float f) { return __half_raw(__float2half(f)).x; }
unsigned short bf16_bits(float f) { return __nv_bfloat16_raw(__float2bfloat16(f)).x; }


// C (M,N) = A (M,K) @ B (K,N), all row-major.
std::vector<float> plain_matmul(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K) {
  std::vector<float> C(size_t(M) * N, 0.0f);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) C[m * N + n] += A[m * K + k] * B[k * N + n];
  return C;
}

// wmma matrix_a fragment of A[i] = i (16x16 row-major): every slot of every lane.
__global__ void wmma_a_slots(const __half* A, float* slots /* (32, 16) */) {
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __half, nvcuda::wmma::row_major> a;
  nvcuda::wmma::load_matrix_sync(a, A, 16);
  for (int i = 0; i < a.num_elements; ++i) slots[threadIdx.x * 16 + i] = __half2float(a.x[i]);
}

// An accumulator loaded column-major and stored row-major: a transpose.
__global__ void wmma_transpose(const float* in, float* out) {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c;
  nvcuda::wmma::load_matrix_sync(c, in, 16, nvcuda::wmma::mem_col_major);
  nvcuda::wmma::store_matrix_sync(out, c, 16, nvcuda::wmma::mem_row_major);
}

// Half the warp returns before a wmma load: .sync.aligned needs every lane.
__global__ void wmma_after_exit(const float* in, float* out) {
  if (threadIdx.x >= 16) return;
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c;
  nvcuda::wmma::load_matrix_sync(c, in, 16, nvcuda::wmma::mem_row_major);
  nvcuda::wmma::store_matrix_sync(out, c, 16, nvcuda::wmma::mem_row_major);
}

// The odd lanes point at the second 16x16 tile: each lane's own pointer, where
// the warp loads (and stores) one matrix that every lane names alike.
__global__ void wmma_pointer_per_lane(const float* in, float* out, unsigned ldm_odd) {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c;
  const bool odd = threadIdx.x % 2 == 1;
  nvcuda::wmma::load_matrix_sync(c, in + (odd && ldm_odd == 16 ? 256 : 0), odd ? ldm_odd : 16,
                                 nvcuda::wmma::mem_row_major);
  nvcuda::wmma::store_matrix_sync(out, c, 16, nvcuda::wmma::mem_row_major);
}

// Row addresses 2 bytes past a 16-byte boundary: a misaligned-address fault on a GPU.
__global__ void misaligned_ldmatrix(unsigned* out) {
  __shared__ __align__(16) unsigned short tile[8][16];
  uint32_t r[1];
  warpnet::ptx::ldmatrix_m8n8<1>(r, &tile[threadIdx.x % 8][1]);
  out[threadIdx.x] = r[0];
}

template <int N, bool Trans>
void check_ldmatrix() {
  // Element (matrix m, row r, col c) holds its own index 64m + 8r + c.
  std::vector<unsigned short> src(64 * N);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned short>(i);
  DeviceBuffer<unsigned short> d_src(src);
  DeviceBuffer<unsigned> out(32 * N);
  warpnet::simt::launch(ldmatrix_lanes<N, Trans>, dim3(1), dim3(32), 0, d_src.get(), out.get());
  const auto got = out.download();
  // PTX ISA, ldmatrix: "a group of four threads loads an entire row": lane l
  // holds row l/4, columns 2(l%4) and 2(l%4)+1 (the lower in the low half);
  // .trans: the same positions of the transposed matrix.
  for (int lane = 0; lane < 32; ++lane)
    for (int m = 0; m < N; ++m) {
      const int r = lane / 4, c = 2 * (lane % 4);
      const unsigned lo = Trans ? 64 * m + 8 * c + r : 64 * m + 8 * r + c;
      const unsigned hi = Trans ? 64 * m + 8 * (c + 1) + r : 64 * m + 8 * r + c + 1;
      INFO("x", N, Trans ? ".trans" : "", " lane ", lane, " matrix ", m);
      CHECK(got[lane * N + m] == (lo | hi << 16));
    }
}

template <bool Bf16>
void check_mma_fragments() {
  const auto a = small_integers(16 * 16, kSeed), b = small_integers(16 * 8, kSeed + 1), c = small_integers(16 * 8, kSeed + 2);
  std::vector<unsigned short> a_bits, b_bits;
  for (float x : a) a_bits.push_back(Bf16 ? bf16_bits(x) : half_bits(x));
  for (float x : b) b_bits.push_back(Bf16 ? bf16_bits(x) : half_bits(x));
  DeviceBuffer<unsigned short> d_a(a_bits), d_b(b_bits);
  DeviceBuffer<float> d_c(c), d_d(16 * 8);
  warpnet::simt::launch(mma_fragments<Bf16>, dim3(1), dim3(32), 0, d_a.get(), d_b.get(), d_c.get(), d_d.get());
  std::vector<float> want = plain_matmul(a, b, 16, 8, 16);
  for (int i = 0; i < 16 * 8; ++i) want[i] += c[i];
  CHECK(d_d.download() == want);
}

}  // namespace

TEST_CASE("tensor cores: ldmatrix x1/x2/x4, plain and .trans, give each lane the PTX ISA's elements") {
  check_ldmatrix<1, false>();
  check_ldmatrix<2, false>();
  check_ldmatrix<4, false>();
  check_ldmatrix<1, true>();
  check_ldmatrix<2, true>();
  check_ldmatrix<4, true>();
}

TEST_CASE("tensor cores: mma.sync m16n8k16 f16 and bf16 with fragments built by the ISA's formulas") {
  check_mma_fragments<false>();
  check_mma_fragments<true>();
}

TEST_CASE("tensor cores: a wmma matrix_a fragment holds each element of A once (slots 8-15 repeat 0-7)") {
  std::vector<__half> A(256);
  for (int i = 0; i < 256; ++i) A[i] = __float2half(float(i));
  DeviceBuffer<__half> d_a(A);
  DeviceBuffer<float> slots(32 * 16);
  warpnet::simt::launch(wmma_a_slots, dim3(1), dim3(32), 0, d_a.get(), slots.get());
  const auto s = slots.download();
  std::vector<int> seen(256, 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 8; ++i) {
      ++seen[int(s[lane * 16 + i])];
      CHECK(s[lane * 16 + 8 + i] == s[lane * 16 + i]);
    }
  CHECK(std::count(seen.begin(), seen.end(), 1) == 256);
  // warpnet's layout is mma.m16n8k16's A fragment: lane 5 (groupID 1, threadID_in_group 1), a0 = A[1][2].
  CHECK(s[5 * 16 + 0] == 1 * 16 + 2);
}

TEST_CASE("tensor cores: wmma accumulator load col-major, store row-major transposes") {
  std::vector<float> in(256);
  for (int i = 0; i < 256; ++i) in[i] = float(i);
  DeviceBuffer<float> d_in(in), d_out(256);
  warpnet::simt::launch(wmma_transpose, dim3(1), dim3(32), 0, d_in.get(), d_out.get());
  const auto out = d_out.download();
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) CHECK(out[r * 16 + c] == in[c * 16 + r]);
}

// Small integers are exact in fp16 and bf16, and so are their products and sums.
template <class T>
std::vector<T> narrowed(const std::vector<float>& v) {
  return std::vector<T>(v.begin(), v.end());
}

TEST_CASE("tensor cores: the wmma GEMM (fp16 and bf16) equals a plain loop at sizes off the 16/32 grid") {
  for (const auto& [M, N, K] : {std::tuple{1, 1, 1}, {33, 17, 40}, {50, 70, 19}}) {
    INFO("M=", M, " N=", N, " K=", K, " seed ", kSeed);
    const auto a = small_integers(size_t(M) * K, kSeed), b = small_integers(size_t(K) * N, kSeed + 1);
    DeviceBuffer<__half> h_a(narrowed<__half>(a)), h_b(narrowed<__half>(b));
    DeviceBuffer<__nv_bfloat16> b_a(narrowed<__nv_bfloat16>(a)), b_b(narrowed<__nv_bfloat16>(b));
    DeviceBuffer<float> d_c(size_t(M) * N);
    const dim3 grid((N + 127) / 128, (M + 127) / 128);  // 128x128 C tiles, 256 threads (11_wmma.cu)
    const auto want = plain_matmul(a, b, M, N, K);
    warpnet::simt::launch(gemm_wmma<__half>, grid, dim3(256), 0, M, N, K, h_a.get(), h_b.get(), d_c.get());
    CHECK(d_c.download() == want);
    warpnet::simt::launch(gemm_wmma<__nv_bfloat16>, grid, dim3(256), 0, M, N, K, b_a.get(), b_b.get(), d_c.get());
    CHECK(d_c.download() == want);
  }
}

TEST_CASE("tensor cores: a warp instruction needs a whole warp, and ldmatrix rows must be 16-byte aligned") {
  DeviceBuffer<unsigned short> src(256);
  DeviceBuffer<unsigned> out(128);
  REQUIRE(cudaMemset(src.get(), 0, 512) == cudaSuccess);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(ldmatrix_lanes<1, false>, dim3(1), dim3(48), 0, src.get(), out.get()),
                       doctest::Contains("needs all 32 lanes of a warp, but warp 1 has only 16"),
                       warpnet::simt::LaunchError);
  DeviceBuffer<float> tile(256), result(256);
  REQUIRE(cudaMemset(tile.get(), 0, 1024) == cudaSuccess);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(wmma_after_exit, dim3(1), dim3(32), 0, tile.get(), result.get()),
                       doctest::Contains("needs all 32 lanes of the warp, but lane 16 has exited"),
                       warpnet::simt::LaunchError);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(misaligned_ldmatrix, dim3(1), dim3(32), 0, out.get()),
                       doctest::Contains("ldmatrix.sync.aligned.m8n8.x1.shared.b16 at "),
                       warpnet::simt::LaunchError);
}

TEST_CASE("tensor cores: the lanes of a wmma load agree on the matrix's pointer and ldm") {
  DeviceBuffer<float> tiles(512), result(256);
  REQUIRE(cudaMemset(tiles.get(), 0, 2048) == cudaSuccess);
  const auto message = [&](unsigned ldm_odd) {
    try {
      warpnet::simt::launch(wmma_pointer_per_lane, dim3(1), dim3(32), 0, tiles.get(), result.get(), ldm_odd);
    } catch (const warpnet::simt::LaunchError& e) {
      CHECK(e.code() == cudaErrorLaunchFailure);
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string pointers = message(16);
  INFO(pointers);
  CHECK(pointers.starts_with("kernel wmma_pointer_per_lane, block (0,0,0), thread (0,0,0): "));
  CHECK(pointers.find("wmma::load_matrix_sync at wmma_pointer_per_lane") != std::string::npos);  // the kernel's call
  CHECK(pointers.find(": lane 1 passes the matrix at ") != std::string::npos);
  CHECK(pointers.find("with ldm 16, lane 0 at ") != std::string::npos);
  CHECK(pointers.find("every lane of the warp passes the same pointer and ldm") != std::string::npos);
  const std::string ldm = message(32);
  INFO(ldm);
  CHECK(ldm.find("with ldm 32, lane 0 at ") != std::string::npos);
}
