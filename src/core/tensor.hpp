// Tensor: a shape, strides and a dtype over reference-counted storage that
// knows its device and what its bytes are for (the memory tracker's tag).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/shape.hpp"

namespace warpnet {

// Owns the bytes; reports them to the MemoryTracker for as long as it lives.
class Storage {
 public:
  // `charged`: the bytes the tracker counts, when not `bytes` (emulated low
  // precision: values of a narrower format kept in fp32 words, counted at
  // the format's width; core/memory.hpp's ValueWidthScope).
  Storage(int64_t bytes, Device device, MemTag tag, std::string layer, int64_t charged = -1);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  int64_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  MemTag tag() const { return tag_; }
  const std::string& layer() const { return layer_; }
  // Moves the bytes to another tag/layer in the tracker (e.g. a freshly
  // created tensor that becomes a layer's weight).
  void retag(MemTag tag, std::string layer);

 private:
  // "activation, layer conv1", or the tag alone outside any layer: what an
  // allocation was for, in its errors.
  std::string purpose() const;
  void* data_ = nullptr;   // the bytes, aligned
  void* block_ = nullptr;  // what malloc gave on the host (data_ rounded up from it)
  int64_t bytes_, charged_;
  Device device_;
  MemTag tag_;
  std::string layer_;
};

// The bytes a tensor of `shape` and `dtype` holds; an Error when they pass
// 2^63 (sizes a user or a file gives can multiply past int64: never wrapped).
int64_t storage_bytes(const Shape& shape, DType dtype);

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor: defined() is false

  // Uninitialized storage, tagged from the current MemoryScope; on another
  // device through the backend registered for it (core/device_memory.hpp).
  static Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::cpu);
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32);
  static Tensor full(const Shape& shape, double value, DType dtype = DType::f32);
  // Copies host values into a new tensor of the matching dtype.
  template <class T>
  static Tensor from(const Shape& shape, const std::vector<T>& values);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int axis) const { return shape_[axis]; }
  int rank() const { return shape_.rank(); }
  int64_t numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t nbytes() const { return numel() * static_cast<int64_t>(size_of(dtype_)); }
  bool is_contiguous() const;
  const Storage* storage() const { return storage_.get(); }

  // Typed host access; throws if T does not match dtype() or the tensor is on
  // a device (copy it with to(Device::cpu) first).
  template <class T> T* data();
  template <class T> const T* data() const;
  // The first element's address, host or device: what kernels are handed.
  void* raw() { return static_cast<char*>(storage_->data()) + offset_ * size_of(dtype_); }
  const void* raw() const { return static_cast<const char*>(storage_->data()) + offset_ * size_of(dtype_); }

  // Element access by flat index (contiguous) converted to double: for tests
  // and printing, never for hot loops.
  double item(int64_t flat_index = 0) const;
  void set(int64_t flat_index, double value);

  // Views share storage.
  Tensor reshape(const Shape& shape) const;  // contiguous only; -1 infers one extent
  Tensor transpose(int axis0, int axis1) const;
  // Rows [begin, begin + count) along the first axis (contiguous only):
  // a contiguous view, on the host or a device.
  Tensor rows(int64_t begin, int64_t count) const;
  // Copies.
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(DType dtype) const;    // converts element type (a copy, on the CPU)
  // The same values on another device (a copy, charged to the same tag and
  // layer as this one; itself if already there).
  Tensor to(Device device) const;
  // Overwrites this tensor's values with src's, across devices; one shape
  // and dtype, both contiguous. The storage (and its tag) stays this one's.
  // Within one device the copy stays there, queued after the work before it:
  // the host does not wait for it.
  void copy_from(const Tensor& src);

  void fill(double value);
  void retag(MemTag tag, const std::string& layer) { storage_->retag(tag, layer); }

  std::string describe() const;  // "f32 (64,1,28,28)", "f32 (64,10) on cuda"

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  std::vector<int64_t> strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::f32;
};

template <class T>
T* Tensor::data() {
  return const_cast<T*>(std::as_const(*this).data<T>());
}

template <class T>
const T* Tensor::data() const {
  WN_CHECK(defined(), "tensor: access to an undefined tensor");
  WN_CHECK(dtype_ == dtype_v<T>, "tensor: asked for ", name_of(dtype_v<T>), " data of a ", describe());
  WN_CHECK(device() == Device::cpu, "tensor: host access to a ", describe(), "; copy it with .to(Device::cpu) first");
  return static_cast<const T*>(raw());
}

template <class T>
Tensor Tensor::from(const Shape& shape, const std::vector<T>& values) {
  WN_CHECK(static_cast<int64_t>(values.size()) == shape.numel(), "tensor: ", values.size(),
           " values do not fill shape ", shape);
  Tensor t = empty(shape, dtype_v<T>);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

// Calls fn with a typed null pointer for the floating dtype of t, so one
// templated body serves f32 and f64: dispatch_float(t, [&](auto* tag) { using T = ...; }).
template <class Fn>
decltype(auto) dispatch_float(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::f32: return fn(static_cast<float*>(nullptr));
    case DType::f64: return fn(static_cast<double*>(nullptr));
    default: fail(op, ": expected an f32 or f64 tensor, got ", name_of(dtype));
  }
}

}  // namespace warpnet
