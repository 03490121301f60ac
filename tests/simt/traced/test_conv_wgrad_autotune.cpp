// Every candidate tile of conv2d_wgrad/03_autotuned against a CPU reference
// at awkward sizes, with its split of the pixels and the ordered sum;
// conv2d_wgrad/04's direct kernel where it applies (its other candidates are
// v3's); conv2d_wgrad/05's pipelined tiles (its others are v4's); and
// sum_splits alone at every group count. The registry test checks
// only the candidate the tuning table picks at each test size; on a GPU the
// autotuner may pick any of them, so each is checked here, on the inputs,
// reference and bound the registry test uses (conv_candidates.hpp). Traced
// (see ../../CMakeLists.txt): the checker also fails a launch on any
// out-of-bounds access, shared-memory race or uninitialized shared read.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/traced/candidate_check.hpp"
#include "tests/simt/traced/conv_candidates.hpp"  // before the kernel files (see there)

namespace {
#include "kernels/conv/wgrad_05_implicit_gemm_pipelined.cu"  // includes wgrad_04_direct_few_channels.cu and 03
}  // namespace

namespace {

using candidate_check::kSeed;
using conv_candidates::for_each_size;
using conv_candidates::shape;

// launch(out) writes `splits` partial dw's, as the registrations launch
// them: into NaN-poisoned partials (a slice never written fails), then
// summed by sum_splits; one split writes dw itself.
template <class LaunchPartials>
void split_and_sum(const ConvShape& g, int splits, float* dw, LaunchPartials launch) {
  if (splits == 1) return launch(dw);
  const int elements = g.K * g.crs();
  DeviceBuffer<float> part(std::vector<float>(size_t(splits) * elements, std::numeric_limits<float>::quiet_NaN()));
  launch(part.get());
  const warpnet::SumSplitsLaunch sum = warpnet::sum_splits_launch(elements, splits);
  warpnet::simt::launch(warpnet::sum_splits<warpnet::kSumThreads>, sum.grid, sum.block, 0, elements, splits,
                        static_cast<const float*>(part.get()), dw);
}

// A GEMM tile T of wgrad v3 or v5 over dW^T (C·R·S, K), its pixels split as `split` says.
template <class T>
void launch_tile(const ConvShape& g, const conv_wgrad_v03::Split& split, const float* x, const float* dy, float* dw) {
  split_and_sum(g, split.splits, dw, [&](float* out) {
    const dim3 grid(warpnet::ceil_div(g.crs(), T::BM), warpnet::ceil_div(g.K, T::BN), split.splits);
    warpnet::simt::launch(T::kernel(g), grid, dim3(T::threads), 0, g, split.slice, x, dy, out);
  });
}

// conv2d_wgrad/03's candidate i.
void launch_candidate(int i, const ConvShape& g, const float* x, const float* dy, float* dw) {
  conv_wgrad_v03::with_candidate(i, [&]<class T>() { launch_tile<T>(g, conv_wgrad_v03::split_of(i, g), x, dy, dw); });
}

// conv2d_wgrad/05's pipelined tile i.
void launch_pipelined(int i, const ConvShape& g, const float* x, const float* dy, float* dw) {
  conv_wgrad_v05::with_pipelined(i,
                                 [&]<class T>() { launch_tile<T>(g, conv_wgrad_v05::split_of(i, g), x, dy, dw); });
}

// conv2d_wgrad/04's direct kernel: its runs of bands.
void launch_direct(const ConvShape& g, const float* x, const float* dy, float* dw) {
  const conv_wgrad_v04::Split split = conv_wgrad_v04::split_of(g);
  split_and_sum(g, split.splits, dw, [&](float* out) {
    conv_wgrad_v04::with_direct(g, [&]<int KMAX>() {
      warpnet::simt::launch(conv2d_wgrad_few_channels<KMAX>, dim3(split.splits), dim3(conv_wgrad_v04::kThreads),
                            conv_wgrad_v04::shared_bytes(g), g, conv_wgrad_v04::band_of(g), split.run, x, dy, out);
    });
  });
}

}  // namespace

TEST_CASE("conv wgrad autotune: every candidate of conv2d_wgrad/03 matches the CPU reference at awkward sizes") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},     // below every tile, one split
      {3, 1, 13, 13, 5, 5, 5, 1, 2, 1},   // C = 1, K = 5, 5x5, pad 2
      {2, 3, 9, 11, 5, 3, 5, 1, 1, 1},    // a 3x5 filter, pad 1, H != W
      {1, 3, 13, 7, 5, 3, 3, 1, 2, 2},    // dilation 2, pad 2
      {3, 3, 13, 13, 5, 3, 3, 2, 2, 2},   // stride 2, pad 2, dilation 2
      {1, 3, 9, 11, 5, 3, 5, 2, 1, 1},    // stride 2, a 3x5 filter
      {3, 5, 7, 13, 5, 1, 1, 1, 0, 1},    // 1x1 filters: a pure GEMM
      {2, 8, 9, 9, 70, 3, 3, 1, 1, 1},    // K = 70: past the widest tile (64), a second column of tiles
      {1, 15, 5, 5, 3, 3, 3, 1, 1, 1},    // C·R·S = 135: past the tallest tile (128)
      {2, 1, 28, 28, 6, 5, 5, 1, 2, 1},   // LeNet-5's conv1: 10 to 49 splits
      {2, 6, 14, 14, 16, 5, 5, 1, 0, 1},  // LeNet-5's conv2
      {6, 1, 28, 28, 6, 5, 5, 1, 2, 1}};  // conv1 at batch 6: 147 splits of 128x64x8 (8 groups in the sum)
  std::printf("conv wgrad autotune test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d_wgrad", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* dy,
                                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_wgrad_v03::kCandidates; ++i)
      candidate_check::check(
          warpnet::cat(conv_wgrad_v03::candidate_name(i), " (", conv_wgrad_v03::split_of(i, g).splits, " splits)", at),
          [&](float* dw) { launch_candidate(i, g, x, dy, dw); }, want, bound);
  });
}

TEST_CASE("conv wgrad pipelined: every pipelined tile of conv2d_wgrad/05 matches the CPU reference at awkward sizes") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},      // below every tile: one pixel, one step of which 7 pixels are past L
      {3, 1, 13, 13, 5, 5, 5, 1, 2, 1},    // C = 1, K = 5, 5x5, pad 2: C·R·S = 25, odd (scalar stores)
      {2, 3, 9, 11, 5, 3, 5, 1, 1, 1},     // a 3x5 filter, pad 1, H != W
      {1, 3, 13, 7, 5, 3, 3, 1, 2, 2},     // dilation 2, pad 2
      {3, 3, 13, 13, 5, 3, 3, 2, 2, 2},    // stride 2, pad 2, dilation 2
      {1, 3, 9, 11, 5, 3, 5, 2, 1, 1},     // stride 2, a 3x5 filter
      {3, 5, 7, 13, 5, 1, 1, 1, 0, 1},     // 1x1 filters: a pure GEMM; Q = 13 carries q past several rows a step
      {2, 4, 3, 3, 6, 3, 3, 1, 1, 1},      // Q = 3 < BK: a step carries q over three rows and into the next image
      {2, 8, 9, 9, 70, 3, 3, 1, 1, 1},     // K = 70: past 64, a second column of 64-wide tiles
      {1, 15, 5, 5, 3, 3, 3, 1, 1, 1},     // C·R·S = 135: past the tallest tile (128), float4 stores off (135 % 4)
      {2, 16, 14, 14, 136, 3, 3, 1, 1, 1}, // C·R·S = 144, K = 136: float4 stores, a third column of 64-wide tiles
      {2, 6, 14, 14, 16, 5, 5, 1, 0, 1}};  // LeNet-5's conv2
  std::printf("conv wgrad pipelined test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d_wgrad", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* dy,
                                          const std::vector<double>& want, const std::vector<double>& bound) {
    for (int i = 0; i < conv_wgrad_v05::kPipelined; ++i)
      candidate_check::check(
          warpnet::cat(conv_wgrad_v05::candidate_name(i), " (", conv_wgrad_v05::split_of(i, g).splits, " splits)", at),
          [&](float* dw) { launch_pipelined(i, g, x, dy, dw); }, want, bound);
  });
  // The table: v4's direct kernel where it applies; at ResNet's layers the
  // largest pipelined tile wasting little (C·R·S = 576, 1152, 2304 are whole
  // 128-row tiles; K = 64 is half a 128-wide one).
  CHECK(conv_wgrad_v05::table_choice(shape({64, 1, 28, 28, 6, 5, 5, 1, 2, 1})) == conv_wgrad_v05::kPipelined);
  CHECK(conv_wgrad_v05::table_choice(shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1})) == 2);   // 128x64
  CHECK(conv_wgrad_v05::table_choice(shape({64, 128, 28, 28, 128, 3, 3, 1, 1, 1})) == 0);  // 128x128
  CHECK(conv_wgrad_v05::table_choice(shape({64, 256, 14, 14, 256, 3, 3, 1, 1, 1})) == 0);
}

TEST_CASE("conv wgrad direct: conv2d_wgrad/04's direct kernel matches the CPU reference where it applies") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const int sizes[][10] = {
      {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},      // one tap, one pixel: 256 groups of pixels, 255 of them idle
      {3, 1, 13, 13, 5, 5, 5, 1, 2, 1},    // K = 5 (8 slots), C = 1, 5x5, pad 2: 10 groups
      {2, 3, 9, 11, 2, 3, 5, 1, 1, 1},     // K = 2, a 3x5 filter, H != W
      {1, 3, 13, 7, 3, 3, 3, 1, 2, 2},     // K = 3 (4 slots), dilation 2, pad 2
      {3, 3, 13, 13, 5, 3, 3, 2, 2, 2},    // stride 2, pad 2, dilation 2
      {2, 6, 14, 14, 16, 5, 5, 1, 0, 1},   // LeNet-5's conv2: 150 taps, one group
      {2, 1, 28, 28, 6, 5, 5, 1, 2, 1},    // LeNet-5's conv1: 25 taps, 10 groups
      {1, 10, 7, 7, 4, 5, 5, 1, 2, 1},     // C·R·S = 250: the most taps, one group, 6 idle threads
      {1, 1, 60, 60, 16, 3, 3, 1, 1, 1},   // bands of 9 rows (48 KiB), the last one 6
      {600, 1, 4, 4, 2, 3, 3, 1, 1, 1}};   // 600 bands in runs of 3: 200 partials, summed in 8 groups
  std::printf("conv wgrad direct test: seed %llu\n", (unsigned long long)kSeed);
  for_each_size("conv2d_wgrad", sizes, [](const ConvShape& g, const std::string& at, const float* x, const float* dy,
                                          const std::vector<double>& want, const std::vector<double>& bound) {
    REQUIRE(conv_wgrad_v04::applies(g));
    const conv_wgrad_v04::Band band = conv_wgrad_v04::band_of(g);
    candidate_check::check(
        warpnet::cat(conv_wgrad_v04::candidate_name(0), " (bands of ", band.bp, " rows, ", band.groups, " groups, ",
                     conv_wgrad_v04::split_of(g).splits, " splits)", at),
        [&](float* dw) { launch_direct(g, x, dy, dw); }, want, bound);
  });
  // The bands and splits the sizes above rely on.
  CHECK(conv_wgrad_v04::band_of(shape({1, 1, 60, 60, 16, 3, 3, 1, 1, 1})).bp == 9);
  CHECK(conv_wgrad_v04::split_of(shape({600, 1, 4, 4, 2, 3, 3, 1, 1, 1})).run == 3);
  CHECK(conv_wgrad_v04::split_of(shape({600, 1, 4, 4, 2, 3, 3, 1, 1, 1})).splits == 200);
  CHECK(conv_wgrad_v04::split_of(shape({256, 6, 14, 14, 16, 5, 5, 1, 0, 1})).splits == 256);  // LeNet-5 at batch 256
  // Where it does not apply: K = 17, C·R·S = 257, one output row too wide for 48 KiB.
  CHECK_FALSE(conv_wgrad_v04::candidate_applies(0, shape({1, 3, 9, 9, 17, 3, 3, 1, 1, 1})));
  CHECK_FALSE(conv_wgrad_v04::candidate_applies(0, shape({1, 257, 4, 4, 4, 1, 1, 1, 0, 1})));
  CHECK_FALSE(conv_wgrad_v04::candidate_applies(0, shape({1, 1, 3, 700, 16, 1, 1, 1, 0, 1})));
  CHECK(conv_wgrad_v04::candidate_applies(conv_wgrad_v04::kDirectTiles, shape({1, 3, 9, 9, 17, 3, 3, 1, 1, 1})));
  // The table: the direct kernel where it applies, wgrad v3's table after it elsewhere.
  CHECK(conv_wgrad_v04::table_choice(shape({64, 1, 28, 28, 6, 5, 5, 1, 2, 1})) == 0);
  CHECK(conv_wgrad_v04::table_choice(shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1})) ==
        conv_wgrad_v04::kDirectTiles + conv_wgrad_v03::table_choice(shape({64, 64, 56, 56, 64, 3, 3, 1, 1, 1})));
}

TEST_CASE("conv wgrad autotune: the splits fill the GPU, keep 4 steps a slice and leave none empty") {
  // {N, C, H, W, K, R, S, stride, pad, dilation}
  const ConvShape conv1 = shape({256, 1, 28, 28, 6, 5, 5, 1, 2, 1});  // LeNet-5's conv1 at batch 256
  const conv_wgrad_v03::Split s6 = conv_wgrad_v03::split_of(6, conv1);  // 32x8x32: one tile
  CHECK(s6.slice == 768);    // 200,704 pixels / 264 blocks, rounded up to whole steps of 32
  CHECK(s6.splits == 262);   // so 262 slices, the last one shorter
  const conv_wgrad_v03::Split tiny = conv_wgrad_v03::split_of(6, shape({1, 1, 5, 5, 1, 3, 3, 1, 1, 1}));
  CHECK(tiny.splits == 1);  // 25 pixels: under one slice of 4 steps
  for (int i = 0; i < conv_wgrad_v03::kCandidates; ++i) {
    const ConvShape g = shape({3, 5, 17, 19, 7, 3, 3, 1, 1, 1});  // 969 pixels
    const conv_wgrad_v03::Split s = conv_wgrad_v03::split_of(i, g);
    const int bk = conv_wgrad_v03::with_candidate(i, []<class T>() { return T::BK; });
    INFO(conv_wgrad_v03::candidate_name(i));
    CHECK(s.slice % bk == 0);
    CHECK(s.slice >= 4 * bk);
    CHECK((s.splits - 1) * s.slice < 969);  // the last slice holds pixels
    CHECK(s.splits * s.slice >= 969);       // and every pixel is in one
  }
}

TEST_CASE("conv wgrad autotune: the tuning table takes the largest tile that wastes few outputs") {
  const auto choice = [](const int (&s)[10]) { return conv_wgrad_v03::table_choice(shape(s)); };
  // LeNet-5's conv1, dW^T 25 x 6: 32x8 pads it to 256 outputs, every other tile to 512 or more.
  CHECK(choice({64, 1, 28, 28, 6, 5, 5, 1, 2, 1}) == 6);
  // conv2, 150 x 16: 32x16 pads to 2,560; 64x16 to 3,072 (within 25%) is the larger tile.
  CHECK(choice({64, 6, 14, 14, 16, 5, 5, 1, 0, 1}) == 3);
  // 288 x 64 (lesson 05's trace): 32-row tiles fit exactly; 64x64 pads 11%, 128x64 33%.
  CHECK(choice({2, 32, 14, 14, 64, 3, 3, 1, 1, 1}) == 1);
  // 2304 x 256: every tile exact, the largest.
  CHECK(choice({64, 256, 14, 14, 256, 3, 3, 1, 1, 1}) == 0);
}

TEST_CASE("conv wgrad autotune: sum_splits adds every split once, at every group count") {
  // Small integers: every sum is exact in fp32, whatever the order.
  for (const int splits : {1, 7, 16, 33, 64, 130})
    for (const int elements : {1, 31, 150, 1000}) {
      std::vector<float> part(size_t(splits) * elements);
      for (size_t e = 0; e < part.size(); ++e) part[e] = float(int(e * 7 % 13) - 6);
      std::vector<double> want(size_t(elements), 0.0), bound(size_t(elements), 0.0);
      for (int z = 0; z < splits; ++z)
        for (int i = 0; i < elements; ++i) want[size_t(i)] += part[size_t(z) * elements + i];
      DeviceBuffer<float> d_part(part);
      const warpnet::SumSplitsLaunch sum = warpnet::sum_splits_launch(elements, splits);
      candidate_check::check(
          warpnet::cat("sum_splits of ", splits, " splits (", sum.block.y, " groups) x ", elements, " elements"),
          [&](float* out) {
            warpnet::simt::launch(warpnet::sum_splits<warpnet::kSumThreads>, sum.grid, sum.block, 0, elements,
                                  splits, static_cast<const float*>(d_part.get()), out);
          },
          want, bound);
    }
  CHECK(warpnet::sum_splits_groups(15) == 1);
  CHECK(warpnet::sum_splits_groups(16) == 2);
  CHECK(warpnet::sum_splits_groups(64) == 8);
  CHECK(warpnet::sum_splits_groups(264) == 8);
}
