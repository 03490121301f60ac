// Hopper's asynchronous units on the emulator (src/simt/hopper.hpp): TMA boxes
// land swizzled and zero-filled on an mbarrier, wgmma fp8 computes what a
// plain loop does, and the misuses a GPU would answer with a hang or wrong
// numbers — a phase that never completes, one arrival too many, a copy nobody
// waits for, a wgmma reading a stage before its copy landed — are errors that
// say what is wrong. (The bf16 wgmma path is checked by matmul v13 in the
// registry tests, in all four layouts.)
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <optional>

#include <cstring>

#include "kernels/common/all.hpp"
#include "simt/minifloat.hpp"
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/tma_helpers.hpp"

namespace {

using warpnet::simt::LaunchError;

// The 128-byte swizzle as the PTX ISA defines it for shared addresses: the
// 16-byte chunk c of 128-byte row r moves to chunk c ^ (r % 8).
uint32_t swizzle128(uint32_t address) { return address ^ (((address >> 7) & 7u) << 4); }

// One TMA box of 1024 bytes into shared memory: (64 x 8) 16-bit elements of
// a 2-D map at (c0, c1), or of a 4-D map at (c0, c1, c2, c3) (conv v13's
// boxes of an NHWC image), or with `im2col` 8 pixels of a 4-D im2col map
// from (c0, c1, c2, c3) read at offsets (off_w, off_h) (conv v14's); `out`
// receives the bytes as they lie there, and `address` the tile's shared address.
__global__ void tma_box(const __grid_constant__ CUtensorMap map, int rank, int c0, int c1, int c2, int c3,
                        uint16_t* out, uint32_t* address, bool im2col, uint16_t off_w, uint16_t off_h) {
  using namespace warpnet::ptx;
  unsigned char* tile = aligned_shared();
  auto* bar = reinterpret_cast<uint64_t*>(tile + 1024);
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(bar, 1024);
    if (im2col) tma_load_im2col_4d(tile, &map, c0, c1, c2, c3, off_w, off_h, bar);
    else if (rank == 2) tma_load_2d(tile, &map, c0, c1, bar);
    else tma_load_4d(tile, &map, c0, c1, c2, c3, bar);
    *address = shared_address(tile);
  }
  mbarrier_wait(bar, 0);
  for (int i = threadIdx.x; i < 512; i += blockDim.x) out[i] = reinterpret_cast<const uint16_t*>(tile)[i];
}

// A (64 x 128) and B (128 n x 128 k), fp8 e4m3, both K-major: C (64, 128) = A @ B^T
// by 4 wgmma m64n128k32 from one TMA stage. One warpgroup. Misuses: `early`
// issues the wgmmas before waiting on the copy's barrier; kPeek reads an
// accumulator before wgmma.wait_group (into C's extra row), kPoke writes one;
// kNoFence leaves out the wgmma.fence before the first wgmma; kOffPattern
// starts A's descriptors a 128-byte row past the tile, off the swizzle's
// 1024-byte pattern, with base offset 0. Three break the warpgroup's
// lockstep: with kOneWarpShort warp 3 skips the last k-slice; with
// kOtherOrder warp 2 walks the k-slices backwards (the same sum, here
// exactly: the emulator's numbers alone would not show it); with
// kTrailingFence warps 0-2 end with a wgmma.fence that warp 3 leaves out
// (a warp short at the block's end, not at an instruction). kMixedShapes
// issues the last slice as an n = 256 wgmma into accumulators that hold the
// n = 128 ones, with no wgmma.fence between.
enum Misuse { kNone, kEarly, kPeek, kPoke, kNoFence, kOffPattern, kOneWarpShort, kOtherOrder, kTrailingFence, kMixedShapes };
__global__ void wgmma_fp8(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                          float* C, int misuse) {
  const bool early = misuse == kEarly;
  using namespace warpnet::ptx;
  unsigned char* a = aligned_shared();
  unsigned char* b = a + 64 * 128;
  auto* bar = reinterpret_cast<uint64_t*>(b + 128 * 128);
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(bar, 64 * 128 + 128 * 128);
    tma_load_2d(a, &map_a, 0, 0, bar);
    tma_load_2d(b, &map_b, 0, 0, bar);
  }
  if (!early) mbarrier_wait(bar, 0);
  // K-major, 128-byte swizzle: rows of 128 bytes, 1024 bytes between groups of 8 rows.
  auto descriptor = [](uint32_t address) {
    return uint64_t((address & 0x3FFFFu) >> 4) | uint64_t(1024 >> 4) << 32 | uint64_t(1) << 62;
  };
  float wide[128] = {};  // n = 256's accumulators; the n = 128 ones are its first half
  float(&acc)[64] = *reinterpret_cast<float(*)[64]>(wide);
  if (misuse != kNoFence) wgmma_fence();
  const uint32_t a_row = misuse == kOffPattern ? 128 : 0;
  const int warp = int(threadIdx.x) / 32;
  for (int slice = 0; slice < 4; ++slice) {
    if (misuse == kOneWarpShort && warp == 3 && slice == 3) break;
    const int k = 32 * (misuse == kOtherOrder && warp == 2 ? 3 - slice : slice);
    if (misuse == kMixedShapes && slice == 3)
      wgmma_m64n256k32_e4m3(wide, descriptor(shared_address(a) + a_row + k), descriptor(shared_address(b) + k));
    else
      wgmma_m64n128k32_e4m3(acc, descriptor(shared_address(a) + a_row + k), descriptor(shared_address(b) + k));
  }
  wgmma_commit();
  if (misuse == kPeek) C[64 * 128 + threadIdx.x] = acc[0];
  if (misuse == kPoke) acc[3] = 0.0f;  // zeroed for a next tile too soon
  wgmma_wait<0>();
  if (misuse == kTrailingFence && warp != 3) wgmma_fence();
  if (early) mbarrier_wait(bar, 0);
  const int t = threadIdx.x;
  for (int i = 0; i < 64; ++i) {
    // The wgmma accumulator layout: warp w holds rows 16w.., each 8-column block as mma.m16n8's C.
    const int row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * (t % 4) + (i & 1);
    C[row * 128 + col] = acc[i];
  }
}

__global__ void waits_forever(int arrivals) {
  using namespace warpnet::ptx;
  auto* bar = reinterpret_cast<uint64_t*>(aligned_shared());
  if (threadIdx.x == 0) mbarrier_init(bar, 2);
  __syncthreads();
  if (int(threadIdx.x) < arrivals) mbarrier_arrive(bar);
  mbarrier_wait(bar, 0);
}

// Thread 0 initializes, and every thread arrives without a __syncthreads()
// between: the initialization is not yet visible to the others.
__global__ void arrives_before_init_is_seen() {
  using namespace warpnet::ptx;
  auto* bar = reinterpret_cast<uint64_t*>(aligned_shared());
  if (threadIdx.x == 0) mbarrier_init(bar, 32);
  mbarrier_arrive(bar);
  mbarrier_wait(bar, 0);
}

// One arrival expected, with 16 transaction bytes that never come; then a second arrival.
__global__ void arrives_twice() {
  using namespace warpnet::ptx;
  auto* bar = reinterpret_cast<uint64_t*>(aligned_shared());
  mbarrier_init(bar, 1);
  mbarrier_arrive_expect_tx(bar, 16);
  mbarrier_arrive(bar);
}

__global__ void copy_nobody_waits_for(const __grid_constant__ CUtensorMap map) {
  using namespace warpnet::ptx;
  unsigned char* tile = aligned_shared();
  auto* bar = reinterpret_cast<uint64_t*>(tile + 1024);
  mbarrier_init(bar, 1);
  mbarrier_arrive_expect_tx(bar, 1024);
  tma_load_2d(tile, &map, 0, 0, bar);
}

constexpr size_t kShared = 1024 + 64 * 128 + 128 * 128 + 1024;

}  // namespace

TEST_CASE("TMA: a box lands 128-byte swizzled, zeros where it leaves the tensor, counted on its mbarrier") {
  // 72 x 10 elements (pitch 144 bytes); the box (64 x 8) at (32, 5) runs past both edges.
  constexpr int inner = 72, outer = 10, c0 = 32, c1 = 5;
  std::vector<uint16_t> t(inner * outer);
  for (size_t i = 0; i < t.size(); ++i) t[i] = uint16_t(1000 + i);
  DeviceBuffer<uint16_t> d_t(t), out(512);
  DeviceBuffer<uint32_t> address(1);
  CUtensorMap map;
  REQUIRE(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d_t.get(), inner, outer, 64, 8) == CUDA_SUCCESS);
  warpnet::simt::launch(tma_box, dim3(1), dim3(64), kShared, map, 2, c0, c1, 0, 0, out.get(), address.get(), false,
                        uint16_t(0), uint16_t(0));
  const auto got = out.download();
  const uint32_t base = address.download()[0];
  CHECK(base % 1024 == 0);
  int inside = 0;
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 64; ++i) {
      const bool in = c0 + i < inner && c1 + j < outer;
      inside += in;
      const uint16_t want = in ? t[(c1 + j) * inner + c0 + i] : 0;
      const uint32_t at = swizzle128(base + j * 128 + i * 2) - base;
      INFO("box element (", i, ", ", j, ") at byte ", at);
      CHECK(got[at / 2] == want);
    }
  CHECK(inside == 40 * 5);  // the test's box does leave the tensor on both sides
}

TEST_CASE("TMA: a 4-D box with element strides takes every stride-th pixel, zeros in the padding") {
  // An NHWC image batch (N=2, H=6, W=7, C=64) of 16-bit values; the box is
  // {64 channels, 8 columns, 4 rows, 1 image} with element strides {1, 2, 2,
  // 1}: 4 x 2 pixels, every other one, from (w, h) = (-1, -1) of image 1, as
  // a stride-2, pad-1 convolution's first tap reads them.
  constexpr int C = 64, W = 7, H = 6, N = 2, w0 = -1, h0 = -1, n = 1;
  std::vector<uint16_t> t(size_t(C) * W * H * N);
  for (size_t i = 0; i < t.size(); ++i) t[i] = uint16_t(1 + i);
  DeviceBuffer<uint16_t> d_t(t), out(512);
  DeviceBuffer<uint32_t> address(1);
  void* fn = nullptr;
  REQUIRE(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault) == cudaSuccess);
  const auto encode_tiled = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  const cuuint64_t dims[4] = {C, W, H, N}, strides[3] = {C * 2, C * 2 * W, C * 2 * W * H};
  cuuint32_t box[4] = {64, 8, 4, 1}, element_strides[4] = {1, 2, 2, 1};
  const auto encode_4d = [&](CUtensorMap* map) {
    return encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, d_t.get(), dims, strides, box, element_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  CUtensorMap map;
  REQUIRE(encode_4d(&map) == CUDA_SUCCESS);
  warpnet::simt::launch(tma_box, dim3(1), dim3(64), kShared, map, 4, 0, w0, h0, n, out.get(), address.get(), false,
                        uint16_t(0), uint16_t(0));
  const auto got = out.download();
  const uint32_t base = address.download()[0];
  int inside = 0;
  for (int row = 0; row < 8; ++row)  // row = (h step) * 4 + (w step)
    for (int c = 0; c < C; ++c) {
      const int w = w0 + 2 * (row % 4), h = h0 + 2 * (row / 4);
      const bool in = w >= 0 && w < W && h >= 0 && h < H;
      inside += in && c == 0;
      const uint16_t want = in ? t[((size_t(n) * H + h) * W + w) * C + c] : 0;
      const uint32_t at = swizzle128(base + row * 128 + c * 2) - base;
      INFO("pixel ", row, " channel ", c, " at byte ", at);
      CHECK(got[at / 2] == want);
    }
  CHECK(inside == 3);  // (w, h) = (1, 1), (3, 1), (5, 1): the others lie in the padding

  element_strides[1] = 9;  // the driver's limit is 8
  CHECK(encode_4d(&map) == CUDA_ERROR_INVALID_VALUE);
  CHECK(warpnet::simt::last_tensor_map_refusal().find("elementStrides[1] = 9 is outside [1, 8]") != std::string::npos);
}

// An NHWC batch of 16-bit values t[i] = 1 + i (N=2, H=4, W=4, C=64) as an
// im2col map: 8 pixels of 64 channels a copy, the bounding box's corners as given.
struct Im2colImage {
  static constexpr int C = 64, W = 4, H = 4, N = 2;
  std::vector<uint16_t> t;
  DeviceBuffer<uint16_t> d_t;
  Im2colImage() : t(make()), d_t(t) {}
  static std::vector<uint16_t> make() {
    std::vector<uint16_t> v(size_t(C) * W * H * N);
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint16_t(1 + i);
    return v;
  }
  CUresult encode(CUtensorMap* map, const int (&lower)[2], const int (&upper)[2], cuuint32_t stride = 1,
                  cuuint32_t pixels = 8) {
    void* fn = nullptr;
    REQUIRE(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", &fn, 12000, cudaEnableDefault) == cudaSuccess);
    REQUIRE(fn);
    const cuuint64_t dims[4] = {C, W, H, N}, strides[3] = {C * 2, C * 2 * W, C * 2 * W * H};
    const cuuint32_t element_strides[4] = {1, stride, stride, 1};
    return reinterpret_cast<PFN_cuTensorMapEncodeIm2col_v12000>(fn)(
        map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, d_t.get(), dims, strides, lower, upper, C, pixels, element_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  // The 8 pixels one im2col copy from (w, h) of image n lands, checked
  // against want(pixel) = the (w, h, n) it must have read, or none for zeros.
  template <class Want>
  void check_copy(const CUtensorMap& map, int w, int h, int n, uint16_t off_w, uint16_t off_h, Want want) {
    DeviceBuffer<uint16_t> out(512);
    DeviceBuffer<uint32_t> address(1);
    warpnet::simt::launch(tma_box, dim3(1), dim3(64), kShared, map, 4, 0, w, h, n, out.get(), address.get(), true,
                          off_w, off_h);
    const auto got = out.download();
    const uint32_t base = address.download()[0];
    for (int pixel = 0; pixel < 8; ++pixel) {
      const std::optional<std::array<int, 3>> at = want(pixel);  // (w, h, n)
      for (int c = 0; c < C; ++c) {
        const uint16_t expected = at ? t[((size_t((*at)[2]) * H + (*at)[1]) * W + (*at)[0]) * C + c] : 0;
        INFO("pixel ", pixel, " channel ", c);
        CHECK(got[(swizzle128(base + pixel * 128 + c * 2) - base) / 2] == expected);
      }
    }
  }
};

// The expectations of the first three cases are what NVIDIA's hardware does
// in Triton's tutorial of TMA's im2col mode (python/tutorials/gluon,
// "tma-im2col", tested on Hopper there): a start in the padding, the tap's
// offsets moving every read, and a run of pixels crossing into the next image.
TEST_CASE("TMA im2col: pixels walk the bounding box row by row and image by image, each read at the tap's offset") {
  using Pixel = std::optional<std::array<int, 3>>;
  Im2colImage image;
  CUtensorMap map;
  SUBCASE("a start in the padding: the box's rows and columns from -1, zeros outside the image") {
    REQUIRE(image.encode(&map, {-1, -1}, {-1, -1}) == CUDA_SUCCESS);  // the box: [-1, 3) in w and h
    image.check_copy(map, -1, -1, 0, 0, 0, [](int pixel) -> Pixel {
      const int w = -1 + pixel % 4, h = -1 + pixel / 4;  // rows of 4: w = -1..2
      if (w < 0 || h < 0) return std::nullopt;
      return std::array<int, 3>{w, h, 0};
    });
  }
  SUBCASE("offsets move every pixel read, not the walk") {
    REQUIRE(image.encode(&map, {-1, -1}, {-1, -1}) == CUDA_SUCCESS);
    image.check_copy(map, -1, -1, 0, 1, 1, [](int pixel) -> Pixel {
      return std::array<int, 3>{pixel % 4, pixel / 4, 0};  // (-1, -1) + (1, 1) onward: the image itself
    });
  }
  SUBCASE("a run past the last row goes on in the next image") {
    REQUIRE(image.encode(&map, {0, 0}, {0, 0}) == CUDA_SUCCESS);
    image.check_copy(map, 3, 2, 0, 0, 0, [](int pixel) -> Pixel {
      const int index = 2 * 4 + 3 + pixel;  // pixels 11..18 of the batch, flattened (n, h, w)
      return std::array<int, 3>{index % 4, index / 4 % 4, index / 16};
    });
  }
  SUBCASE("a stride-2 convolution's walk: every other pixel, the box ending where the last output's window starts") {
    // 3x3 filter, stride 2, pad 1 on 4x4: 2x2 outputs an image. The box is
    // [-pad, (P - 1) * stride + 1 - pad) = [-1, 2): positions -1 and 1.
    constexpr int stride = 2, pad = 1, P = 2, upper = (P - 1) * stride + 1 - Im2colImage::H - pad;
    REQUIRE(image.encode(&map, {-pad, -pad}, {upper, upper}, stride) == CUDA_SUCCESS);
    const int r = 2, s = 1;  // the tap: offsets (s, r)
    image.check_copy(map, -pad, -pad, 0, s, r, [&](int pixel) -> Pixel {
      const int q = pixel % P, p = pixel / P % P, n = pixel / (P * P);  // output pixel (n, p, q) of the GEMM's row
      const int w = q * stride - pad + s, h = p * stride - pad + r;
      if (w < 0 || w >= Im2colImage::W || h < 0 || h >= Im2colImage::H) return std::nullopt;
      return std::array<int, 3>{w, h, n};
    });
  }
}

TEST_CASE("TMA im2col: a start outside the bounding box, a tiled copy of an im2col map and bad corners are errors") {
  Im2colImage image;
  CUtensorMap map;
  REQUIRE(image.encode(&map, {-1, -1}, {-1, -1}) == CUDA_SUCCESS);
  DeviceBuffer<uint16_t> out(512);
  DeviceBuffer<uint32_t> address(1);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(tma_box, dim3(1), dim3(64), kShared, map, 4, 0, 3, -1, 0, out.get(),
                                             address.get(), true, uint16_t(0), uint16_t(0)),
                       doctest::Contains("coordinate 3 in dimension 1 lies outside the bounding box [-1, 3)"),
                       LaunchError);
  CHECK_THROWS_WITH_AS(
      warpnet::simt::launch(tma_box, dim3(1), dim3(64), kShared, map, 4, 0, 0, 0, 0, out.get(), address.get(), false,
                            uint16_t(0), uint16_t(0)),
      doctest::Contains("a tiled copy of an im2col tensor map"), LaunchError);
  CHECK(image.encode(&map, {-200, 0}, {0, 0}) == CUDA_ERROR_INVALID_VALUE);  // 4-D corners: [-128, 127]
  CHECK(warpnet::simt::last_tensor_map_refusal().find("is outside [-128, 127] (rank 4)") != std::string::npos);
  CHECK(image.encode(&map, {0, 0}, {-4, 0}) == CUDA_ERROR_INVALID_VALUE);
  CHECK(warpnet::simt::last_tensor_map_refusal().find("the bounding box [0, 0) of dimension 1 is empty") !=
        std::string::npos);
}

TEST_CASE("wgmma: m64n128k32 e4m3 from TMA-loaded K-major tiles equals a plain loop") {
  using warpnet::simt::decode;
  using warpnet::simt::kE4M3;
  // Small integers times powers of two: every product and sum exact in fp32.
  std::vector<uint8_t> a(64 * 128), b(128 * 128);
  const float values[] = {-3, -2, -1, -0.5f, 0, 0.5f, 1, 2, 3};
  auto code = [&](float v) { return warpnet::simt::encode(kE4M3, v, false); };
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(code(values[(i * 7 + i / 128) % 9]));
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(code(values[(i * 5 + i / 128 * 3) % 9]));
  std::vector<float> want(64 * 128, 0.0f);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 128; ++n)
      for (int k = 0; k < 128; ++k) want[m * 128 + n] += decode(kE4M3, a[m * 128 + k]) * decode(kE4M3, b[n * 128 + k]);
  DeviceBuffer<uint8_t> d_a(a), d_b(b);
  DeviceBuffer<float> c(64 * 128 + 128);
  CUtensorMap map_a, map_b;
  REQUIRE(encode(&map_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d_a.get(), 128, 64, 128, 64) == CUDA_SUCCESS);
  REQUIRE(encode(&map_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d_b.get(), 128, 128, 128, 128) == CUDA_SUCCESS);
  warpnet::simt::launch(wgmma_fp8, dim3(1), dim3(128), kShared, map_a, map_b, c.get(), int(kNone));
  std::vector<float> got = c.download();
  CHECK(std::vector<float>(got.begin(), got.begin() + 64 * 128) == want);

  // Issued before the copy's barrier completed: the stage may still be in flight.
  const auto launch = [&](Misuse misuse) {
    warpnet::simt::launch(wgmma_fp8, dim3(1), dim3(128), kShared, map_a, map_b, c.get(), int(misuse));
  };
  CHECK_THROWS_WITH_AS(launch(kEarly),
                       doctest::Contains("that a TMA copy has not finished writing: wait on the copy's mbarrier"),
                       LaunchError);
  // The accumulators belong to the wgmma until its wait: read before it, NaN
  // (the result after the wait is still right); written, an error.
  launch(kPeek);
  got = c.download();
  CHECK(std::vector<float>(got.begin(), got.begin() + 64 * 128) == want);
  for (int t = 0; t < 128; ++t) CHECK(std::isnan(got[size_t(64 * 128 + t)]));
  CHECK_THROWS_WITH_AS(launch(kPoke), doctest::Contains("lane 0 wrote accumulator 3 of the wgmma issued at "),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch(kNoFence),
                       doctest::Contains("is the warpgroup's first, and no wgmma.fence came before it"), LaunchError);
  // The k-slices' starts (32 bytes apart, within a row) are fine; a whole
  // row off the 1024-byte pattern is not.
  CHECK_THROWS_WITH_AS(launch(kOffPattern),
                       doctest::Contains(", row 1 of the 128-byte swizzle's 1024-byte pattern, with base offset 0"),
                       LaunchError);
  // wgmma is warpgroup-wide: every warp issues each one, the same one. The
  // error comes at the first instruction where two warps part (which of the
  // two issued it first is the scheduler's order), naming both.
  CHECK_THROWS_WITH_AS(launch(kOneWarpShort), doctest::Contains("warpgroup 0: warps "), LaunchError);
  CHECK_THROWS_WITH_AS(launch(kOneWarpShort), doctest::Contains(" part at their 5th wgmma instruction: warp "),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch(kOneWarpShort), doctest::Contains(" wgmma.commit_group at "),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch(kOneWarpShort), doctest::Contains(" wgmma.mma_async at "),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch(kOtherOrder), doctest::Contains(" part at their 2nd wgmma instruction: warp "),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch(kOtherOrder),
                       doctest::Contains("(the same instruction, other operands: descriptors, shape or wait depth)"),
                       LaunchError);
  // A warp that stops short is found when the block ends, and the error
  // names the first instruction it left out.
  CHECK_THROWS_WITH_AS(launch(kTrailingFence),
                       doctest::Contains("warpgroup 0: warp 3 issued 4 wgmma.mma_async, 1 wgmma.fence, 1 commit_group "
                                         "and 1 wait_group where warp "),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch(kTrailingFence), doctest::Contains("'s 8th, wgmma.fence at "),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch(kMixedShapes),
                       doctest::Contains("(n = 256, k = 32) accumulates into registers of the one at "),
                       LaunchError);
  CHECK_THROWS_WITH_AS(launch(kMixedShapes), doctest::Contains("(n = 128, k = 32) with no wgmma.fence between"),
                       LaunchError);
}

TEST_CASE("mbarrier: a phase that cannot complete, and an arrival its phase has no room for, are errors that say so") {
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(waits_forever, dim3(1), dim3(32), kShared, 1),
                       doctest::Contains("deadlock: this thread waits on the mbarrier at shared address 0x"),
                       LaunchError);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(waits_forever, dim3(1), dim3(32), kShared, 1),
                       doctest::Contains("which still lacks 1 of 2 arrivals and 0 transaction bytes"), LaunchError);
  CHECK_NOTHROW(warpnet::simt::launch(waits_forever, dim3(1), dim3(32), kShared, 2));
  // A third arrival is the next phase's first: legal.
  CHECK_NOTHROW(warpnet::simt::launch(waits_forever, dim3(1), dim3(32), kShared, 3));
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(arrives_twice, dim3(1), dim3(1), kShared),
                       doctest::Contains("more arrivals than the 1 the mbarrier at"), LaunchError);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(arrives_before_init_is_seen, dim3(1), dim3(32), kShared),
                       doctest::Contains("thread (1,0,0): mbarrier.arrive"), LaunchError);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(arrives_before_init_is_seen, dim3(1), dim3(32), kShared),
                       doctest::Contains("was initialized by thread (0,0,0) with no __syncthreads() since"), LaunchError);
}

TEST_CASE("TMA: a copy still in flight at exit, and maps the driver would refuse, are errors") {
  std::vector<uint16_t> t(64 * 8, 1);
  DeviceBuffer<uint16_t> d_t(t);
  CUtensorMap map;
  REQUIRE(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d_t.get(), 64, 8, 64, 8) == CUDA_SUCCESS);
  CHECK_THROWS_WITH_AS(warpnet::simt::launch(copy_nobody_waits_for, dim3(1), dim3(1), kShared, map),
                       doctest::Contains("the block exited with 1 TMA copies in flight"), LaunchError);

  // A row pitch of 60 x 2 bytes is not a multiple of 16; a 32-element box of
  // 2 bytes is 64 bytes, not the 128-byte row the swizzle needs (here).
  CHECK(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d_t.get(), 60, 8, 64, 8) == CUDA_ERROR_INVALID_VALUE);
  CHECK(warpnet::simt::last_tensor_map_refusal().find("globalStrides[0] = 120") != std::string::npos);
  CHECK(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d_t.get(), 64, 8, 32, 8) == CUDA_ERROR_INVALID_VALUE);
  CHECK(warpnet::simt::last_tensor_map_refusal().find("inner extents of exactly 128 bytes, not 64") != std::string::npos);
}
