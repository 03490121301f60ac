#include <algorithm>

#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/wgrad_02_implicit_gemm.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

// 64 (k) x 64 (crs) per block, 32 pixels per step; 4x4 per thread.
constexpr int BM = 64, BN = 64, BK = 32, TM = 4, TN = 4;
// Splits: enough blocks to fill the GPU (two per SM of an H200, 132 SMs),
// never a slice shorter than 4 steps (128 pixels), which would make the
// partial tiles' traffic rival the slice's own loads.
constexpr int kTargetBlocks = 264, kMinSteps = 4;

struct Split {
  int splits, slice;  // slice: pixels per split, a multiple of BK
};
// Depends on the sizes alone, so a given problem is always summed the same way.
Split split_of(const ConvShape& g) {
  const int L = std::max(1, g.N * g.P * g.Q);
  const int tiles = ceil_div(g.K, BM) * ceil_div(g.crs(), BN);
  const int want = std::min(ceil_div(kTargetBlocks, tiles), ceil_div(L, kMinSteps * BK));
  const int slice = ceil_div(ceil_div(L, std::max(1, want)), BK) * BK;
  return Split{ceil_div(L, slice), slice};  // no empty slices
}

const Registration wgrad_implicit_gemm{Kernel{
    .op = "conv2d_wgrad",
    .version = 2,
    .name = "wgrad_implicit_gemm",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(C*R*S/64), ceil(K/64), splits): a 64 (k) x 64 (c,r,s) tile of dW = dy @ "
                  "gather(x) per block over one slice of the N*P*Q pixels, 32 per step, 4x4 outputs per thread, "
                  "into a partial tile; splits = about 264 blocks / tiles (slices of at least 128 pixels); then, "
                  "when splits > 1, sum_splits: block (256/G, G), grid (ceil(K*C*R*S*G/256)), G = 1 .. 8 groups of "
                  "splits: the partials added in a fixed order",
    // The GEMM's launch; the ordered sum's is derived in .launch.
    .shape = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return Launch{dim3(ceil_div(g.crs(), BN), ceil_div(g.K, BM), split_of(g).splits), dim3((BM / TM) * (BN / TN)),
                    0};
    },
    // The forward's FLOPs: the same products, summed the other way (the
    // ordered sum's splits·K·C·R·S additions are not counted).
    .flops = flops,
    // The tiled GEMM's bytes: C·R·S cut by BN, K by BM.
    .bytes = [](const Sizes& s) { return wgrad_gemm_tile_bytes(s, BN, BM, split_of(shape_of(s)).splits); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const ConvShape g = shape_of(s);
      const Split split = split_of(g);
      const auto* x = static_cast<const float*>(b[0]);
      const auto* dy = static_cast<const float*>(b[1]);
      auto* dw = static_cast<float*>(b[2]);
      if (split.splits == 1) {  // one slice: the GEMM writes dw itself
        launch_kernel(conv2d_wgrad_implicit_gemm<BM, BN, BK, TM, TN>, l.grid, l.block, l.dynamic_shared, g,
                      split.slice, x, dy, dw);
        check_launch();
        return;
      }
      const int elements = g.K * g.crs();
      Workspace part(size_t(split.splits) * elements * sizeof(float));  // (splits, K, C·R·S)
      launch_kernel(conv2d_wgrad_implicit_gemm<BM, BN, BK, TM, TN>, l.grid, l.block, l.dynamic_shared, g,
                    split.slice, x, dy, part.floats());
      check_launch();
      // Same stream: runs after every partial tile is written.
      const warpnet::SumSplitsLaunch sum = warpnet::sum_splits_launch(elements, split.splits);
      launch_kernel(warpnet::sum_splits<warpnet::kSumThreads>, sum.grid, sum.block, 0, elements, split.splits,
                    static_cast<const float*>(part.floats()), dw);
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
