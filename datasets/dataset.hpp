// A labelled data set held in memory, and the mini-batches drawn from it.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace warpnet::data {

struct Dataset {
  std::string name;
  Tensor inputs;  // f32 (N, ...): (N,1,28,28) in [0,1] for images, (N,2) for points
  Tensor labels;  // i32 (N), values in [0, num_classes)
  int num_classes = 0;
  std::vector<std::string> class_names;  // may be empty
  std::string source;                    // the file the inputs were read from; empty when generated
  int64_t size() const { return labels.defined() ? labels.dim(0) : 0; }
};

struct Batch {
  Tensor inputs;  // f32 (B, ...)
  Tensor labels;  // i32 (B)
};

// Rows rows[0..) of `src` (N, ...), contiguous on the CPU, copied into a new
// (rows.size(), ...) tensor in that order.
Tensor gather_rows(const Tensor& src, std::span<const int64_t> rows);

// Walks a data set in mini-batches, reshuffled each epoch from a seeded Rng.
// The last batch is smaller when the size is not a multiple of batch_size.
// The first epoch is ready on construction. Keeps a reference: `data` must
// outlive the Batches.
class Batches {
 public:
  Batches(const Dataset& data, int64_t batch_size, bool shuffle, uint64_t seed);
  int64_t count() const;  // batches per epoch
  // Starts a new epoch (reshuffles when shuffling; epoch k's order depends
  // only on the seed and k).
  void start_epoch();
  // Fills `batch` with the next one; false at the end of the epoch.
  bool next(Batch& batch);
  // The next batch as the data set's row numbers, in batch order, without
  // copying the rows (a device that holds the data set gathers them there);
  // empty at the end of the epoch. next() is next_rows() plus the copies.
  std::span<const int64_t> next_rows();

 private:
  const Dataset& data_;
  int64_t batch_size_;
  bool shuffle_;
  Rng rng_;
  std::vector<int64_t> order_;
  int64_t cursor_ = 0;
};

// The first `count` examples, copied (or all, sharing the tensors, when
// count < 0 or not smaller than the set).
Dataset head(const Dataset& data, int64_t count);
// Examples [begin, end), copied.
Dataset slice(const Dataset& data, int64_t begin, int64_t end);

}  // namespace warpnet::data

namespace warpnet::data {

// Shift and scale of the inputs, one value for the whole set.
struct Standardization {
  double mean = 0, stddev = 1;
};

// The mean and standard deviation of every input value of `data` (f32).
Standardization input_statistics(const Dataset& data);
// x ← (x − mean) / stddev on a copy of the inputs. Training and test sets use
// the training set's statistics, so the test set tells nothing to training.
Dataset standardized(const Dataset& data, const Standardization& s);

}  // namespace warpnet::data
