// Every candidate tile of conv2d/07_autotuned against a CPU reference, at
// awkward sizes, every direct block of conv2d/08 where it applies, every
// pipelined tile of 09, both Winograd candidates of 10, 11's fused kernel and
// 12's F(4x4) candidates, whole and chunked (their other candidates are the
// previous version's), the Winograd ones against the bound derived for their
// arithmetic (the library's, which the registry checks them with:
// src/device/kernels/conv/winograd_bound.hpp). The registry test checks only
// the candidate the tuning table picks at each test size; on a GPU the
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
#include "kernels/conv/12_winograd_4x4.cu"  // includes 11_winograd_fused.cu, 10, 09, 08 and 07
}  // namespace

namespace {

using candidate_check::kSeed;
using conv_candidates::for_each_size;
using conv_candidates::shape;
using conv_candidates::WinogradTile;

// Candidate i, launched with its own shape (the registration's gemm_tiles).
void launch_candidate(int i, const ConvShape& g, const float* x, const float* w, float* y) {
  conv_v07::with_candidate(i, [&]<class T>() {
    const dim3 grid(warpnet::ceil_div(g.gemm_m(), T::BM), warpnet::ceil_div(g.K, T::BN));
    warpnet::simt::launch(T::kernel(g), grid, dim3(T::threads), 0, g, x, w, y);
  });
}

// Direct candidate i of conv2d/08, launched as the registration launches it.
void launch_direct(int i, const ConvShape& g, const float* x, const float* w, float* y) {
  conv_v08::with_direct(i, g, [&]<int KMAX, int THREADS>() {
    warpnet::simt::launch(conv2d_few_channels<KMAX, THREADS>, conv_v08::grid(g, THREADS), dim3(THREADS),
                          conv_v08::shared_bytes(g, THREADS), g, conv_v08::chunk_channels(g, THREADS), x, w, y);
  });
}

// Pipelined tile i of conv2d/09, launched with its own shape.
void launch_pipelined(int i, const ConvShape& g, const float* x, const float* w, float* y) {
  conv_v09::with_pipelined(i, [&]<class T>() {
    const dim3 grid(warpnet::ceil_div(g.gemm_m(), T::BM), warpnet::ceil_div(g.K, T::BN));
    warpnet::simt::launch(T::kernel(), grid, dim3(T::threads), 0, g, x, w, y);
  });
}

// Winograd candidate i of conv2d/10, its five launches with a workspace of
// its own (a launch the checker stops leaves its error for check()).
void launch_winograd(int i, const ConvShape& g, const float* x, const float* w, float* y) {
  DeviceBuffer<float> workspace(conv_v10::workspace_floats(g));
  conv_v10::launch_winograd(i, g, x, w, y, workspace.get());
}

// conv2d/11's fused kernel after v10's filter transform, on a workspace of its own.
void launch_fused(const ConvShape& g, const float* x, const float* w, float* y) {
  DeviceBuffer<float> workspace(winograd::fused::workspace_floats(g));
  winograd::fused::launch(g, x, w, y, workspace.get());
}

// conv2d/12's F(4x4) at GEMM tile `tile` in chunks of `chunk` images (the
// whole batch, or smaller than the registered candidates' L2-sized chunks so
// that the test sizes make several), its launches with a workspace of its own.
void launch_winograd_4x4(int tile, int chunk, const ConvShape& g, const float* x, const float* w, float* y) {
  DeviceBuffer<float> workspace(winograd::f4x4::workspace_floats(g, chunk));
  winograd::f4x4::launch_winograd(tile, chunk, g, x, w, y, workspace.get());
}

}  // namespace

TEST_CASE("conv autotune: every candidate of conv2d/07 matches the CPU reference at awkward sizes") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},      // below every tile
      {3, 3, 13, 13, 5, 3, 3, 2, 2, 2},    // C = 3, K = 5, stride 2, pad 2, dilation 2
      {1, 3, 9, 11, 5, 3, 5, 2, 1, 1},     // a 3x5 filter, stride 2, H != W
      {3, 5, 7, 13, 5, 1, 1, 1, 0, 1},     // 1x1 filters: a pure GEMM
      {2, 8, 5, 5, 70, 3, 3, 1, 1, 1},     // K = 70: past the widest tile (64), a second column of blocks
      {1, 300, 4, 4, 3, 3, 3, 1, 1, 1},    // C·R·S = 2700: past the table (2304), a second chunk of 396 taps
      {2, 1, 28, 28, 6, 5, 5, 1, 2, 1},    // LeNet-5's conv1
      {2, 6, 14, 14, 16, 5, 5, 1, 0, 1}};  // LeNet-5's conv2
  std::printf("conv autotune test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_v07::kCandidates; ++i)
      candidate_check::check(
          conv_v07::candidate_name(i) + at, [&](float* y) { launch_candidate(i, g, x, w, y); }, want, bound);
  });
}

TEST_CASE("conv direct: every direct block of conv2d/08 matches the CPU reference where it applies") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},      // one pixel, K = 1 (one slot): a block of idle threads
      {3, 3, 13, 13, 5, 3, 3, 2, 2, 2},    // K = 5 (8 slots), stride 2, pad 2, dilation 2
      {1, 3, 9, 11, 2, 3, 5, 2, 1, 1},     // K = 2, a 3x5 filter, stride 2, H != W
      {3, 5, 7, 13, 3, 1, 1, 1, 0, 1},     // K = 3 (4 slots), 1x1 filters
      {2, 1, 28, 28, 6, 5, 5, 1, 2, 1},    // LeNet-5's conv1: 28 columns, 4 rows a block at 128 threads
      {2, 6, 14, 14, 16, 5, 5, 1, 0, 1},   // LeNet-5's conv2 (16 slots): the 10x10 output in one block, two at 64 threads
      {1, 4, 3, 300, 7, 3, 3, 1, 1, 1},    // Q = 300: wider than a block, tiles along q
      {1, 70, 6, 6, 4, 5, 5, 1, 2, 1}};    // C = 70: 2 chunks of input channels at 128 threads (48 KiB)
  for_each_size("conv2d", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_v08::kDirectBlocks; ++i) {
      REQUIRE(conv_v08::candidate_applies(i, g));
      candidate_check::check(
          conv_v08::candidate_name(i) + at, [&](float* y) { launch_direct(i, g, x, w, y); }, want, bound);
    }
  });
  // Where it does not apply: K = 17, a window too wide for 48 KiB, a batch
  // past the grid's 65535 in z.
  CHECK_FALSE(conv_v08::candidate_applies(0, shape({1, 3, 9, 9, 17, 3, 3, 1, 1, 1})));
  CHECK_FALSE(conv_v08::candidate_applies(0, shape({65536, 1, 4, 4, 2, 3, 3, 1, 1, 1})));
  CHECK(conv_v08::candidate_applies(0, shape({65535, 1, 4, 4, 2, 3, 3, 1, 1, 1})));
  CHECK_FALSE(conv_v08::candidate_applies(0, shape({1, 3, 200, 200, 4, 101, 101, 1, 50, 1})));
  CHECK(conv_v08::candidate_applies(conv_v08::kDirectBlocks, shape({1, 3, 9, 9, 17, 3, 3, 1, 1, 1})));
}

TEST_CASE("conv pipelined: every pipelined tile of conv2d/09 matches the CPU reference at awkward sizes") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},       // one output, one tap: one step, almost all zero-filled
      {3, 3, 13, 13, 5, 3, 3, 2, 2, 2},     // C = 3, K = 5, stride 2, pad 2, dilation 2
      {1, 3, 9, 11, 5, 3, 5, 2, 1, 1},      // a 3x5 filter, stride 2, H != W
      {3, 5, 7, 13, 5, 1, 1, 1, 0, 1},      // 1x1 filters: a pure GEMM, C·R·S = 5 < BK
      {2, 8, 5, 5, 130, 3, 3, 1, 1, 1},     // K = 130: past 128, a second column of tiles
      {1, 300, 4, 4, 3, 3, 3, 1, 1, 1},     // C·R·S = 2700: a second chunk of the table mid-run
      {3, 16, 9, 9, 40, 3, 3, 1, 1, 1},     // M = 243: two rows of tiles, the second mostly past M
      {2, 32, 14, 14, 64, 3, 3, 1, 1, 1}};  // lesson 05's layer
  std::printf("conv pipelined test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_v09::kPipelined; ++i)
      candidate_check::check(
          conv_v09::candidate_name(i) + at, [&](float* y) { launch_pipelined(i, g, x, w, y); }, want, bound);
  });
}

TEST_CASE("conv winograd: both Winograd candidates of conv2d/10 match the CPU reference at awkward sizes") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}: 3x3, stride 1, dilation 1 (where Winograd applies)
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 3, 3, 1, 1, 1},       // one output: one tile, three quarters past P and Q
      {1, 1, 3, 3, 1, 3, 3, 1, 0, 1},       // no padding, P = Q = 1
      {3, 3, 13, 13, 5, 3, 3, 1, 1, 1},     // P = Q = 13: a half tile at the end of each row and column
      {2, 5, 7, 12, 70, 3, 3, 1, 2, 1},     // pad 2, H != W; K = 70: past the 64-row GEMM tile
      {2, 17, 9, 9, 130, 3, 3, 1, 1, 1},    // K = 130: past the 128-row GEMM tile; C = 17, a partial k-step
      {1, 40, 6, 5, 3, 3, 3, 1, 0, 1},      // K = 3, C = 40; P = 4, Q = 3
      {2, 32, 14, 14, 64, 3, 3, 1, 1, 1}};  // lesson 05's layer
  std::printf("conv winograd test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_v10::kWinograd; ++i) {
      REQUIRE(conv_v10::candidate_applies(i, g));
      candidate_check::check(
          conv_v10::candidate_name(i) + at, [&](float* y) { launch_winograd(i, g, x, w, y); }, want, bound);
    }
  }, WinogradTile::f2x2);
  // Where it does not apply: stride 2, dilation 2, a 5x5 filter; v9's candidates do.
  CHECK_FALSE(conv_v10::candidate_applies(0, shape({1, 3, 9, 9, 4, 3, 3, 2, 1, 1})));
  CHECK_FALSE(conv_v10::candidate_applies(1, shape({1, 3, 9, 9, 4, 3, 3, 1, 2, 2})));
  CHECK_FALSE(conv_v10::candidate_applies(0, shape({1, 3, 9, 9, 4, 5, 5, 1, 2, 1})));
  CHECK(conv_v10::candidate_applies(conv_v10::kWinograd, shape({1, 3, 9, 9, 4, 5, 5, 1, 2, 1})));
}

TEST_CASE("conv winograd fused: conv2d/11's fused kernel matches the CPU reference at awkward sizes") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}: 3x3, stride 1, dilation 1
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 3, 3, 1, 1, 1},       // one output: one tile of 32, three quarters past P and Q
      {1, 1, 3, 3, 1, 3, 3, 1, 0, 1},       // no padding, P = Q = 1
      {3, 3, 13, 13, 5, 3, 3, 1, 1, 1},     // P = Q = 13: half tiles; 147 tiles, the last block partly past them
      {2, 5, 7, 12, 70, 3, 3, 1, 2, 1},     // pad 2, H != W (Q = 14, float2 stores); K = 70: three rows of blocks
      {2, 17, 9, 9, 40, 3, 3, 1, 1, 1},     // C = 17: a third chunk of one channel; K = 40: a half-empty second half
      {1, 40, 6, 5, 3, 3, 3, 1, 0, 1},      // K = 3, C = 40: five chunks; P = 4, Q = 3
      {2, 32, 14, 14, 64, 3, 3, 1, 1, 1}};  // lesson 05's layer
  std::printf("conv winograd fused test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    REQUIRE(conv_v11::candidate_applies(0, g));
    candidate_check::check(
        conv_v11::candidate_name(0) + at, [&](float* y) { launch_fused(g, x, w, y); }, want, bound);
  }, WinogradTile::f2x2);
  CHECK_FALSE(conv_v11::candidate_applies(0, shape({1, 3, 9, 9, 4, 3, 3, 2, 1, 1})));  // stride 2
  // The table: the fused kernel where v10's takes Winograd, v10's choice elsewhere.
  CHECK(conv_v11::table_choice(shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1})) == 0);
  for (const ConvShape& g : {shape({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}), shape({8, 8, 14, 14, 64, 3, 3, 1, 1, 1})})
    CHECK(conv_v11::table_choice(g) == conv_v11::kFused + conv_v10::table_choice(g));
}

TEST_CASE("conv winograd 4x4: conv2d/12's F(4x4) candidates match the CPU reference at awkward sizes, whole and in chunks") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}: 3x3, stride 1, dilation 1
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 3, 3, 1, 1, 1},       // one output: one tile, fifteen sixteenths past P and Q
      {1, 1, 3, 3, 1, 3, 3, 1, 0, 1},       // no padding, P = Q = 1
      {3, 3, 13, 13, 5, 3, 3, 1, 1, 1},     // P = Q = 13: a one-column tile at the end of each row and column
      {2, 5, 7, 12, 70, 3, 3, 1, 2, 1},     // pad 2, H != W (P = 9, Q = 14); K = 70: past the 64-row GEMM tile
      {2, 17, 9, 9, 130, 3, 3, 1, 1, 1},    // K = 130: past the 128-row GEMM tile; C = 17, a partial k-step
      {1, 40, 6, 5, 3, 3, 3, 1, 0, 1},      // K = 3, C = 40; P = 4, Q = 3
      {2, 16, 8, 8, 24, 3, 3, 1, 1, 1},     // Q = 8: every row of a tile one float4 store
      {2, 32, 14, 14, 64, 3, 3, 1, 1, 1}};  // lesson 05's layer
  std::printf("conv winograd 4x4 test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* w,
                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int tile = 0; tile < winograd::kGemmTiles; ++tile) {
      REQUIRE(conv_v12::candidate_applies(tile, g));
      for (const int chunk : {g.N, 1, 2}) {  // the whole batch; one image a chunk; two, the last one short at N = 3
        if (chunk > g.N) continue;
        candidate_check::check(
            conv_v12::candidate_name(tile) + warpnet::cat(" in chunks of ", chunk, " images") + at,
            [&](float* y) { launch_winograd_4x4(tile, chunk, g, x, w, y); }, want, bound);
      }
    }
  }, WinogradTile::f4x4);
  CHECK_FALSE(conv_v12::candidate_applies(0, shape({1, 3, 9, 9, 4, 3, 3, 2, 1, 1})));  // stride 2
  CHECK_FALSE(conv_v12::candidate_applies(1, shape({1, 3, 9, 9, 4, 3, 3, 1, 2, 2})));  // dilation 2
  CHECK(conv_v12::candidate_applies(conv_v12::kWinograd, shape({1, 3, 9, 9, 4, 3, 3, 1, 1, 1})));  // v11's fused
  // The chunked candidates where the batch makes two chunks of 24 MiB of V and M or more: issue 5's 56x56
  // layer (3.6 MB an image: chunks of 6), not its batch of one image.
  const ConvShape layer = shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1});
  CHECK(winograd::f4x4::chunk_images(layer, true) == 6);
  CHECK(winograd::f4x4::chunk_images(layer, false) == 64);
  for (int i = winograd::kGemmTiles; i < conv_v12::kWinograd; ++i) {
    CHECK(conv_v12::candidate_applies(i, layer));
    CHECK_FALSE(conv_v12::candidate_applies(i, shape({1, 64, 56, 56, 64, 3, 3, 1, 1, 1})));
  }
}

TEST_CASE("conv winograd 4x4: the tuning table takes F(4x4) where v10's takes Winograd and F(4x4) multiplies less") {
  const auto choice = [](const int (&s)[10]) { return conv_v12::table_choice(shape(s)); };
  // Issue 5's layers, at v10's GEMM tiles: 64 rows for K = 64, 128 for 128 and 256.
  CHECK(choice({64, 64, 56, 56, 64, 3, 3, 1, 1, 1}) == 1);
  CHECK(choice({64, 128, 28, 28, 128, 3, 3, 1, 1, 1}) == 0);
  CHECK(choice({64, 256, 14, 14, 256, 3, 3, 1, 1, 1}) == 0);
  // Products per image and channel pair: 7x7 planes 36·4 against F(2x2)'s 16·16, and 3x3 36·1 against 16·4:
  // F(4x4); 6x6 36·4 against 16·9 (a tie) and 2x2 36·1 against 16·1: F(2x2), v11's fused kernel.
  CHECK(choice({8, 512, 7, 7, 512, 3, 3, 1, 1, 1}) == 0);
  CHECK(choice({8, 512, 3, 3, 512, 3, 3, 1, 1, 1}) == 0);
  CHECK(choice({8, 512, 6, 6, 512, 3, 3, 1, 1, 1}) == conv_v12::kWinograd + 0);
  CHECK(choice({8, 512, 2, 2, 512, 3, 3, 1, 1, 1}) == conv_v12::kWinograd + 0);
  // Where v10's table takes no Winograd (C = 8, a 5x5 filter), v11's table.
  for (const ConvShape& g : {shape({8, 8, 14, 14, 64, 3, 3, 1, 1, 1}), shape({64, 6, 14, 14, 16, 5, 5, 1, 0, 1})})
    CHECK(conv_v12::table_choice(g) == conv_v12::kWinograd + conv_v11::table_choice(g));
}

TEST_CASE("conv winograd: the tuning table takes Winograd at 3x3 stride-1 layers with C, K >= 16, v9's elsewhere") {
  const auto choice = [](const int (&s)[10]) { return conv_v10::table_choice(shape(s)); };
  // Issue 5's layers: the 64-row GEMM tile at K = 64, the 128-row one at 128 and 256.
  CHECK(choice({64, 64, 56, 56, 64, 3, 3, 1, 1, 1}) == 1);
  CHECK(choice({64, 128, 28, 28, 128, 3, 3, 1, 1, 1}) == 0);
  CHECK(choice({64, 256, 14, 14, 256, 3, 3, 1, 1, 1}) == 0);
  CHECK(choice({8, 32, 14, 14, 96, 3, 3, 1, 1, 1}) == 0);  // 128 rows either way: the larger tile
  // v9's table: LeNet-5's 5x5 conv2, a stride-2 3x3 layer, and C = 8.
  for (const ConvShape& g : {shape({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}), shape({32, 64, 40, 40, 128, 3, 3, 2, 1, 1}),
                             shape({8, 8, 14, 14, 64, 3, 3, 1, 1, 1})})
    CHECK(conv_v10::table_choice(g) == conv_v10::kWinograd + conv_v09::table_choice(g));
}

TEST_CASE("conv pipelined: the tuning table takes v8's direct kernel, then a pipelined tile with enough blocks") {
  const auto choice = [](const int (&s)[10]) { return conv_v09::table_choice(shape(s)); };
  CHECK(choice({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}) == conv_v09::kPipelined);  // LeNet-5's conv2: v8's direct
  // Issue 5's layers: 128x128 in 8 warps (1568, 392 and 196 blocks).
  CHECK(choice({64, 64, 56, 56, 64, 3, 3, 1, 1, 1}) == 0);
  CHECK(choice({64, 128, 28, 28, 128, 3, 3, 1, 1, 1}) == 0);
  CHECK(choice({64, 256, 14, 14, 256, 3, 3, 1, 1, 1}) == 0);
  // 100 blocks of 128x128, 200 of 128x64 (M = 32·20·20): the narrower pipelined tile.
  CHECK(choice({32, 64, 40, 40, 128, 3, 3, 2, 1, 1}) == 2);
  // Too few blocks for any pipelined tile: v8's table (v7's tiles).
  CHECK(choice({8, 64, 14, 14, 64, 3, 3, 1, 1, 1}) ==
        conv_v09::kPipelined + conv_v08::table_choice(shape({8, 64, 14, 14, 64, 3, 3, 1, 1, 1})));
}

TEST_CASE("conv direct: the tuning table takes the direct kernel where it applies, v7's table elsewhere") {
  const auto choice = [](const int (&s)[10]) { return conv_v08::table_choice(shape(s)); };
  CHECK(choice({64, 1, 28, 28, 6, 5, 5, 1, 2, 1}) == 0);   // LeNet-5's conv1
  CHECK(choice({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}) == 0);  // and conv2
  // Issue 5's layers: v7's 128x64 tile, after the two direct ones.
  CHECK(choice({64, 64, 56, 56, 64, 3, 3, 1, 1, 1}) == conv_v08::kDirectBlocks + 0);
}

TEST_CASE("conv autotune: the tuning table picks the narrowest tile covering K, then enough blocks for an H200") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const auto choice = [](const int (&s)[10]) { return conv_v07::table_choice(shape(s)); };
  // Issue 5's layers (N = 64, 3x3, pad 1): v4's 128x64 tile.
  CHECK(choice({64, 64, 56, 56, 64, 3, 3, 1, 1, 1}) == 0);    // 1568 blocks
  CHECK(choice({64, 128, 28, 28, 128, 3, 3, 1, 1, 1}) == 0);  // 392 x 2 = 784 blocks
  CHECK(choice({64, 256, 14, 14, 256, 3, 3, 1, 1, 1}) == 0);  // 98 x 4 = 392 blocks
  CHECK(choice({8, 64, 14, 14, 64, 3, 3, 1, 1, 1}) == 1);     // 13 blocks of 128x64, 25 of 64x64: the smaller
  CHECK(choice({2, 16, 14, 14, 32, 3, 3, 1, 1, 1}) == 2);     // K = 32: 64x32, the only tile that width
  CHECK(choice({64, 1, 28, 28, 6, 5, 5, 1, 2, 1}) == 5);      // LeNet-5's conv1: 64x8, 784 blocks
  CHECK(choice({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}) == 4);     // conv2: 64x16 is 100 blocks, 32x16 200
  CHECK(choice({256, 6, 14, 14, 16, 5, 5, 1, 0, 1}) == 3);    // conv2 at batch 256: 64x16, 400 blocks
  CHECK(choice({1, 1, 1, 1, 1, 1, 1, 1, 0, 1}) == 6);         // nothing reaches 132: the smallest 8-wide tile
}
