#include <algorithm>

#include "device/kernels/conv/autotuned.hpp"

namespace {
#include "kernels/conv/10_winograd.cu"  // includes 09_implicit_gemm_pipelined.cu, 08 and 07
}  // namespace
#include "device/kernels/conv/pipelined_tiles.hpp"

namespace warpnet::device::conv {
namespace {

constexpr const char* kId = "conv2d/10_winograd";
using conv_v10::kWinograd;

// A Winograd candidate's launch as the registry lists it: its GEMMs' (the
// transforms' grids follow from the sizes in launch_candidate).
Launch launch_shape(int candidate, const Sizes& s) {
  if (candidate >= kWinograd) return v09_shape(candidate - kWinograd, s);
  const ConvShape g = shape_of(s);
  return conv_v10::with_gemm_tile(candidate, [&]<class T>() {
    return Launch{dim3(ceil_div(conv_v10::tiles_of(g).pitch, T::BN), ceil_div(g.K, T::BM)), dim3(T::threads), 0};
  });
}

// Candidate i launched; the caller checks the launches' errors.
void launch_candidate(int candidate, const Sizes& s, const Launch& l, Buffers b) {
  if (candidate >= kWinograd) return launch_v09(kId, candidate - kWinograd, s, l, b);
  const ConvShape g = shape_of(s);
  WN_CHECK(conv_v10::applies(g), kId, ": Winograd F(2x2,3x3) takes 3x3 filters at stride 1 and dilation 1, got ",
           describe_sizes(op("conv2d"), s));
  // The kernels index a (K or C, pitch) plane with ints.
  const double T = conv_v10::tiles_of(g).pitch;
  WN_CHECK(T * std::max(g.K, g.C) < 2147483648.0, kId, ": ", conv_v10::tiles_of(g).count,
           " output tiles of 2x2 times max(K, C) = ", std::max(g.K, g.C),
           " passes 2^31 elements per transformed plane; use a smaller batch");
  Workspace workspace(conv_v10::workspace_floats(g) * sizeof(float));
  conv_v10::launch_winograd(candidate, g, x_of(b), w_of(b), y_of(b), workspace.floats());
}

// Winograd, with T tiles and V, M `pitch` columns wide: the filter
// transform reads w and writes U (16·K·C); the input transform reads 16
// floats of x per tile and channel (an upper bound: the neighbours' overlap
// comes from cache) and writes V (16·C·pitch); each of the 16 GEMMs reads
// U[ξ] once per column of tiles and V[ξ] once per row of them and writes
// M[ξ]; the output transform reads 16 floats of M per tile and channel and
// writes y.
double bytes_of(int candidate, const Sizes& s) {
  if (candidate >= kWinograd) return v09_bytes(candidate - kWinograd, s);
  const ConvShape g = shape_of(s);
  const conv_v10::Tiles tiles = conv_v10::tiles_of(g);
  const double T = tiles.count, pitch = tiles.pitch, K = g.K, C = g.C, xi = conv_v10::kXi;
  return conv_v10::with_gemm_tile(candidate, [&]<class Tile>() {
    const double gemms =
        xi * (K * C * ceil_div(tiles.pitch, Tile::BN) + C * pitch * ceil_div(g.K, Tile::BM) + K * pitch);
    const double transforms = K * C * 9 + xi * K * C + xi * C * (T + pitch) + xi * K * T + double(g.N) * K * g.P * g.Q;
    return 4.0 * (transforms + gemms);
  });
}

// The two Winograd candidates where they apply, then v9's: its pipelined
// tiles, v8's direct kernel where it applies and v7's 7 GEMM tiles
// (pipelined_tiles.hpp, few_channels_tiles.hpp, conv_tiles.hpp).
constexpr AutotunedConv kAutotuned{
    .id = kId,
    .pass = ConvPass::forward,
    .count = conv_v10::kCandidates,
    .name = conv_v10::candidate_name,
    .table_choice = conv_v10::table_choice,
    .shape = launch_shape,
    .bytes = bytes_of,
    .launch = launch_candidate,
    .applies = conv_v10::candidate_applies,
};

const Registration winograd{autotuned_kernel<kAutotuned>({
    .version = 10,
    .name = "winograd",
    .shape_text = "3x3 filters at stride 1: Winograd F(2x2,3x3): U = G w G^T, block (256), grid (ceil(K*C/256)); "
                  "V = B^T d B, grid (ceil(C*T/256)), T = N*ceil(P/2)*ceil(Q/2); 16 GEMMs M = U @ V, matmul v9's "
                  "128x128 (256 threads) or 64x128 (128), grid (ceil(T/BN), ceil(K/BM)); y = A^T M A, grid "
                  "(ceil(K*T/256)); v9's candidates after them; the choice measured by Kernel::tune on a GPU, "
                  "else Winograd where it applies with C, K >= 16, v9's table elsewhere",
})};

}  // namespace
}  // namespace warpnet::device::conv
