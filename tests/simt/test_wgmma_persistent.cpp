// matmul/16 (persistent wgmma, 128x256 tiles) where the registry's test sizes
// do not reach: a block that walks several tiles. Its grid is min(tiles,
// SMs), the emulator's SMs are its worker threads, and no registry size has
// more than two 128x256 tiles, so there every block gets one tile. Here the
// launch is given fewer blocks than tiles, through the registration's own
// launch (which takes the block count from the grid), so the mbarrier ring
// and its phases run on from tile to tile and each block's accumulators are
// reused; the result is checked against the op's CPU reference. Also: the
// tile walk visits every tile once, and the registered grid is min(tiles, SMs).
// Stream-K (kernels/common/stream_k.hpp): with as many workers as blocks, the
// tiles of a last partial round are shared by k-steps; its plan is checked
// on its own, at the sizes here and at an H200's.
// matmul/18 (v16's pipeline with fp8 e4m3) walks the same tiles and is
// checked the same way, as are the other consumers of v16's ring: matmul
// 19 to 22 and conv2d_nhwc 13 to 16.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "device/registry.hpp"
#include "device/run.hpp"
#include "kernels/common/all.hpp"  // before the kernel file (see there)
#include "simt/launch.hpp"

// The kernel's tile walk (wgmma_v16::tile_at) and tile count, in a named
// namespace: the registration includes the same kernel file (see
// test_wgmma_layout.cpp for why not an anonymous one).
namespace wgmma_persistent_test {
#include "kernels/matmul/16_wgmma_persistent.cu"
#include "kernels/conv/15_implicit_gemm_cluster.cu"    // conv v13's, v14's and v15's tile counts (it includes v14)
#include "kernels/conv/16_implicit_gemm_fp32_tma.cu"  // and v16's
}  // namespace wgmma_persistent_test
using namespace wgmma_persistent_test;

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 16;

// conv2d_nhwc's sizes {N, C, H, W, K, R, S, stride, pad, dilation} as the conv kernels see them.
ConvShape shape_of(const device::Sizes& s) {
  return conv_shape(int(s[0]), int(s[1]), int(s[2]), int(s[3]), int(s[4]), int(s[5]), int(s[6]), int(s[7]),
                    int(s[8]), int(s[9]));
}

// Runs a persistent version at `sizes` with `blocks` blocks (the launch
// takes the block count from the grid) and returns its outputs. `threads`,
// where not 0, is the block's: conv2d_nhwc/14 runs its kernel of 2 consumer
// warpgroups at 384, of 3 at 512.
std::vector<Tensor> run_with_blocks(const device::Kernel& kernel, const device::Sizes& sizes,
                                    const std::vector<Tensor>& inputs, unsigned blocks, unsigned threads = 0) {
  device::Launch launch = kernel.shape(sizes);
  launch.grid = dim3(blocks);
  if (threads) launch.block = dim3(threads);
  return device::run_emulated(kernel, sizes, inputs, launch);
}

// Runs `kernel` with `blocks` blocks (of `threads`, where not 0) at `sizes`
// and checks every output element against the op's reference.
void check_blocks_match(const device::Kernel& kernel, const device::Sizes& sizes, unsigned blocks,
                        unsigned threads = 0) {
  Rng rng(kSeed);
  const auto inputs = device::make_inputs(kernel, sizes, rng);
  std::vector<Tensor> got;
  REQUIRE_NOTHROW(got = run_with_blocks(kernel, sizes, inputs, blocks, threads));
  const device::Comparison c = device::compare(kernel, sizes, inputs, got);
  if (c.mismatches)
    std::printf("%lld of %lld wrong\n%s", (long long)c.mismatches, (long long)c.checked, c.first.c_str());
  CHECK(c.mismatches == 0);
  CHECK(c.checked == device::total_elements(device::op(kernel.op).output_shapes(sizes)));
}

// Checks a persistent version (16, 18, 19, 20, 21, 22) with `blocks` blocks at `sizes` against the op's reference.
void check_with_blocks(const device::Kernel& kernel, const device::Sizes& sizes, unsigned blocks) {
  INFO(device::describe_sizes(device::op("matmul"), sizes), ", ", blocks, " blocks for ",
       wgmma_v16::tile_count(int(sizes[0]), int(sizes[1])), " tiles, seed ", kSeed);
  REQUIRE(int(blocks) < wgmma_v16::tile_count(int(sizes[0]), int(sizes[1])));  // some block takes several
  // The bf16 and fp32 versions run v12 (or v09) instead where TMA cannot
  // describe an operand, rows of its contiguous dimension not a multiple of
  // 16 bytes (wgmma_v13::describable), which would test nothing here. The
  // fp8 versions pack such operands and run whatever the layout.
  if (kernel.input_format != &simt::kE4M3) {
    const int64_t bytes = kernel.input_format ? 2 : 4, inner_a = sizes[3] ? sizes[0] : sizes[2],
                  inner_b = sizes[4] ? sizes[2] : sizes[1];
    REQUIRE_MESSAGE(inner_a * bytes % 16 == 0, "A's rows are not a multiple of 16 bytes: the fallback would run");
    REQUIRE_MESSAGE(inner_b * bytes % 16 == 0, "B's rows are not a multiple of 16 bytes: the fallback would run");
  }
  check_blocks_match(kernel, sizes, blocks);
}

// Checks a persistent conv2d_nhwc version (13 to 16) with `blocks` blocks
// (of `threads`, where not 0) at `sizes`, where it has `tiles` tiles,
// against the op's reference. The sizes must take the TMA path (C a
// multiple of 8 for bf16, 4 for fp32): the direct kernels that run
// otherwise walk nothing.
void check_conv_with_blocks(const device::Kernel& kernel, const device::Sizes& sizes, unsigned blocks, int tiles,
                            unsigned threads = 0) {
  INFO(kernel.id(), " at ", device::describe_sizes(device::op("conv2d_nhwc"), sizes), ", ", blocks, " blocks",
       threads ? cat(" of ", threads, " threads") : std::string(), " for ", tiles, " tiles, seed ", kSeed);
  REQUIRE(int(blocks) < tiles);  // some block takes several
  const ConvShape g = shape_of(sizes);
  REQUIRE_MESSAGE(conv_v14::describable(g, nullptr, nullptr, kernel.input_format ? 2 : 4),
                  "TMA cannot describe x or w: the direct kernel would run");
  check_blocks_match(kernel, sizes, blocks, threads);
}

}  // namespace

TEST_CASE("matmul/16: blocks that walk several tiles, the ring running on across them") {
  const device::Kernel& v16 = device::find_kernel("matmul/16");
  // 304 x 520: 3 x 3 tiles of 128x256, partial on both far edges. K = 328:
  // 6 k-steps a tile, not a multiple of the 4 stages, so each tile of a
  // block starts at another stage and parity. One block takes all 9 tiles
  // (54 steps: 13.5 times round the ring); four take 3, 2, 2 and 2.
  for (const int trans_a : {0, 1})
    for (const int trans_b : {0, 1})
      for (const unsigned blocks : {1u, 4u}) check_with_blocks(v16, {304, 520, 328, trans_a, trans_b}, blocks);
  // 1100 x 40: 9 tile rows in one column, more than a group of GROUP_M = 8,
  // so the walk goes on into a second, shorter group.
  check_with_blocks(v16, {1100, 40, 24, 0, 0}, 2);
  // The traced copy, under the checker: every tile's epilogue stores in bounds, no race.
  check_with_blocks(device::find_kernel("matmul/16", device::Copy::traced), {304, 520, 328, 1, 0}, 2);
}

TEST_CASE("matmul/18: fp8 blocks that walk several tiles, the ring running on across them") {
  const device::Kernel& v18 = device::find_kernel("matmul/18");
  // v16's 3 x 3 tiles of 128x256. K = 640: 5 k-steps of 128 a tile, not a
  // multiple of the 4 stages, so each tile of a block starts at another
  // stage and parity; A (M,K) and B (N,K) read in place. Then B row-major
  // (packed K-major first), and both stored the other way with K off 16
  // (both packed, pitch 336).
  for (const unsigned blocks : {1u, 4u}) check_with_blocks(v18, {304, 520, 640, 0, 1}, blocks);
  check_with_blocks(v18, {304, 520, 328, 0, 0}, 4);
  check_with_blocks(v18, {304, 520, 330, 1, 1}, 4);
  // 9 tile rows, more than a group of GROUP_M = 8.
  check_with_blocks(v18, {1100, 40, 48, 0, 1}, 2);
  // The traced copy, under the checker: every tile's epilogue stores in bounds, no race.
  check_with_blocks(device::find_kernel("matmul/18", device::Copy::traced), {304, 520, 640, 0, 1}, 2);
}

// v19 (mma.sync) and v20 (fp32 FFMA) consume v16's ring from their own
// warps; neither has run on a GPU yet, and the registry's test sizes give a
// block at most two tiles on a 2-core machine, so the ring's run across many
// tiles is checked here.
TEST_CASE("matmul/19 and 20: other consumers of v16's ring, in blocks that walk several tiles") {
  const device::Kernel& v19 = device::find_kernel("matmul/19");
  const device::Kernel& v20 = device::find_kernel("matmul/20");
  // v16's 3 x 3 tiles. v19, K = 328: 6 k-steps of 64; v20, K = 328: 11
  // k-steps of 32. Neither a multiple of the 4 stages, so each tile of a
  // block starts at another stage and parity; one block takes all 9 tiles.
  for (const int trans_a : {0, 1})
    for (const int trans_b : {0, 1}) {
      check_with_blocks(v19, {304, 520, 328, trans_a, trans_b}, 1);
      check_with_blocks(v20, {304, 520, 328, trans_a, trans_b}, 1);
    }
  check_with_blocks(v19, {304, 520, 200, 0, 1}, 4);
  check_with_blocks(v20, {304, 520, 200, 1, 0}, 4);
  // 9 tile rows, more than a group of GROUP_M = 8.
  check_with_blocks(v19, {1100, 40, 48, 0, 0}, 2);
  check_with_blocks(v20, {1100, 40, 48, 0, 0}, 2);
  // The traced copies, under the checker: in-bounds stores, no race.
  check_with_blocks(device::find_kernel("matmul/19", device::Copy::traced), {304, 520, 328, 1, 0}, 2);
  check_with_blocks(device::find_kernel("matmul/20", device::Copy::traced), {304, 520, 328, 0, 1}, 2);
}

// conv2d_nhwc v13 to v16 walk tiles on v16's ring too, and the registry's
// sizes give a block more than one tile only at 64-wide tiles (one size,
// three 256-pixel tiles for v14 to v16). Here one block (a cluster of two
// for v15) takes every tile, at each of the three tile widths; the tile
// counts (v14's, which v15 and v16 share, then v13's) are computed below.
// Nine taps make 9 k-steps a tile (18 for v16's 32-channel steps at C = 40),
// not a multiple of the 4 stages, so each tile starts at another stage and
// parity. v14 and v15 run their kernels of two consumer warpgroups here
// (384-thread blocks; the test below has their three); v16 the tile height
// its rule takes for the emulator's SMs (test_conv_fp32_tma_tiles.cpp checks both).
TEST_CASE("conv2d_nhwc/13 to 16: blocks that walk several tiles at each tile width, the ring running on across them") {
  const std::vector<device::Sizes> layers = {
      {4, 8, 12, 12, 16, 3, 3, 1, 1, 1},      // K <= 64: 576 pixels, 3 tiles of 256 x 64 (v13: 8 of 8x16)
      {3, 40, 19, 19, 100, 3, 3, 2, 1, 1},    // K <= 128, stride 2: 300 pixels, 3 tiles of 128 x 128 (v13: 6)
      {1, 8, 12, 12, 264, 3, 3, 1, 1, 1}};    // K > 128: 144 pixels x 2 channel tiles, 4 of 128 x 256 (v13: 4)
  for (const char* id : {"conv2d_nhwc/13", "conv2d_nhwc/14", "conv2d_nhwc/15", "conv2d_nhwc/16"}) {
    const device::Kernel& kernel = device::find_kernel(id);
    const std::string version(id);
    const bool v13 = version.ends_with("13"), v14 = version.ends_with("14"), v15 = version.ends_with("15"),
               v16 = version.ends_with("16");
    for (const device::Sizes& sizes : layers) {
      const ConvShape g = shape_of(sizes);
      const int tiles = v13   ? conv_v13::pixel_tiles(g).count(g.N)
                        : v16 ? conv_v16::tiles_of(g, conv_v16::rows_per_thread(g, wgmma_v16::sm_count())).count()
                              : conv_v14::tiles_of(g).count();
      check_conv_with_blocks(kernel, sizes, v15 ? 2 : 1, tiles, v14 || v15 ? conv_v14::Config<64, 2>::THREADS : 0);
    }
  }
  // The traced copy of the fp32 version, under the checker: in-bounds stores, no race.
  check_conv_with_blocks(device::find_kernel("conv2d_nhwc/16", device::Copy::traced), layers[2], 2, 4);
}

// conv2d_nhwc/14's tiles of three consumer warpgroups, 192 pixels by 64 or
// 128 channels (512-thread blocks), and the ring's empty barriers counting
// 384 arrivals a phase: at each width, with fewer blocks than tiles. v15's
// the same in clusters of two: one cluster walks every pair (the last
// layer's three pairs each have a second tile past the pixels), its empty
// barriers counting the 12 consumer warps of both CTAs.
TEST_CASE("conv2d_nhwc/14 and 15: three consumer warpgroups on 192-pixel tiles, blocks walking several tiles") {
  const std::vector<device::Sizes> layers = {
      {4, 8, 12, 12, 16, 3, 3, 1, 1, 1},      // K <= 64: 576 pixels, 3 tiles of 192 x 64
      {6, 40, 19, 19, 100, 3, 3, 2, 1, 1},    // K <= 128, stride 2: 600 pixels, 4 tiles of 192 x 128 (the last of 24)
      {1, 8, 12, 12, 264, 3, 3, 1, 1, 1}};    // K > 128: 144 pixels x 3 channel tiles of 128 (the last of 8)
  const device::Kernel& v14 = device::find_kernel("conv2d_nhwc/14");
  constexpr unsigned kThree = conv_v14::Config<64, 3>::THREADS;
  const device::Kernel& v15 = device::find_kernel("conv2d_nhwc/15");
  for (const device::Sizes& sizes : layers) {
    const int tiles = conv_v14::tiles_with(shape_of(sizes), 3).count();
    check_conv_with_blocks(v14, sizes, 2, tiles, kThree);
    check_conv_with_blocks(v15, sizes, 2, tiles, kThree);
  }
  // The traced copy, under the checker: in-bounds stores, no race, no uninitialized shared read.
  check_conv_with_blocks(device::find_kernel("conv2d_nhwc/14", device::Copy::traced), layers[2], 2, 3, kThree);
}

TEST_CASE("conv2d_nhwc/14: three consumer warpgroups where the busiest of an H200's 132 SMs computes fewer outputs") {
  constexpr int kH200 = 132;
  // Issue 5's 3x3 layers, N = 64, C = K.
  const ConvShape at56 = conv_shape(64, 64, 56, 56, 64, 3, 3, 1, 1, 1);
  const ConvShape at28 = conv_shape(64, 128, 28, 28, 128, 3, 3, 1, 1, 1);
  const ConvShape at14 = conv_shape(64, 256, 14, 14, 256, 3, 3, 1, 1, 1);
  // 14x14: 98 tiles of 128 x 256 (one round, 34 SMs idle), or 66 x 2 = 132 of 192 x 128.
  CHECK(conv_v14::tiles_with(at14, 2).count() == 98);
  CHECK(conv_v14::tiles_with(at14, 3).count() == 132);
  CHECK(conv_v14::consumers_for(at14, kH200) == 3);
  // 28x28: 392 tiles of 128 x 128 (3 rounds) or 262 of 192 x 128 (2 rounds): 49,152 outputs either way.
  CHECK(conv_v14::tiles_with(at28, 2).count() == 392);
  CHECK(conv_v14::tiles_with(at28, 3).count() == 262);
  CHECK(conv_v14::consumers_for(at28, kH200) == 2);
  // 56x56: 784 of 256 x 64 (6 rounds) or 1046 of 192 x 64 (8 rounds): 98,304 either way.
  CHECK(conv_v14::tiles_with(at56, 2).count() == 784);
  CHECK(conv_v14::tiles_with(at56, 3).count() == 1046);
  CHECK(conv_v14::consumers_for(at56, kH200) == 2);
  // v15's pairs: at 14x14, 66 pairs of 192 x 128 tiles for 66 clusters, or 49 of 128 x 256 (98 CTAs busy).
  CHECK(conv_v15::pair_count(at14, 2) == 49);
  CHECK(conv_v15::pair_count(at14, 3) == 66);
  CHECK(conv_v15::consumers_for(at14, kH200) == 3);
  CHECK(conv_v15::consumers_for(at28, kH200) == 2);
  CHECK(conv_v15::consumers_for(at56, kH200) == 2);
  // The registration: a block of any other size is an error naming the two.
  const device::Kernel& v14 = device::find_kernel("conv2d_nhwc/14");
  const device::Sizes sizes{1, 8, 12, 12, 264, 3, 3, 1, 1, 1};
  Rng rng(kSeed);
  const auto inputs = device::make_inputs(v14, sizes, rng);
  CHECK_THROWS_WITH(run_with_blocks(v14, sizes, inputs, 1, 256),
                    doctest::Contains("a block of 256 threads; the kernels take 384 (2 consumer warpgroups) "
                                      "or 512 (3)"));
}

TEST_CASE("matmul/21: clusters of two CTAs that walk several tile pairs, sharing each B tile by multicast") {
  const device::Kernel& v21 = device::find_kernel("matmul/21");
  // 304 x 520: 3 tile rows (2 pairs, the second CTA of the last one past M:
  // its A copies read rows 0.. instead, its half of B still loaded for its
  // peer, nothing stored) x
  // 3 tile columns. K = 328: 6 k-steps a pair, so the shared ring's stages
  // and parities shift from pair to pair in both CTAs alike. One cluster
  // takes all 6 pairs; two take 3 each. Every layout: the K-major B tile
  // goes as two 128-row boxes, the MN-major one as four 64-wide boxes, half
  // from each CTA.
  for (const int trans_a : {0, 1})
    for (const int trans_b : {0, 1})
      for (const unsigned blocks : {2u, 4u}) check_with_blocks(v21, {304, 520, 328, trans_a, trans_b}, blocks);
  // 1100 x 40: 9 tile rows, 5 pair rows, more than a group of GROUP_M / 2 = 4.
  check_with_blocks(v21, {1100, 40, 24, 0, 0}, 2);
  // The traced copy, under the checker: every tile's epilogue stores in bounds, no race.
  check_with_blocks(device::find_kernel("matmul/21", device::Copy::traced), {304, 520, 328, 1, 0}, 2);
  // The registered grid: whole clusters, one per two of the emulator's SMs (its workers).
  CHECK(v21.shape({304, 520, 328, 0, 0}).grid.x % 2 == 0);
}

TEST_CASE("matmul/22: fp8 clusters of two CTAs that walk several tile pairs, sharing each B tile by multicast") {
  const device::Kernel& v22 = device::find_kernel("matmul/22");
  // v21's 2 x 3 pairs of 128x256 tiles. K = 640: 5 k-steps of 128 a pair,
  // not a multiple of the 4 stages; A (M,K) and B (N,K) read in place, each
  // CTA's 128 rows of B landing in both. Then B row-major (packed K-major
  // first), and both stored the other way with K off 16 (both packed, pitch 336).
  for (const unsigned blocks : {2u, 4u}) check_with_blocks(v22, {304, 520, 640, 0, 1}, blocks);
  check_with_blocks(v22, {304, 520, 328, 0, 0}, 4);
  check_with_blocks(v22, {304, 520, 330, 1, 1}, 2);
  // 9 tile rows, 5 pair rows: more than a group of GROUP_M / 2 = 4.
  check_with_blocks(v22, {1100, 40, 48, 0, 1}, 2);
  // The traced copy, under the checker: every tile's epilogue stores in bounds, no race.
  check_with_blocks(device::find_kernel("matmul/22", device::Copy::traced), {304, 520, 640, 0, 1}, 2);
}

// Stream-K: with as many worker threads as blocks (the registration shares
// tiles only when every block is resident at once) and a last round that is
// not full, the last tiles are cut by k-steps among the blocks; contributors
// hand partial sums to the owners through the workspace.
TEST_CASE("matmul/16 and 18: stream-K shares the last round's tiles, owners adding the others' partial sums") {
  struct StreamKOn {  // off by default (stream_k_workspace.hpp)
    StreamKOn() { setenv("WARPNET_STREAM_K", "1", 1); }
    ~StreamKOn() { unsetenv("WARPNET_STREAM_K"); }
  } on;
  struct Workers {
    explicit Workers(int n) { simt::set_workers(n); }
    ~Workers() { simt::set_workers(0); }
  };
  const device::Kernel& v16 = device::find_kernel("matmul/16");
  const device::Kernel& v18 = device::find_kernel("matmul/18");
  // 3 x 3 tiles. v16, K = 328: 6 k-steps of 64. With 4 blocks, 8 tiles are
  // walked whole and the 9th's 6 k-steps are cut 1, 2, 1, 2 among 4 blocks;
  // with 7 blocks, 7 whole and 2 x 6 k-steps cut among 7 (1-2 each: owners,
  // contributors, and a block that is both).
  for (const int blocks : {4, 7}) {
    Workers workers(blocks);
    const warpnet::StreamK plan = warpnet::plan_stream_k(9, 6, blocks, true);
    REQUIRE(plan.shared_blocks == blocks);  // every block takes part
    for (const int trans_a : {0, 1})
      for (const int trans_b : {0, 1})
        check_with_blocks(v16, {304, 520, 328, trans_a, trans_b}, unsigned(blocks));
    // v18, K = 640: 5 k-steps of 128.
    REQUIRE(warpnet::plan_stream_k(9, 5, blocks, true).shared_blocks == blocks);
    check_with_blocks(v18, {304, 520, 640, 0, 1}, unsigned(blocks));
    check_with_blocks(v18, {304, 520, 330, 1, 1}, unsigned(blocks));
  }
  // The registered grid (min(tiles, SMs) = 4) takes the same path; then the
  // traced copy, under the checker: the owners read the contributors' sums
  // after their flags, not in a race.
  Workers workers(4);
  REQUIRE(v16.shape({304, 520, 328, 0, 0}).grid.x == 4u);
  check_with_blocks(device::find_kernel("matmul/16", device::Copy::traced), {304, 520, 328, 0, 0}, 4);
  check_with_blocks(device::find_kernel("matmul/18", device::Copy::traced), {304, 520, 640, 0, 1}, 4);
}

// Every k-step of every tile is computed once; a block hands on partial sums
// at most once, for the tile its range starts in; every shared tile has one
// owner, whose gather loop visits exactly the blocks that contributed to it.
TEST_CASE("stream-K: the plan covers every k-step once, and each owner waits for its tile's contributors") {
  for (const auto& [tiles, k_steps, blocks] : std::vector<std::tuple<int, int, int>>{
           {9, 6, 4}, {9, 6, 7}, {2048, 128, 132}, {512, 64, 132}, {133, 128, 132}, {133, 3, 132}, {10, 1, 4},
           {9, 6, 9}, {5, 7, 2}, {1000, 2, 999}}) {
    INFO(tiles, " tiles of ", k_steps, " k-steps, ", blocks, " blocks");
    const warpnet::StreamK plan = warpnet::plan_stream_k(tiles, k_steps, blocks, true);
    CHECK(plan.whole_tiles <= tiles);
    CHECK(plan.shared_blocks <= blocks);
    CHECK((plan.whole_tiles == tiles) == (plan.shared_blocks == 0));
    if (plan.shared_blocks > 0) CHECK(plan.whole_tiles % blocks == 0);  // whole rounds only
    std::vector<int> done(size_t(tiles) * k_steps, 0);
    const size_t tile_count = size_t(tiles);
    std::vector<std::set<int>> contributors(tile_count), gathered(tile_count);
    std::vector<int> owners(size_t(tiles), 0);
    for (int b = 0; b < blocks; ++b) {
      warpnet::BlockWork work(plan, b, blocks);
      int handed_on = 0;
      bool first_shared = true;
      for (warpnet::Work w; work.next(w);) {
        REQUIRE(w.k_begin < w.k_end);
        REQUIRE(w.k_end <= k_steps);
        for (int k = w.k_begin; k < w.k_end; ++k) ++done[size_t(w.tile) * k_steps + k];
        if (w.tile < plan.whole_tiles) {
          CHECK((w.k_begin == 0 && w.k_end == k_steps));
          continue;
        }
        if (w.k_begin > 0) {
          CHECK(first_shared);  // only a range's first piece starts inside a tile
          ++handed_on;
          contributors[size_t(w.tile)].insert(b);
        } else if (w.k_end < k_steps) {
          ++owners[size_t(w.tile)];
          const long long tile_end = (long long)(w.tile - plan.whole_tiles + 1) * k_steps;
          for (int c = b + 1; c < plan.shared_blocks && plan.begin(c) < tile_end; ++c)
            gathered[size_t(w.tile)].insert(c);
        }
        first_shared = false;
      }
      CHECK(handed_on <= 1);
    }
    for (int d : done) CHECK(d == 1);
    for (int t = plan.whole_tiles; t < tiles; ++t) {
      INFO("tile ", t);
      CHECK(owners[size_t(t)] == (contributors[size_t(t)].empty() ? 0 : 1));
      CHECK(gathered[size_t(t)] == contributors[size_t(t)]);
    }
  }
  // Without a workspace, or with whole rounds, nothing is shared.
  CHECK(warpnet::plan_stream_k(2048, 128, 132, false).shared_blocks == 0);
  CHECK(warpnet::plan_stream_k(2112, 128, 132, true).shared_blocks == 0);
  // 8192^3 on an H200: 15 whole rounds, the last 68 tiles' 8704 k-steps cut among all 132 blocks.
  const warpnet::StreamK h200 = warpnet::plan_stream_k(2048, 128, 132, true);
  CHECK(h200.whole_tiles == 1980);
  CHECK(h200.shared_blocks == 132);
  CHECK(h200.shared_steps == 68 * 128);
}

TEST_CASE("matmul/16: the persistent walk visits every tile once") {
  for (const auto& [tiles_m, tiles_n] : {std::pair{1, 1}, {3, 3}, {9, 1}, {64, 32}, {17, 5}, {2, 40}}) {
    INFO(tiles_m, " x ", tiles_n, " tiles");
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < tiles_m * tiles_n; ++t) {
      const wgmma_v16::Tile at = wgmma_v16::tile_at(t, tiles_m, tiles_n);
      CHECK(at.row0 % wgmma_v16::BM == 0);
      CHECK(at.col0 % wgmma_v16::BN == 0);
      CHECK(at.row0 / wgmma_v16::BM < tiles_m);
      CHECK(at.col0 / wgmma_v16::BN < tiles_n);
      CHECK(seen.insert({at.row0, at.col0}).second);
    }
    CHECK(int(seen.size()) == tiles_m * tiles_n);
  }
  // The first 132 tiles of 8192^3 (64 x 32 tiles; an H200's 132 SMs run them
  // together) lie in the first 8 tile rows.
  for (int t = 0; t < 132; ++t) CHECK(wgmma_v16::tile_at(t, 64, 32).row0 < 8 * wgmma_v16::BM);
}

TEST_CASE("matmul/16: the registered grid is one block per SM, at most one per tile") {
  const device::Kernel& v16 = device::find_kernel("matmul/16");
  // The emulator reports its worker threads as multiProcessorCount: three here.
  struct ThreeWorkers {
    ThreeWorkers() { simt::set_workers(3); }
    ~ThreeWorkers() { simt::set_workers(0); }
  } three;
  cudaDeviceProp prop{};
  REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  REQUIRE(prop.multiProcessorCount == 3);
  CHECK(v16.shape({304, 520, 328, 0, 0}).grid.x == 3u);  // 3 x 3 tiles
  CHECK(v16.shape({4096, 4096, 64, 1, 1}).grid.x == 3u);  // 32 x 16
  CHECK(v16.shape({200, 100, 64, 0, 0}).grid.x == 2u);    // 2 x 1
  CHECK(v16.shape({1, 1, 1, 0, 0}).grid.x == 1u);
}
