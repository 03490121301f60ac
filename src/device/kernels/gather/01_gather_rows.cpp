#include "device/kernels/copy.hpp"
#include "device/kernels/grid_stride.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace {
#include "kernels/gather/01_gather_rows.cu"
}  // namespace

namespace warpnet::device {
namespace {

// Sizes {rows, width, table_rows}; buffers {table, indices, out}.
const Registration gather_rows{Kernel{
    .op = "gather_rows",
    .version = 1,
    .name = "gather_rows",
    .precision = "4-byte words (fp32 or int32), copied",
    .shape_text = "block (256), grid (min(ceil(rows*width/256), 1056)): the elementwise ops' capped grid-stride loop "
                  "over the output words, each read from the row its index names",
    .shape = [](const Sizes& s) { return capped_grid(s[0] * s[1]); },
    .flops = [](const Sizes&) { return 0.0; },
    // Per output word, as the instructions ask: its row's index (the W lanes
    // of a row ask for the same 4 bytes; the cache serves all but one), the
    // table word, the stored word.
    .bytes = [](const Sizes& s) { return 12.0 * double(s[0] * s[1]); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_dependent_kernel(gather_rows_grid_stride<kGridStrideBlock>, l.grid, l.block, l.dynamic_shared, int(s[0]), int(s[1]),
                    int(s[2]), static_cast<const uint32_t*>(b[0]), static_cast<const int32_t*>(b[1]),
                    static_cast<uint32_t*>(b[2]));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device
