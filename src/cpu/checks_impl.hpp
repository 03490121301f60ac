// Internal to src/cpu: the precondition checks every op shares, so each error
// reads the same way ("<op>: <name> ...") wherever it is raised, and the
// helpers that keep allocations out of OpenMP regions.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/tensor.hpp"

namespace warpnet::cpu {

// The element type behind dispatch_float's typed null pointer.
template <class Tag>
using elem_t = std::remove_pointer_t<Tag>;

// Below this many elements an elementwise loop runs on the calling thread:
// waking the OpenMP team costs a few microseconds, more than the loop itself.
inline constexpr int64_t kParallelMinElements = 1 << 15;

inline void require_defined(const char* op, const char* name, const Tensor& t) {
  WN_CHECK(t.defined(), op, ": ", name, " is an undefined tensor");
}

// Defined, contiguous and f32/f64: what every floating input needs.
inline void require_float_input(const char* op, const char* name, const Tensor& t) {
  require_defined(op, name, t);
  WN_CHECK(t.dtype() == DType::f32 || t.dtype() == DType::f64, op, ": ", name, " must be f32 or f64, got ",
           t.describe());
  WN_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous, got a strided ", t.describe(),
           "; call .contiguous() first");
}

inline void require_int32_input(const char* op, const char* name, const Tensor& t) {
  require_defined(op, name, t);
  WN_CHECK(t.dtype() == DType::i32, op, ": ", name, " must be i32, got ", t.describe());
  WN_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous, got a strided ", t.describe(),
           "; call .contiguous() first");
}

inline void require_rank(const char* op, const char* name, const Tensor& t, int rank, const char* layout) {
  WN_CHECK(t.rank() == rank, op, ": ", name, " must be ", rank, "-D ", layout, ", got ", t.describe());
}

inline void require_same_dtype(const char* op, const char* name_a, const Tensor& a, const char* name_b,
                               const Tensor& b) {
  WN_CHECK(a.dtype() == b.dtype(), op, ": ", name_a, " is ", name_of(a.dtype()), " but ", name_b, " is ",
           name_of(b.dtype()));
}

inline void require_same_shape(const char* op, const char* name_a, const Tensor& a, const char* name_b,
                               const Tensor& b) {
  WN_CHECK(a.shape() == b.shape(), op, ": ", name_a, " is ", a.shape(), " but ", name_b, " is ", b.shape(),
           ": shapes differ");
}

// Scratch memory for an op, charged to the caller's layer under the workspace
// tag. Allocate it on the calling thread, before any parallel region: the
// tag and layer come from that thread's MemoryScope.
inline Tensor workspace_tensor(const Shape& shape, DType dtype) {
  MemoryScope scope(MemTag::workspace);
  return Tensor::empty(shape, dtype);
}

}  // namespace warpnet::cpu
