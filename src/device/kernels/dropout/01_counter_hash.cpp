#include "device/kernels/copy.hpp"
#include "device/kernels/grid_stride.hpp"
#include "device/ops/dropout_sizes.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace {
#include "kernels/dropout/01_counter_hash.cu"
}  // namespace

namespace warpnet::device {
namespace {


// Buffers {x, seed, y, mask}.
const Registration dropout{Kernel{
    .op = "dropout",
    .version = 1,
    .name = "counter_hash",
    .precision = "fp32",
    .shape_text = "block (256), grid (min(ceil(n/256), 1056)): grid-stride loop, one element per thread per "
                  "iteration, its keep decided by hashing (seed, i)",
    .shape = [](const Sizes& s) {
      check_dropout_sizes(s);
      return capped_grid(dropout_n(s));
    },
    // The multiply x·mask (the hash's ~10 integer operations are not FLOPs).
    .flops = [](const Sizes& s) { return double(dropout_n(s)); },
    // x read, y and mask written, 4 bytes each.
    .bytes = [](const Sizes& s) { return 12.0 * double(dropout_n(s)); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      check_dropout_sizes(s);
      const double p = dropout_p(s);
      // The CPU's threshold and scale, from the same p (src/cpu/dropout.cpp).
      const uint32_t threshold = dropout_threshold(p);
      const float keep_scale = static_cast<float>(1.0 / (1.0 - p));
      launch_kernel(dropout_counter_hash<kGridStrideBlock>, l.grid, l.block, l.dynamic_shared, int(dropout_n(s)),
                    static_cast<const uint32_t*>(b[1]), threshold, keep_scale, static_cast<const float*>(b[0]),
                    static_cast<float*>(b[2]), static_cast<float*>(b[3]));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device
