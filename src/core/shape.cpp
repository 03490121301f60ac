#include "core/shape.hpp"

#include "core/error.hpp"

namespace warpnet {

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
