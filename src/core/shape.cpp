#include "core/shape.hpp"

#include "core/error.hpp"

namespace warpnet {

// The product is taken, with its overflow check, on every call, and out of
// line where the compiler cannot hoist it: a loop over elements reads it once
// (`for (int64_t i = 0, count = t.numel(); i < count; ++i)`); called per
// element it took 5% of a LeNet-5 training run's time (perf, 2026-12-03).
int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_)  // sizes a user types can multiply past int64: refused, never wrapped
    WN_CHECK(!__builtin_mul_overflow(n, d, &n), "shape ", str(), " has more than 2^63 elements");
  return n;
}

std::string Shape::str() const {
  std::string s = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims_[i]);
  }
  return s + ")";
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank());
  int64_t step = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = step;
    step *= shape[i];
  }
  return strides;
}

}  // namespace warpnet
