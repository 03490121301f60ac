#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/dgrad_02_implicit_gemm.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

// The kernel's tile, BM (input pixels) x BN (input channels) per block, BK
// taps (k,r,s) per step, TM x TN outputs per thread.
struct Tile {
  int BM, BN, BK, TM, TN;
  int threads() const { return (BM / TM) * (BN / TN); }
  bool operator==(const Tile&) const = default;
};
// conv v4's tile: 128 input pixels x 64 input channels per block, 8 taps deep; 8x4 per thread.
constexpr Tile kWide{128, 64, 8, 8, 4};
// Few input channels (LeNet-5's conv2 has C = 6): 8 columns, so few are
// wasted; a quarter of the pixels per block, so four times the blocks; 32
// taps per step, so a quarter of the steps, each with a barrier pair; one
// output per thread. Measured on an H200 at that layer against 64x16x16 2x2
// (the kernel file's header): 51.5 against 76.0 us, the wide tile 148.8 us.
// Only for C <= 8: a second column of tiles would gather A twice.
constexpr Tile kNarrow{32, 8, 32, 1, 1};
constexpr int kNarrowMaxC = kNarrow.BN;

// The one place the tile is chosen: .shape, .bytes and .launch all ask here.
const Tile& tile_for(const ConvShape& g) { return g.C <= kNarrowMaxC ? kNarrow : kWide; }

template <Tile T>
void launch_tile(const ConvShape& g, const Launch& l, Buffers b) {
  launch_kernel(conv2d_dgrad_implicit_gemm<T.BM, T.BN, T.BK, T.TM, T.TN>, l.grid, l.block, l.dynamic_shared, g,
                static_cast<const float*>(b[0]), static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
}

const Registration dgrad_implicit_gemm{Kernel{
    .op = "conv2d_dgrad",
    .version = 2,
    .name = "dgrad_implicit_gemm",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*H*W/128), ceil(C/64)): a 128 (input pixels) x 64 (input channels) tile "
                  "of dX = gather(dy) @ w, 8 taps (k,r,s) per step gathered from dy into shared memory, 8x4 outputs "
                  "per thread; for C <= 8 grid (ceil(N*H*W/32), ceil(C/8)): a 32 x 8 tile, 32 taps per step, one output "
                  "per thread",
    .shape = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const Tile& t = tile_for(g);
      return Launch{dim3(ceil_div(g.N * g.H * g.W, t.BM), ceil_div(g.C, t.BN)), dim3(t.threads()), 0};
    },
    // The forward's FLOPs: the same products, summed the other way (the
    // zeros a strided dgrad multiplies are not counted).
    .flops = flops,
    // The tiled GEMM's bytes at the tile chosen.
    .bytes = [](const Sizes& s) {
      const Tile& t = tile_for(shape_of(s));
      return dgrad_gemm_tile_bytes(s, t.BM, t.BN);
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const ConvShape g = shape_of(s);
      if (tile_for(g) == kNarrow)
        launch_tile<kNarrow>(g, l, b);
      else
        launch_tile<kWide>(g, l, b);
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
