// What the conv2d registrations share: reading the sizes {N, C, H, W, K, R, S,
// stride, pad, dilation} into the kernels' ConvShape, the buffers {x, w, y},
// the FLOP formula (the workspace some versions need: ../workspace.hpp).
// An anonymous namespace although this is a header: it is private to the
// registration files, each compiled as three copies (plain, traced, nvcc;
// see ../copy.hpp) whose helpers must not be merged by the linker.
#pragma once
#include <cstdint>

#include "device/kernels/conv/winograd_bound.hpp"  // WinogradTile
#include "device/kernels/copy.hpp"
#include "device/kernels/workspace.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

// ConvShape in the same anonymous namespace the kernel files are included
// into (their own #include of it is then skipped), so the helpers below and
// the kernels name one type.
namespace {
#include "kernels/conv/conv_shape.hpp"
}  // namespace

namespace warpnet::device::conv {
namespace {

// Sizes {N, C, H, W, K, R, S, stride, pad, dilation} as the kernels see them.
inline ConvShape shape_of(const Sizes& s) {
  return conv_shape(int(s[0]), int(s[1]), int(s[2]), int(s[3]), int(s[4]), int(s[5]), int(s[6]), int(s[7]),
                    int(s[8]), int(s[9]));
}

// Output elements N·K·P·Q, each a sum of C·R·S products (padding taps counted:
// the work a dense GEMM would do, as cuDNN's FLOP counts assume).
inline double outputs(const ConvShape& g) { return double(g.N) * g.K * g.P * g.Q; }
inline double flops(const Sizes& s) { return 2.0 * outputs(shape_of(s)) * shape_of(s).crs(); }

// The implicit-GEMM versions (04, 05, 06) tile the GEMM view (N·P·Q) x K x
// (C·R·S) in BM (pixels) x BN (channels) blocks of `threads` threads.
template <int BM, int BN>
Launch gemm_tiles(const Sizes& s, int threads) {
  const ConvShape g = shape_of(s);
  return Launch{dim3(ceil_div(g.gemm_m(), BM), ceil_div(g.K, BN)), dim3(threads), 0};
}
// Their global bytes, matmul's tiled_bytes for M = N·P·Q, N' = K, K' = C·R·S:
// the virtual A is read once per column of tiles (an upper bound: padding taps
// are not read; the R·S/stride² overlapping reads of one x pixel come from
// cache), w once per row of tiles, each `input_bytes` per element; y written
// once in fp32.
template <int BM, int BN>
double gemm_tile_bytes(const Sizes& s, double input_bytes) {
  const ConvShape g = shape_of(s);
  const double M = g.gemm_m(), N = g.K, K = g.crs();
  return input_bytes * (M * K * ceil_div(g.K, BN) + K * N * ceil_div(g.gemm_m(), BM)) + 4.0 * M * N;
}

// The data gradient's tiled GEMM bytes (conv2d_dgrad/02-05) at a tile of
// `pixels` input pixels x `channels` input channels, for M = N·H·W, N' = C,
// K' = K·R·S: the virtual A (gathered from dy) read once per column of tiles
// (an upper bound: at stride > 1 most of its taps hit no output and are not
// read), w once per row of tiles, dx written once; fp32 throughout.
inline double dgrad_gemm_tile_bytes(const Sizes& s, int pixels, int channels) {
  const ConvShape g = shape_of(s);
  const double M = double(g.N) * g.H * g.W, N = g.C, K = double(g.K) * g.R * g.S;
  return 4.0 * (M * K * ceil_div(g.C, channels) + K * N * ceil_div(g.N * g.H * g.W, pixels) + M * N);
}

// The weight gradient's (conv2d_wgrad/02-03) at a tile of `taps` (c,r,s) x
// `channels` output channels with the N·P·Q sum cut in `splits` slices:
// dy (K x N·P·Q) read once per column of tiles along C·R·S, the virtual x
// matrix once per row of tiles along K (an upper bound: padding taps are not
// read), every slice's partial tile written once; with splits > 1 the
// partials read back and dw written.
inline double wgrad_gemm_tile_bytes(const Sizes& s, int taps, int channels, int splits) {
  const ConvShape g = shape_of(s);
  const double crs = g.crs(), k = g.K, depth = double(g.N) * g.P * g.Q;
  const double gemm = k * depth * ceil_div(g.crs(), taps) + crs * depth * ceil_div(g.K, channels) + splits * crs * k;
  return 4.0 * (gemm + (splits > 1 ? (splits + 1) * crs * k : 0.0));
}

// The tap tables' preconditions where a kernel has no table-free twin (v9's
// and dgrad v5's pipelined tiles, wgrad v3's tiles; conv v7 and dgrad v3 run
// v4's and dgrad v2's kernels instead): `fits` is conv_taps::table_fits,
// which the kernel files bring (kernels/conv/tap_table.hpp), and `most` its
// limit; for wgrad v3's tiles, which unpack the table past it, its
// wide_table_fits and kMostWide.
inline void require_tap_table(const char* id, bool fits, int64_t most = UINT16_MAX) {
  WN_CHECK(fits, id, ": H + pad and W + pad must be at most ", most, ", and the filter's span below it");
}

// Every conv2d kernel's buffers: x, w in, y out.
inline const float* x_of(Buffers b) { return static_cast<const float*>(b[0]); }
inline const float* w_of(Buffers b) { return static_cast<const float*>(b[1]); }
inline float* y_of(Buffers b) { return static_cast<float*>(b[2]); }

// The three passes of a convolution, each a registered op.
enum class ConvPass { forward, dgrad, wgrad };
inline const char* op_name(ConvPass pass) {
  switch (pass) {
    case ConvPass::forward: return "conv2d";
    case ConvPass::dgrad: return "conv2d_dgrad";
    case ConvPass::wgrad: break;
  }
  return "conv2d_wgrad";
}

// An autotuned version's candidates (conv2d/07-11, conv2d_dgrad/03-07,
// conv2d_wgrad/03-04): several kernels or tiles for one pass, of which a
// tuner on a GPU times those that apply and keeps the fastest per sizes,
// and a table chooses without one. autotuned.hpp registers them.
struct AutotunedConv {
  const char* id;  // the version, "conv2d/07_autotuned"
  ConvPass pass;
  int count;                                   // candidates 0 .. count-1
  const char* (*name)(int candidate);          // "128x64", for the tuner's line
  int (*table_choice)(const ConvShape&);       // the choice without a measurement
  Launch (*shape)(int candidate, const Sizes&);
  double (*bytes)(int candidate, const Sizes&);
  // Launches the candidate; the caller checks the launch's error.
  void (*launch)(int candidate, const Sizes&, const Launch&, Buffers);
  bool (*applies)(int candidate, const ConvShape&) = nullptr;  // null: all of them, at any sizes
  // Whether candidate i is Winograd, F(2x2, 3x3) or F(4x4, 3x3), whose
  // checks take the bound of its own arithmetic (winograd_bound.hpp) instead
  // of the op's; null: none is.
  WinogradTile (*winograd)(int candidate) = nullptr;
};

}  // namespace
}  // namespace warpnet::device::conv
