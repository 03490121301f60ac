// The gather_rows op: out (rows, width) = table[indices[i], :] for table
// (table_rows, width) and int32 indices (rows). Sizes {rows, width,
// table_rows}. A copy: the kernels move 4-byte words, so the same launch
// gathers fp32 images and int32 labels (device::gather_rows). An index
// outside [0, table_rows) gives a row of zeros, which the host never relies
// on: it checks the indices it uploads.
#include <cstring>
#include <vector>

#include "device/registry.hpp"

namespace warpnet::device {
namespace {

// Indices drawn from [-1, table_rows]: repeats, every row reachable, and now
// and then one out of range on either side (a row of zeros).
std::vector<Tensor> inputs(const Sizes& s, Rng& rng) {
  Tensor table = Tensor::empty({s[2], s[1]});
  fill_uniform(table, rng, -1.0, 1.0);
  Tensor indices = Tensor::empty({s[0]}, DType::i32);
  int32_t* idx = indices.data<int32_t>();
  for (int64_t i = 0; i < s[0]; ++i) idx[i] = int32_t(int64_t(rng.below(uint64_t(s[2] + 2))) - 1);
  return {std::move(table), std::move(indices)};
}

Tensor gathered(const Sizes& s, const std::vector<Tensor>& in, DType dtype) {
  const Tensor table = in[0].to(dtype);
  Tensor out = Tensor::zeros({s[0], s[1]}, dtype);
  const int32_t* idx = in[1].data<int32_t>();
  const size_t row_bytes = size_t(s[1]) * size_of(dtype);
  for (int64_t i = 0; i < s[0]; ++i)
    if (idx[i] >= 0 && idx[i] < s[2])
      std::memcpy(static_cast<char*>(out.raw()) + i * row_bytes,
                  static_cast<const char*>(table.raw()) + idx[i] * row_bytes, row_bytes);
  return out;
}

// Every size at least 1 (a row of nothing, or a table without rows to pick
// from), and both tensors within the kernels' int indices.
void check_sizes(const Op& op, const Sizes& s) {
  require_at_least(op, s, {1, 1, 1});
  require_indexable(op, s, Shape{s[0], s[1]}, "the gathered rows");
  require_indexable(op, s, Shape{s[2], s[1]}, "the table");
}

const Registration gather{Op{
    .name = "gather_rows",
    .size_names = {"rows", "width", "table_rows"},
    // One word, rows wider and narrower than a warp or a block (1, 3, 784 —
    // a Fashion-MNIST image), more rows than the table has (repeats), and
    // 1081351 words, past the grid cap, so the grid-stride loop comes round.
    .test_sizes = {{1, 1, 1}, {7, 784, 13}, {33, 1, 40}, {40, 3, 5}, {64, 784, 100}, {1379, 784, 2000}},
    .defaults = {256, 784, 60000},
    .make_inputs = inputs,
    .output_shapes = [](const Sizes& s) { return std::vector<Shape>{Shape{s[0], s[1]}}; },
    .reference = [](const Sizes& s, const std::vector<Tensor>& in) { return std::vector<Tensor>{gathered(s, in, DType::f64)}; },
    // A copy: every word exact.
    .tolerance = [](const Sizes& s, const std::vector<Tensor>&) {
      return std::vector<Tensor>{Tensor::zeros({s[0], s[1]}, DType::f64)};
    },
    // A LeNet-5 batch of 256 images from Fashion-MNIST's 60,000.
    .bench_sizes = {{256, 784, 60000}},
    .reduction_length = [](const Sizes&) { return int64_t(1); },
    .cpu_fp32 = [](const Sizes& s, const std::vector<Tensor>& in) { return std::vector<Tensor>{gathered(s, in, DType::f32)}; },
    .check_sizes = check_sizes,
}};

}  // namespace
}  // namespace warpnet::device
