#include "datasets/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace warpnet::data {

Tensor gather_rows(const Tensor& src, std::span<const int64_t> rows) {
  std::vector<int64_t> dims = src.shape().dims();
  const size_t row_bytes = static_cast<size_t>(src.nbytes() / std::max<int64_t>(dims[0], 1));
  dims[0] = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::empty(Shape(dims), src.dtype());
  const char* from = static_cast<const char*>(src.raw());
  char* to = static_cast<char*>(out.raw());
  for (size_t i = 0; i < rows.size(); ++i) std::memcpy(to + i * row_bytes, from + rows[i] * row_bytes, row_bytes);
  return out;
}

Batches::Batches(const Dataset& data, int64_t batch_size, bool shuffle, uint64_t seed)
    : data_(data), batch_size_(batch_size), shuffle_(shuffle), rng_(seed) {
  WN_CHECK(batch_size > 0, "batches: batch size must be positive, got ", batch_size);
  WN_CHECK(data.inputs.defined() && data.labels.defined(), "batches: data set '", data.name, "' is empty");
  WN_CHECK(data.inputs.rank() >= 1 && data.inputs.dim(0) == data.size(), "batches: '", data.name, "' has inputs ",
           data.inputs.shape(), " but ", data.size(), " labels");
  // Rows are copied as byte ranges, which needs each row to be one.
  WN_CHECK(data.inputs.is_contiguous() && data.labels.is_contiguous(), "batches: '", data.name,
           "' must hold contiguous tensors");
  order_.resize(static_cast<size_t>(data.size()));
  // Ready for the first epoch, so next() works without a start_epoch() call.
  start_epoch();
}

int64_t Batches::count() const { return (data_.size() + batch_size_ - 1) / batch_size_; }

void Batches::start_epoch() {
  cursor_ = 0;
  // Each epoch shuffles the identity, not the previous order, so epoch k's
  // order depends only on the seed and k.
  std::iota(order_.begin(), order_.end(), int64_t(0));
  if (!shuffle_) return;
  // Fisher–Yates: every permutation equally likely (up to below()'s tiny modulo bias).
  for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.below(i)]);
}

std::span<const int64_t> Batches::next_rows() {
  const int64_t n = static_cast<int64_t>(order_.size());
  const int64_t b = std::min(batch_size_, n - cursor_);
  if (b <= 0) return {};
  const std::span<const int64_t> rows(order_.data() + cursor_, static_cast<size_t>(b));
  cursor_ += b;
  return rows;
}

bool Batches::next(Batch& batch) {
  const std::span<const int64_t> rows = next_rows();
  if (rows.empty()) return false;
  batch.inputs = gather_rows(data_.inputs, rows);
  batch.labels = gather_rows(data_.labels, rows);
  return true;
}

Dataset head(const Dataset& data, int64_t count) {
  if (count < 0 || count >= data.size()) return data;  // shares the tensors, as a copy of Dataset does
  Dataset out = slice(data, 0, count);
  out.name = cat(data.name, "[:", count, "]");
  return out;
}

Dataset slice(const Dataset& data, int64_t begin, int64_t end) {
  WN_CHECK(0 <= begin && begin <= end && end <= data.size(), data.name, ": examples [", begin, ", ", end,
           ") of ", data.size());
  std::vector<int64_t> rows(static_cast<size_t>(end - begin));
  std::iota(rows.begin(), rows.end(), begin);
  Dataset out = data;
  out.name = cat(data.name, "[", begin, ":", end, "]");
  out.inputs = gather_rows(data.inputs.contiguous(), rows);
  out.labels = gather_rows(data.labels.contiguous(), rows);
  return out;
}

}  // namespace warpnet::data

namespace warpnet::data {

Standardization input_statistics(const Dataset& data) {
  const Tensor& x = data.inputs;
  WN_CHECK(x.defined() && x.numel() > 0, "input_statistics: data set '", data.name, "' is empty");
  const float* p = x.data<float>();
  // Two passes in double: stable for millions of values in [0,1].
  const int64_t count = x.numel();
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += p[i];
  const double mean = sum / double(count);
  double sq = 0;
  for (int64_t i = 0; i < count; ++i) sq += (p[i] - mean) * (p[i] - mean);
  const double stddev = std::sqrt(sq / double(count));
  WN_CHECK(stddev > 0, "input_statistics: every input of '", data.name, "'",
           data.source.empty() ? "" : cat(" (", data.source, ")"), " is ", mean, ": nothing to scale");
  return {mean, stddev};
}

Dataset standardized(const Dataset& data, const Standardization& s) {
  Dataset out = data;
  out.inputs = data.inputs.clone();
  float* p = out.inputs.data<float>();
  const float mean = float(s.mean), inv = float(1.0 / s.stddev);
  for (int64_t i = 0, count = out.inputs.numel(); i < count; ++i) p[i] = (p[i] - mean) * inv;
  return out;
}

}  // namespace warpnet::data
