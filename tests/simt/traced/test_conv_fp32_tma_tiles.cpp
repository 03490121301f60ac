// conv2d_nhwc/16's two tile heights: 8 rows a thread (v14's tiles) and 6
// (three quarters as tall), at each of its three tile widths. The registry
// test runs the height that conv_v16::rows_per_thread picks for the
// emulator's SMs (its worker threads) at each test size; on a GPU with 132
// SMs it picks others, so every kernel is checked here against the op's
// reference, with fewer blocks than tiles so that a block's ring runs on
// from tile to tile. Traced (see ../../CMakeLists.txt): the checker also
// fails a launch on any out-of-bounds access, race or uninitialized shared read.
// And the rule itself, at an H200's 132 SMs, at issue 5's layers.
#include <doctest/doctest.h>

#include <string>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/traced/candidate_check.hpp"
#include "tests/simt/traced/conv_candidates.hpp"  // before the kernel files (see there)

namespace {
#include "kernels/conv/16_implicit_gemm_fp32_tma.cu"  // includes conv v14 (v13) and matmul v20 (v16)
}  // namespace

namespace {

using conv_candidates::shape;

TEST_CASE("conv2d_nhwc/16: both tile heights at every tile width, blocks walking several tiles") {
  // conv2d_nhwc sizes {N, C, H, W, K, R, S, stride, pad, dilation}, C a
  // multiple of 4 (TMA's path; C = 36 and 40 leave a partial 32-channel step).
  const int sizes[][10] = {
      {4, 8, 12, 12, 16, 3, 3, 1, 1, 1},     // BN = 64: 576 pixels, 3 tiles of 256 or of 192
      {3, 40, 19, 19, 100, 3, 3, 2, 1, 1},   // BN = 128, stride 2: 300 pixels, 3 tiles of 128, 4 of 96
      {1, 8, 12, 12, 264, 3, 3, 1, 1, 1},    // BN = 256: 144 pixels x 2 channel tiles, 2 x 2 of 128 or of 96
      {2, 36, 9, 11, 264, 3, 3, 2, 1, 2}};   // BN = 256, dilation 2: 40 pixels, 2 tiles of either
  int checked = 0;
  conv_candidates::for_each_size("conv2d_nhwc", sizes,
                                 [&](const ConvShape& g, const std::string& at, const float* x, const float* w,
                                     const std::vector<double>& want, const std::vector<double>& bound) {
    REQUIRE_MESSAGE(conv_v14::describable(g, x, w, sizeof(float)), "TMA cannot describe x or w", at);
    for (const int tm : {conv_v16::kRows, conv_v16::kShortRows})
      conv_v16::with_tile(g, tm, [&]<int BN, int TM>() {
        const int tiles = conv_v16::tiles_of(g, TM).count(), blocks = tiles > 2 ? 2 : 1;
        const std::string what = warpnet::cat(conv_v16::Config<BN, TM>::TILE_M, "x", BN, " tiles (", TM,
                                              " rows a thread), ", blocks, " blocks for ", tiles, " tiles", at);
        candidate_check::check(
            what, [&](float* y) { REQUIRE(conv_v16::launch<BN, TM>(blocks, g, x, w, y)); }, want, bound);
        ++checked;
      });
  });
  CHECK(checked == 8);
}

TEST_CASE("conv2d_nhwc/16: the shorter tiles where the busiest of an H200's 132 SMs computes fewer rows") {
  constexpr int kH200 = 132;
  // Issue 5's 3x3 layers, N = 64, C = K.
  const ConvShape at56 = conv_shape(64, 64, 56, 56, 64, 3, 3, 1, 1, 1);
  const ConvShape at28 = conv_shape(64, 128, 28, 28, 128, 3, 3, 1, 1, 1);
  const ConvShape at14 = conv_shape(64, 256, 14, 14, 256, 3, 3, 1, 1, 1);
  // 14x14: 12,544 pixels make 98 tiles of 128 x 256 (one round, 34 SMs
  // idle) or 131 of 96 x 256 (one round of 96 rows).
  CHECK(conv_v16::tiles_of(at14, conv_v16::kRows).count() == 98);
  CHECK(conv_v16::tiles_of(at14, conv_v16::kShortRows).count() == 131);
  CHECK(conv_v16::rows_per_thread(at14, kH200) == conv_v16::kShortRows);
  // 28x28: 392 tiles of 128 (3 rounds, 384 rows) or 523 of 96 (4 rounds, 384 rows): a tie, the tall ones.
  CHECK(conv_v16::tiles_of(at28, conv_v16::kRows).count() == 392);
  CHECK(conv_v16::tiles_of(at28, conv_v16::kShortRows).count() == 523);
  CHECK(conv_v16::rows_per_thread(at28, kH200) == conv_v16::kRows);
  // 56x56: 784 tiles of 256 x 64 (6 rounds, 1536 rows) or 1046 of 192 (8 rounds, 1536 rows): the tall ones.
  CHECK(conv_v16::tiles_of(at56, conv_v16::kRows).count() == 784);
  CHECK(conv_v16::tiles_of(at56, conv_v16::kShortRows).count() == 1046);
  CHECK(conv_v16::rows_per_thread(at56, kH200) == conv_v16::kRows);
  // One SM runs every tile in turn: 98 x 128 = 12,544 rows, exactly the
  // pixels, against 131 x 96 = 12,576.
  CHECK(conv_v16::rows_per_thread(at14, 1) == conv_v16::kRows);
}

}  // namespace
