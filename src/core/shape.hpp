// Shape: the extents of a tensor, printed the way error messages need them.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace warpnet {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  // Negative axes count from the end, as in NumPy.
  int64_t operator[](int axis) const { return dims_.at(normalize(axis)); }
  int64_t& operator[](int axis) { return dims_.at(normalize(axis)); }
  int64_t numel() const;
  const std::vector<int64_t>& dims() const { return dims_; }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }

  bool operator==(const Shape& other) const = default;
  std::string str() const;  // "(3,4)"

 private:
  int normalize(int axis) const { return axis < 0 ? axis + rank() : axis; }
  std::vector<int64_t> dims_;
};

// Row-major (C-order) strides in elements.
std::vector<int64_t> contiguous_strides(const Shape& shape);

inline std::ostream& operator<<(std::ostream& out, const Shape& shape) { return out << shape.str(); }

}  // namespace warpnet
