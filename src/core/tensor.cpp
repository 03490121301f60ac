#include "core/tensor.hpp"

#include "core/device_memory.hpp"
#include "core/host_memory.hpp"

#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace warpnet {

namespace {
// 64-byte alignment suits AVX-512 loads and cache lines.
constexpr size_t kAlignment = 64;

// Tensors are created and dropped at a high rate, most of them the same few
// sizes every training step. glibc serves blocks of 128 KiB and up with mmap
// and gives them back to the OS on free, so each new activation paid a page
// fault per 4 KiB (cpu::relu over 64M floats ran at 5 GB/s instead of 20).
// Keeping freed memory in the process makes the next step reuse it.
void keep_freed_memory_in_process() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_MAX, 0);              // every block from the heap, none mmap'ed
    mallopt(M_TRIM_THRESHOLD, 1 << 30);  // and the heap's top not handed back
  });
}
}  // namespace

Storage::Storage(int64_t bytes, Device device, MemTag tag, std::string layer, int64_t charged)
    : bytes_(bytes), charged_(charged < 0 ? bytes : charged), device_(device), tag_(tag), layer_(std::move(layer)) {
  if (device != Device::cpu) {
    data_ = device_memory(device).allocate(static_cast<size_t>(bytes));
    if (!data_)
      fail("storage: out of ", name_of(device), " memory allocating ", format_bytes(bytes), " (", purpose(), ")");
    MemoryTracker::instance().on_alloc(charged_, tag_, layer_);
    return;
  }
  keep_freed_memory_in_process();
  if (const std::string why = host_allocation_refusal(bytes); !why.empty())
    fail("storage: out of host memory allocating ", format_bytes(bytes), " (", purpose(), "): ", why);
  // malloc, then rounded up to the alignment, rather than aligned_alloc:
  // glibc's aligned_alloc asks its heap for the size plus the alignment and
  // a header, so a freed block of exactly one tensor's size never fits the
  // next tensor of that size once a small allocation made since sits after
  // it (a control block, a layer's name), and each such tensor took fresh
  // pages: lesson 02's thirteen ReLUs over 64M floats grew the heap by
  // 256 MiB each, to 3.4 GB. Asking malloc for the same size every time
  // lets it hand the freed block back.
  block_ = std::malloc(static_cast<size_t>(bytes) + kAlignment);
  if (!block_) fail("storage: out of host memory allocating ", format_bytes(bytes), " (", purpose(), ")");
  const uintptr_t start = (reinterpret_cast<uintptr_t>(block_) + kAlignment - 1) / kAlignment * kAlignment;
  data_ = static_cast<char*>(block_) + (start - reinterpret_cast<uintptr_t>(block_));
  if (bytes >= kCheckedAllocationBytes) {
    if (const std::string why = back_with_pages(data_, bytes); !why.empty()) {
      std::free(block_);
      fail("storage: out of host memory allocating ", format_bytes(bytes), " (", purpose(), "): ", why);
    }
  }
  MemoryTracker::instance().on_alloc(charged_, tag_, layer_);
}

std::string Storage::purpose() const {
  const std::string tag(name_of(tag_));
  return layer_ == "-" ? tag : cat(tag, ", layer ", layer_);
}

Storage::~Storage() {
  MemoryTracker::instance().on_free(charged_, tag_, layer_);
  if (device_ == Device::cpu)
    std::free(block_);
  else
    device_memory(device_).release(data_);
}

void Storage::retag(MemTag tag, std::string layer) {
  MemoryTracker::instance().on_free(charged_, tag_, layer_);
  tag_ = tag;
  layer_ = std::move(layer);
  MemoryTracker::instance().on_alloc(charged_, tag_, layer_);
}

int64_t storage_bytes(const Shape& shape, DType dtype) {
  int64_t bytes = 0;
  WN_CHECK(!__builtin_mul_overflow(shape.numel(), static_cast<int64_t>(size_of(dtype)), &bytes), "tensor: shape ",
           shape, " of ", name_of(dtype), " needs more than 2^63 bytes");
  return bytes;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape) WN_CHECK(d >= 0, "tensor: negative extent in shape ", shape);
  Tensor t;
  const MemContext& ctx = current_mem_context();
  const int64_t bytes = storage_bytes(shape, dtype);  // first: it refuses a shape whose bytes overflow
  // What the memory tracker charges: the f32 elements at the context's width
  // (4, or an emulated low precision's), never more than the bytes just checked.
  const int64_t charged = dtype == DType::f32 ? shape.numel() * ctx.f32_bytes : -1;
  t.storage_ = std::make_shared<Storage>(bytes, device, ctx.tag, ctx.layer, charged);
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  t.dtype_ = dtype;
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memset(t.raw(), 0, static_cast<size_t>(t.nbytes()));
  return t;
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype) {
  Tensor t = empty(shape, dtype);
  t.fill(value);
  return t;
}

bool Tensor::is_contiguous() const { return strides_ == contiguous_strides(shape_); }

namespace {
template <class Fn>
decltype(auto) dispatch_any(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::f32: return fn(static_cast<float*>(nullptr));
    case DType::f64: return fn(static_cast<double*>(nullptr));
    case DType::i32: return fn(static_cast<int32_t*>(nullptr));
    case DType::i64: return fn(static_cast<int64_t*>(nullptr));
    case DType::u8: return fn(static_cast<uint8_t*>(nullptr));
  }
  fail("tensor: unknown dtype");
}
}  // namespace

double Tensor::item(int64_t i) const {
  WN_CHECK(is_contiguous(), "tensor: item() needs a contiguous tensor, got ", describe());
  WN_CHECK(i >= 0 && i < numel(), "tensor: index ", i, " out of range for ", describe());
  return dispatch_any(dtype_, [&](auto* tag) { return static_cast<double>(data<std::remove_pointer_t<decltype(tag)>>()[i]); });
}

void Tensor::set(int64_t i, double value) {
  WN_CHECK(is_contiguous(), "tensor: set() needs a contiguous tensor, got ", describe());
  WN_CHECK(i >= 0 && i < numel(), "tensor: index ", i, " out of range for ", describe());
  dispatch_any(dtype_, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    data<T>()[i] = static_cast<T>(value);
  });
}

void Tensor::fill(double value) {
  WN_CHECK(is_contiguous(), "tensor: fill() needs a contiguous tensor, got ", describe());
  dispatch_any(dtype_, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* p = data<T>();
    std::fill(p, p + numel(), static_cast<T>(value));
  });
}

Tensor Tensor::reshape(const Shape& shape) const {
  WN_CHECK(is_contiguous(), "reshape: needs a contiguous tensor, got ", describe());
  std::vector<int64_t> dims = shape.dims();
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      WN_CHECK(infer < 0, "reshape: more than one -1 in ", shape);
      infer = static_cast<int>(i);
    } else {
      known *= dims[i];
    }
  }
  if (infer >= 0) {
    WN_CHECK(known > 0 && numel() % known == 0, "reshape: cannot reshape ", shape_, " into ", shape);
    dims[infer] = numel() / known;
  }
  Shape target(dims);
  WN_CHECK(target.numel() == numel(), "reshape: ", shape_, " has ", numel(), " elements, ", shape, " has ",
           target.numel());
  Tensor t = *this;
  t.shape_ = target;
  t.strides_ = contiguous_strides(target);
  return t;
}

Tensor Tensor::rows(int64_t begin, int64_t count) const {
  WN_CHECK(is_contiguous() && rank() >= 1, "rows: needs a contiguous tensor of rank >= 1, got ", describe());
  WN_CHECK(begin >= 0 && count >= 0 && begin + count <= shape_[0], "rows: rows [", begin, ", ", begin + count,
           ") of ", describe());
  Tensor t = *this;
  t.shape_[0] = count;
  t.strides_ = contiguous_strides(t.shape_);
  t.offset_ = offset_ + begin * (rank() > 1 ? strides_[0] : 1);
  return t;
}

Tensor Tensor::transpose(int a, int b) const {
  int r = rank();
  if (a < 0) a += r;
  if (b < 0) b += r;
  WN_CHECK(a >= 0 && a < r && b >= 0 && b < r, "transpose: axes (", a, ",", b, ") out of range for ", describe());
  Tensor t = *this;
  std::swap(t.shape_[a], t.shape_[b]);
  std::swap(t.strides_[a], t.strides_[b]);
  return t;
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  if (this->device() != Device::cpu && device != Device::cpu) return to(Device::cpu).to(device);
  const Tensor src = this->device() == Device::cpu ? contiguous() : *this;  // device tensors are contiguous
  Tensor out = empty(shape_, dtype_, device);
  out.retag(storage_->tag(), storage_->layer());
  out.copy_from(src);
  return out;
}

void Tensor::copy_from(const Tensor& src) {
  WN_CHECK(defined() && src.defined() && shape_ == src.shape_ && dtype_ == src.dtype_, "tensor: cannot copy ",
           src.describe(), " into ", describe());
  WN_CHECK(is_contiguous() && src.is_contiguous(), "tensor: copy_from needs contiguous tensors, got ", src.describe(),
           " into ", describe());
  const size_t bytes = static_cast<size_t>(nbytes());
  if (bytes == 0) return;
  const Device from = src.device(), to = device();
  if (from == Device::cpu && to == Device::cpu) {
    std::memcpy(raw(), src.raw(), bytes);
  } else if (from == Device::cpu) {
    count_transfer(Transfer::to_device);
    device_memory(to).to_device(raw(), src.raw(), bytes);
  } else if (to == Device::cpu) {
    count_transfer(Transfer::to_host);
    device_memory(from).to_host(raw(), src.raw(), bytes);
  } else if (from == to) {
    count_transfer(Transfer::within);
    device_memory(to).within(raw(), src.raw(), bytes);
  } else {
    copy_from(src.to(Device::cpu));  // between two devices through the host: rare, and never timed
  }
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = empty(shape_, dtype_);
  const size_t elem = size_of(dtype_);
  if (is_contiguous()) {
    std::memcpy(out.raw(), raw(), static_cast<size_t>(nbytes()));
    return out;
  }
  // Walk the strided source in row-major order of its shape.
  const int r = rank();
  std::vector<int64_t> index(r, 0);
  const char* src = static_cast<const char*>(raw());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t n = 0, count = numel(); n < count; ++n) {
    int64_t off = 0;
    for (int i = 0; i < r; ++i) off += index[i] * strides_[i];
    std::memcpy(dst + n * elem, src + off * elem, elem);
    for (int i = r - 1; i >= 0; --i) {
      if (++index[i] < shape_[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

Tensor Tensor::to(DType dtype) const {
  Tensor src = contiguous();
  Tensor out = empty(shape_, dtype);
  dispatch_any(dtype_, [&](auto* s) {
    using S = std::remove_pointer_t<decltype(s)>;
    dispatch_any(dtype, [&](auto* d) {
      using D = std::remove_pointer_t<decltype(d)>;
      const S* in = src.data<S>();
      D* o = out.data<D>();
      for (int64_t i = 0, count = numel(); i < count; ++i) o[i] = static_cast<D>(in[i]);
    });
  });
  return out;
}

std::string Tensor::describe() const {
  if (!defined()) return "undefined tensor";
  if (device() == Device::cpu) return cat(name_of(dtype_), " ", shape_.str());
  return cat(name_of(dtype_), " ", shape_.str(), " on ", name_of(device()));
}

}  // namespace warpnet
