#include <algorithm>

#include "device/kernels/reduce/bias_backward_registration.hpp"
#include "device/kernels/workspace.hpp"

namespace {
#include "kernels/reduce/bias_backward_03_split.cu"
}  // namespace

namespace warpnet::device::reduce_kernels {
namespace {

constexpr int BLOCK = 256;
constexpr int kColumns = 32, kRowsPerStep = BLOCK / kColumns;  // S = 1: a block is 32 columns x 8 warps
// Splits: enough blocks to fill the GPU (two per SM of an H200, 132 SMs),
// never a slice under 2048 terms: a split costs a block reduction (two
// shuffle trees, a barrier), a partial written and read back, and the second
// launch; 2048 terms are 8 loads per thread of a 256-thread block, enough
// loads in flight per thread for the sweep, not the fixed costs, to be most
// of the block's time. S = 1 slices whole rows of the 32-column tile: at
// least 64 rows (2048 terms for a full tile).
// LeNet-5 at batch 64: conv1 {64, 6, 784} 22 splits of 2304 terms (132
// blocks), conv2 {64, 16, 100} 3 splits (48 blocks), fc1-3 (64 rows) one.
constexpr int kTargetBlocks = 264, kMinSliceTerms = 2048;

struct Split {
  int splits, slice;  // slice: terms (S > 1) or rows (S = 1) per split
};
// `units` terms (or rows) per channel (or column tile), `tiles` blocks per
// split, slices rounded up to `granule`. Depends on the sizes alone, so a
// given problem is always summed the same way.
Split split_units(int64_t units, int64_t tiles, int min_slice, int granule) {
  const int64_t u = std::max<int64_t>(1, units);
  const int64_t want =
      std::max<int64_t>(1, std::min(ceil_div(kTargetBlocks, std::max<int64_t>(1, tiles)), u / min_slice));
  const int64_t rounded = ceil_div(ceil_div(u, want), granule) * granule;  // a slice
  return Split{int(ceil_div(u, rounded)), int(rounded)};                    // no empty slices
}
bool columns(const Sizes& s) { return bias_S(s) == 1; }
Split split_of(const Sizes& s) {
  // The kernels index a channel's terms (rows) with an int and step past the
  // end by up to BLOCK: keep every index below 2^30.
  const int64_t units = columns(s) ? s[0] : s[0] * s[2];
  WN_CHECK(units < (int64_t(1) << 30), "bias_add_backward/03: a channel of ", units,
           columns(s) ? " rows" : " terms (N*S)", "; this version takes fewer than 2^30 (v2 takes any)");
  if (columns(s)) return split_units(s[0], ceil_div(bias_C(s), kColumns), kMinSliceTerms / kColumns, kRowsPerStep);
  return split_units(units, bias_C(s), kMinSliceTerms, BLOCK);  // slices start at multiples of 256 terms
}

constexpr const char* kShapeText =
    "block (256), grid (C, splits): a slice of a channel's N*S terms per block, coalesced along S, warp-shuffle "
    "block reduction into a partial; S = 1: grid (ceil(C/32), splits), 32 columns x 8 warps along a slice of rows; "
    "splits = about 264 blocks / C (slices of at least 2048 terms); then, when splits > 1, sum_splits: block "
    "(256/G, G), grid (ceil(C*G/256)), G = 1 .. 8 groups of splits: the partials added in a fixed order";

// The sweep's launch; the ordered sum's is derived in launch_split.
Launch sweep_shape(const Sizes& s) {
  const int splits = split_of(s).splits;
  if (columns(s)) return Launch{dim3(ceil_div(bias_C(s), kColumns), splits), dim3(BLOCK), 0};
  return Launch{dim3(bias_C(s), splits), dim3(BLOCK), 0};
}

// dY read once, db written once; with splits > 1 every partial also written
// and read back (2·splits·C floats).
double split_bytes(const Sizes& s) {
  const int splits = split_of(s).splits;
  return bias_backward_bytes(s) + (splits > 1 ? 8.0 * splits * bias_C(s) : 0.0);
}

// The sweep (with MASK: y read and dZ written too) and, with several
// splits, the ordered sum of the partials into db.
template <bool MASK>
void launch_split(const Sizes& s, const Launch& l, const float* dY, const float* y, float* dZ, float* db) {
  const Split split = split_of(s);
  const int N = bias_N(s), C = bias_C(s), S = bias_S(s);
  auto sweep = columns(s) ? bias_backward_split_columns<BLOCK, MASK> : bias_backward_split_planes<BLOCK, MASK>;
  if (split.splits == 1) {  // one slice: the sweep writes db itself
    launch_kernel(sweep, l.grid, l.block, l.dynamic_shared, N, C, S, split.slice, dY, y, dZ, db);
    check_launch();
    return;
  }
  Workspace part(size_t(split.splits) * C * sizeof(float));  // (splits, C)
  launch_kernel(sweep, l.grid, l.block, l.dynamic_shared, N, C, S, split.slice, dY, y, dZ, part.floats());
  check_launch();
  // Same stream: runs after every partial is written.
  const warpnet::SumSplitsLaunch sum = warpnet::sum_splits_launch(C, split.splits);
  launch_kernel(warpnet::sum_splits<warpnet::kSumThreads>, sum.grid, sum.block, 0, C, split.splits,
                static_cast<const float*>(part.floats()), db);
  check_launch();
}

const Registration bias_backward_split_registration{Kernel{
    .op = "bias_add_backward",
    .version = 3,
    .name = "bias_backward_split",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = sweep_shape,
    .flops = bias_backward_flops,
    .bytes = split_bytes,
    // Buffers {dY, db}.
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_split<false>(s, l, static_cast<const float*>(b[0]), nullptr, nullptr, static_cast<float*>(b[1]));
    },
    .copy = kThisCopy,
}};

// bias_relu_backward: buffers {y, dY, dZ, db}; the same sweep with the mask.
const Registration bias_relu_backward_split_registration{Kernel{
    .op = "bias_relu_backward",
    .version = 3,
    .name = "bias_backward_split",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = sweep_shape,
    // A compare and an add per element.
    .flops = [](const Sizes& s) { return 2.0 * bias_elements(s); },
    // y read and dZ written besides dY and db.
    .bytes = [](const Sizes& s) { return split_bytes(s) + 8.0 * bias_elements(s); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_split<true>(s, l, static_cast<const float*>(b[1]), static_cast<const float*>(b[0]),
                         static_cast<float*>(b[2]), static_cast<float*>(b[3]));
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::reduce_kernels
