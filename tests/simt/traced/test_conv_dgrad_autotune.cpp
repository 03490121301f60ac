// Every candidate tile of conv2d_dgrad/03_autotuned against a CPU reference,
// at awkward sizes, on both of its paths (the tap table at stride 1, dgrad
// v2's kernel at stride 2); every direct tile of conv2d_dgrad/04 where it
// applies, every pipelined tile of 05, both Winograd candidates of 06, 07's
// fused kernel and 08's F(4x4) candidates, whole and chunked (their other
// candidates are the previous version's), the Winograd ones against the bound
// derived for their arithmetic (the library's, which the registry checks them
// with: src/device/kernels/conv/winograd_bound.hpp). The registry test checks
// only the candidate the tuning table picks at each test size; on a GPU the
// autotuner may pick any of them, so each is checked here, on the inputs,
// reference and bound the registry test uses (conv_candidates.hpp). Traced
// (see ../../CMakeLists.txt): the checker also fails a launch on any
// out-of-bounds access, shared-memory race or uninitialized shared read.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/traced/candidate_check.hpp"
#include "tests/simt/traced/conv_candidates.hpp"  // before the kernel files (see there)

namespace {
#include "kernels/conv/dgrad_08_winograd_4x4.cu"  // includes dgrad 07 ... 02 and conv 12 ... 07
}  // namespace

namespace {

using candidate_check::kSeed;
using conv_candidates::for_each_size;
using conv_candidates::shape;
using conv_candidates::WinogradTile;

// Candidate i, launched as the registration launches it (its kernel for the
// stride, grid over dX (N·H·W, C)).
void launch_candidate(int i, const ConvShape& g, const float* dy, const float* w, float* dx) {
  conv_dgrad_v03::with_candidate(i, [&]<class T>() {
    const dim3 grid(warpnet::ceil_div(g.N * g.H * g.W, T::BM), warpnet::ceil_div(g.C, T::BN));
    warpnet::simt::launch(T::kernel(g), grid, dim3(T::threads), 0, g, dy, w, dx);
  });
}

// Direct candidate i of conv2d_dgrad/04, launched as the registration launches it.
void launch_direct(int i, const ConvShape& g, const float* dy, const float* w, float* dx) {
  conv_dgrad_v04::with_direct(i, g, [&]<int CMAX, int TH, int TW>() {
    const dim3 grid(warpnet::ceil_div(g.W, TW), warpnet::ceil_div(g.H, TH), g.N);
    warpnet::simt::launch(conv2d_dgrad_few_channels<CMAX, TH, TW>, grid, dim3(TH * TW),
                          conv_dgrad_v04::shared_bytes(g, TH, TW), g, conv_dgrad_v04::chunk_channels(g, TH, TW), dy,
                          w, dx);
  });
}

// Pipelined tile i of conv2d_dgrad/05, launched with its own shape (grid over dX (N·H·W, C)).
void launch_pipelined(int i, const ConvShape& g, const float* dy, const float* w, float* dx) {
  conv_dgrad_v05::with_pipelined(i, [&]<class T>() {
    const dim3 grid(warpnet::ceil_div(g.N * g.H * g.W, T::BM), warpnet::ceil_div(g.C, T::BN));
    warpnet::simt::launch(T::kernel(), grid, dim3(T::threads), 0, g, dy, w, dx);
  });
}

// Winograd candidate i of conv2d_dgrad/06, its five launches with a
// workspace of its own (a launch the checker stops leaves its error for check()).
void launch_winograd(int i, const ConvShape& g, const float* dy, const float* w, float* dx) {
  DeviceBuffer<float> workspace(conv_v10::workspace_floats(conv_dgrad_v06::forward_view(g)));
  conv_dgrad_v06::launch_winograd(i, g, dy, w, dx, workspace.get());
}

// conv2d_dgrad/07's fused kernel after the turned filter transform, on a workspace of its own.
void launch_fused(const ConvShape& g, const float* dy, const float* w, float* dx) {
  DeviceBuffer<float> workspace(winograd::fused::workspace_floats(conv_dgrad_v07::forward_view(g)));
  conv_dgrad_v07::launch_fused(g, dy, w, dx, workspace.get());
}

// conv2d_dgrad/08's F(4x4) candidate i in chunks of `chunk` images, its
// launches with a workspace of its own.
void launch_winograd_4x4(int i, int chunk, const ConvShape& g, const float* dy, const float* w, float* dx) {
  DeviceBuffer<float> workspace(winograd::f4x4::workspace_floats(conv_dgrad_v08::forward_view(g), chunk));
  conv_dgrad_v08::launch_winograd(i, chunk, g, dy, w, dx, workspace.get());
}

}  // namespace

TEST_CASE("conv dgrad autotune: every candidate of conv2d_dgrad/03 matches the CPU reference at awkward sizes") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},      // below every tile
      {3, 1, 13, 13, 5, 5, 5, 1, 2, 1},    // C = 1, K = 5, 5x5, pad 2
      {2, 3, 9, 11, 5, 3, 5, 1, 1, 1},     // C = 3, a 3x5 filter, pad 1, H != W
      {1, 3, 13, 7, 5, 3, 3, 1, 2, 2},     // dilation 2, pad 2
      {3, 5, 7, 13, 5, 1, 1, 1, 0, 1},     // 1x1 filters: a pure GEMM
      {2, 70, 5, 5, 8, 3, 3, 1, 1, 1},     // C = 70: past the widest tile (64), a second column of blocks
      {1, 4, 4, 4, 300, 3, 3, 1, 1, 1},    // K·R·S = 2700: past the table (2304), a second chunk of 396 taps
      {2, 6, 14, 14, 16, 5, 5, 1, 0, 1},   // LeNet-5's conv2
      {3, 3, 13, 13, 5, 3, 3, 2, 2, 2},    // stride 2 (dgrad v2's kernel), pad 2, dilation 2
      {1, 3, 9, 11, 5, 3, 5, 2, 1, 1}};    // stride 2, a 3x5 filter, H != W
  std::printf("conv dgrad autotune test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d_dgrad", sizes, [](const ConvShape& g, const std::string& at, const float* dy, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_dgrad_v03::kCandidates; ++i)
      candidate_check::check(
          conv_dgrad_v03::candidate_name(i) + at, [&](float* dx) { launch_candidate(i, g, dy, w, dx); }, want, bound);
  });
}

TEST_CASE("conv dgrad direct: every direct tile of conv2d_dgrad/04 matches the CPU reference where it applies") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},      // one pixel: C = 1 (one filter slot), a tile of mostly idle threads
      {3, 1, 13, 13, 5, 5, 5, 1, 2, 1},    // C = 1, 5x5, pad 2
      {2, 2, 9, 11, 5, 3, 5, 1, 1, 1},     // C = 2, a 3x5 filter, H != W
      {1, 3, 13, 7, 5, 3, 3, 1, 2, 2},     // C = 3 (4 slots), dilation 2, pad 2
      {2, 6, 14, 14, 16, 5, 5, 1, 0, 1},   // LeNet-5's conv2 (8 slots)
      {1, 8, 37, 19, 4, 3, 3, 1, 1, 1},    // C = 8, the most it takes; 3 x 2 tiles of 16x16, 5 x 1 of 8x32, 5 x 2 of 8x16
      {1, 5, 6, 6, 60, 5, 5, 1, 2, 1},     // K = 60: 3 chunks of 20 channels at 16x16 (48 KiB), 4 at 8x32
      {2, 4, 5, 5, 8, 1, 1, 1, 0, 1}};     // 1x1 filters
  for_each_size("conv2d_dgrad", sizes, [](const ConvShape& g, const std::string& at, const float* dy, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_dgrad_v04::kDirectTiles; ++i) {
      REQUIRE(conv_dgrad_v04::candidate_applies(i, g));
      candidate_check::check(
          conv_dgrad_v04::candidate_name(i) + at, [&](float* dx) { launch_direct(i, g, dy, w, dx); }, want, bound);
    }
  });
  // Where it does not apply: stride 2, C = 9, a window too wide for 48 KiB,
  // a batch past the grid's 65535 in z.
  CHECK_FALSE(conv_dgrad_v04::candidate_applies(0, shape({1, 3, 9, 9, 4, 3, 3, 2, 1, 1})));
  CHECK_FALSE(conv_dgrad_v04::candidate_applies(0, shape({65536, 1, 4, 4, 2, 3, 3, 1, 1, 1})));
  CHECK(conv_dgrad_v04::candidate_applies(0, shape({65535, 1, 4, 4, 2, 3, 3, 1, 1, 1})));
  CHECK_FALSE(conv_dgrad_v04::candidate_applies(0, shape({1, 9, 9, 9, 4, 3, 3, 1, 1, 1})));
  CHECK_FALSE(conv_dgrad_v04::candidate_applies(0, shape({1, 3, 200, 200, 4, 101, 101, 1, 50, 1})));
  CHECK(conv_dgrad_v04::candidate_applies(conv_dgrad_v04::kDirectTiles, shape({1, 9, 9, 9, 4, 3, 3, 1, 1, 1})));
}

TEST_CASE("conv dgrad pipelined: every pipelined tile of conv2d_dgrad/05 matches the CPU reference at stride 1") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},      // one pixel, one tap
      {3, 1, 13, 13, 5, 5, 5, 1, 2, 1},    // C = 1, K = 5, 5x5, pad 2
      {2, 3, 9, 11, 5, 3, 5, 1, 1, 1},     // a 3x5 filter, pad 1, H != W
      {1, 3, 13, 7, 5, 3, 3, 1, 2, 2},     // dilation 2, pad 2
      {3, 5, 7, 13, 5, 1, 1, 1, 0, 1},     // 1x1 filters: K·R·S = 5 < BK
      {2, 130, 5, 5, 8, 3, 3, 1, 1, 1},    // C = 130: past 128, a second column of tiles
      {1, 4, 4, 4, 300, 3, 3, 1, 1, 1},    // K·R·S = 2700: three chunks of the 1152-tap table
      {2, 64, 14, 14, 32, 3, 3, 1, 1, 1}}; // H·W = 196: dx stored as float4s
  std::printf("conv dgrad pipelined test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d_dgrad", sizes, [](const ConvShape& g, const std::string& at, const float* dy, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_dgrad_v05::kPipelined; ++i) {
      REQUIRE(conv_dgrad_v05::candidate_applies(i, g));
      candidate_check::check(
          conv_dgrad_v05::candidate_name(i) + at, [&](float* dx) { launch_pipelined(i, g, dy, w, dx); }, want, bound);
    }
  });
  // Stride 2: not the pipelined tiles; dgrad v3's tiles (after v4's direct ones) take it.
  CHECK_FALSE(conv_dgrad_v05::candidate_applies(0, shape({3, 3, 13, 13, 5, 3, 3, 2, 2, 2})));
  CHECK(conv_dgrad_v05::table_choice(shape({3, 3, 13, 13, 5, 3, 3, 2, 2, 2})) ==
        conv_dgrad_v05::kPipelined + conv_dgrad_v04::table_choice(shape({3, 3, 13, 13, 5, 3, 3, 2, 2, 2})));
  // The table: dgrad v4's direct tile at LeNet-5's conv2, 128x128 in 8 warps at issue 5's layers.
  CHECK(conv_dgrad_v05::table_choice(shape({64, 6, 14, 14, 16, 5, 5, 1, 0, 1})) == conv_dgrad_v05::kPipelined);
  CHECK(conv_dgrad_v05::table_choice(shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1})) == 0);
  CHECK(conv_dgrad_v05::table_choice(shape({64, 256, 14, 14, 256, 3, 3, 1, 1, 1})) == 0);  // 98 x 2 blocks
}

TEST_CASE("conv dgrad winograd: dgrad/06's two Winograd candidates and dgrad/07's fused kernel match the CPU") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}: 3x3, stride 1, dilation 1, pad <= 2 (where Winograd applies)
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 3, 3, 1, 1, 1},       // one pixel: dy 1x1, the forward view's pad 1
      {1, 1, 3, 3, 1, 3, 3, 1, 0, 1},       // pad 0: dy 1x1 padded by 2
      {3, 3, 13, 13, 5, 3, 3, 1, 1, 1},     // H = W = 13: a half tile at the end of each row and column
      {2, 5, 7, 12, 70, 3, 3, 1, 2, 1},     // pad 2 (the view's pad 0), H != W; K = 70 GEMM columns of C = 5
      {2, 130, 9, 9, 17, 3, 3, 1, 1, 1},    // C = 130: past the 128-row GEMM tile; K = 17, a partial k-step
      {2, 64, 14, 14, 32, 3, 3, 1, 1, 1}};  // dgrad v5's float4 layer
  std::printf("conv dgrad winograd test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d_dgrad", sizes, [](const ConvShape& g, const std::string& at, const float* dy, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_dgrad_v06::kWinograd; ++i) {
      REQUIRE(conv_dgrad_v06::candidate_applies(i, g));
      candidate_check::check(
          conv_dgrad_v06::candidate_name(i) + at, [&](float* dx) { launch_winograd(i, g, dy, w, dx); }, want, bound);
    }
    REQUIRE(conv_dgrad_v07::candidate_applies(0, g));
    candidate_check::check(
        conv_dgrad_v07::candidate_name(0) + at, [&](float* dx) { launch_fused(g, dy, w, dx); }, want, bound);
  }, WinogradTile::f2x2);
  // Where it does not apply: stride 2, pad 3, a 5x5 filter; dgrad v5's candidates do.
  CHECK_FALSE(conv_dgrad_v06::candidate_applies(0, shape({1, 3, 9, 9, 4, 3, 3, 2, 1, 1})));
  CHECK_FALSE(conv_dgrad_v06::candidate_applies(1, shape({1, 3, 9, 9, 4, 3, 3, 1, 3, 1})));
  CHECK_FALSE(conv_dgrad_v06::candidate_applies(0, shape({1, 3, 9, 9, 4, 5, 5, 1, 2, 1})));
  CHECK(conv_dgrad_v06::candidate_applies(conv_dgrad_v06::kWinograd, shape({1, 3, 9, 9, 4, 5, 5, 1, 2, 1})));
  // The table: Winograd at issue 5's layers (the GEMMs' rows are C: 64 rows at C = 64), dgrad v5's
  // table at LeNet-5's conv2 (5x5) and at C = 8.
  CHECK(conv_dgrad_v06::table_choice(shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1})) == 1);
  CHECK(conv_dgrad_v06::table_choice(shape({64, 256, 14, 14, 256, 3, 3, 1, 1, 1})) == 0);
  for (const ConvShape& g : {shape({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}), shape({8, 8, 14, 14, 64, 3, 3, 1, 1, 1})})
    CHECK(conv_dgrad_v06::table_choice(g) == conv_dgrad_v06::kWinograd + conv_dgrad_v05::table_choice(g));
  // dgrad v7: its fused kernel where dgrad v6's table takes Winograd, dgrad v6's choice elsewhere.
  CHECK(conv_dgrad_v07::table_choice(shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1})) == 0);
  CHECK_FALSE(conv_dgrad_v07::candidate_applies(0, shape({1, 3, 9, 9, 4, 3, 3, 1, 3, 1})));  // pad 3
  for (const ConvShape& g : {shape({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}), shape({8, 8, 14, 14, 64, 3, 3, 1, 1, 1})})
    CHECK(conv_dgrad_v07::table_choice(g) == conv_dgrad_v07::kFused + conv_dgrad_v06::table_choice(g));
}

TEST_CASE("conv dgrad winograd 4x4: dgrad/08's F(4x4) candidates match the CPU at awkward sizes") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}: 3x3, stride 1, dilation 1, pad <= 2
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 3, 3, 1, 1, 1},       // one pixel: dy 1x1, the forward view's pad 1
      {1, 1, 3, 3, 1, 3, 3, 1, 0, 1},       // pad 0: dy 1x1 padded by 2
      {3, 3, 13, 13, 5, 3, 3, 1, 1, 1},     // H = W = 13: a one-column tile at the end of each row and column
      {2, 5, 7, 12, 70, 3, 3, 1, 2, 1},     // pad 2 (the view's pad 0), H != W (W = 12: float4 rows of dx)
      {2, 130, 9, 9, 17, 3, 3, 1, 1, 1},    // C = 130: past the 128-row GEMM tile; K = 17, a partial k-step
      {2, 64, 14, 14, 32, 3, 3, 1, 1, 1}};  // dgrad v5's float4 layer (W = 14: float2 pairs)
  std::printf("conv dgrad winograd 4x4 test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d_dgrad", sizes, [](const ConvShape& g, const std::string& at, const float* dy, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < winograd::kGemmTiles; ++i) {
      REQUIRE(conv_dgrad_v08::candidate_applies(i, g));
      for (const int chunk : {g.N, 1}) {  // the whole batch, and one image a chunk
        candidate_check::check(
            conv_dgrad_v08::candidate_name(i) + warpnet::cat(" in chunks of ", chunk, " images") + at,
            [&](float* dx) { launch_winograd_4x4(i, chunk, g, dy, w, dx); }, want, bound);
      }
    }
  }, WinogradTile::f4x4);
  CHECK_FALSE(conv_dgrad_v08::candidate_applies(0, shape({1, 3, 9, 9, 4, 3, 3, 1, 3, 1})));  // pad 3
  CHECK(conv_dgrad_v08::candidate_applies(conv_dgrad_v08::kWinograd, shape({1, 3, 9, 9, 4, 3, 3, 1, 1, 1})));  // v7 fused
  // The table: conv v12's at the forward view (the GEMMs' rows are C: 64 rows at C = 64), dgrad v7's
  // table where that takes no F(4x4): LeNet-5's conv2 (5x5), C = 8, and 2x2 planes (F(2x2)'s fused kernel).
  CHECK(conv_dgrad_v08::table_choice(shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1})) == 1);
  CHECK(conv_dgrad_v08::table_choice(shape({64, 256, 14, 14, 256, 3, 3, 1, 1, 1})) == 0);
  for (const ConvShape& g : {shape({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}), shape({8, 8, 14, 14, 64, 3, 3, 1, 1, 1}),
                             shape({8, 512, 2, 2, 512, 3, 3, 1, 1, 1})})
    CHECK(conv_dgrad_v08::table_choice(g) == conv_dgrad_v08::kWinograd + conv_dgrad_v07::table_choice(g));
}

TEST_CASE("conv dgrad direct: the tuning table takes the direct tile where it applies, dgrad v3's table elsewhere") {
  const auto choice = [](const int (&s)[10]) { return conv_dgrad_v04::table_choice(shape(s)); };
  CHECK(choice({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}) == 0);  // LeNet-5's conv2
  // Issue 5's layers: v3's 128x64 tile, after the two direct ones.
  CHECK(choice({64, 64, 56, 56, 64, 3, 3, 1, 1, 1}) == conv_dgrad_v04::kDirectTiles + 0);
  CHECK(choice({3, 3, 13, 13, 5, 3, 3, 2, 2, 2}) ==
        conv_dgrad_v04::kDirectTiles + conv_dgrad_v03::table_choice(shape({3, 3, 13, 13, 5, 3, 3, 2, 2, 2})));
}

TEST_CASE("conv dgrad autotune: the tuning table picks the narrowest tile covering C, then enough blocks") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const auto choice = [](const int (&s)[10]) { return conv_dgrad_v03::table_choice(shape(s)); };
  // Issue 5's layers (N = 64, 3x3, pad 1): dgrad v2's wide 128x64 tile.
  CHECK(choice({64, 64, 56, 56, 64, 3, 3, 1, 1, 1}) == 0);    // 1568 blocks
  CHECK(choice({64, 128, 28, 28, 128, 3, 3, 1, 1, 1}) == 0);  // 392 x 2 = 784 blocks
  CHECK(choice({64, 256, 14, 14, 256, 3, 3, 1, 1, 1}) == 0);  // 98 x 4 = 392 blocks
  CHECK(choice({8, 64, 14, 14, 64, 3, 3, 1, 1, 1}) == 1);     // 13 blocks of 128x64, 25 of 64x64: the smaller
  CHECK(choice({64, 32, 14, 14, 64, 3, 3, 1, 1, 1}) == 2);    // C = 32: 64x32, the only tile that width
  CHECK(choice({64, 1, 28, 28, 6, 5, 5, 1, 2, 1}) == 5);      // C = 1 at 28x28: 64x8, 784 blocks
  CHECK(choice({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}) == 5);     // LeNet-5's conv2: 64x8, 196 blocks
  CHECK(choice({8, 6, 14, 14, 16, 5, 5, 1, 0, 1}) == 6);      // at batch 8: 64x8 is 25 blocks, 32x8 49
  CHECK(choice({64, 16, 14, 14, 32, 3, 3, 1, 1, 1}) == 3);    // C = 16: 64x16, 196 blocks
  CHECK(choice({1, 1, 1, 1, 1, 1, 1, 1, 0, 1}) == 6);         // nothing reaches 132: the smallest 8-wide tile
}
