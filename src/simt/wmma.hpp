// nvcuda::wmma for kernels compiled by g++: m16n16k16 fragments of fp16 or
// bf16 with an fp32 accumulator — what <mma.h> offers under nvcc for these
// shapes. Each *_sync call is a warp rendezvous: all 32 lanes must make it.
//
// CUDA leaves the fragment layout unspecified; warpnet's is two PTX
// mma.m16n8k16 fragments side by side (tensor_cores.hpp). Loads and stores
// run here, in the kernel's code, each lane touching its own elements, so a
// traced kernel's checker and tracer see every access. fill_fragment is no
// rendezvous: it touches only the calling lane's registers, and CUDA does not
// call it _sync (it is "ordinarily" called by the whole warp, not required to be).
#pragma once
#include <bit>
#include <cstdint>
#include <type_traits>

#include "simt/copy_namespace.hpp"
#include "simt/device.hpp"
#include "simt/low_precision.hpp"
#include "simt/tensor_cores.hpp"

// Inlined into the kernel even at -O0: a message about a warp's rendezvous
// names the kernel's line (the call's return address), not this header's.
#define WARPNET_WMMA_INLINE inline __attribute__((always_inline))

namespace nvcuda::wmma {
inline namespace WARPNET_SIMT_COPY {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class T, int Size>
struct __frag_base {
  T x[Size];
  enum { num_elements = Size };
  using element_type = T;
};

// Only the combinations below exist; any other is a compile error, as under nvcc.
template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment;

// fp16 a/b fragments carry 16 slots, as CUDA's do: slot 8+i repeats slot i.
template <class L> class fragment<matrix_a, 16, 16, 16, __half, L> : public __frag_base<__half, 16> {};
template <class L> class fragment<matrix_b, 16, 16, 16, __half, L> : public __frag_base<__half, 16> {};
template <class L> class fragment<matrix_a, 16, 16, 16, __nv_bfloat16, L> : public __frag_base<__nv_bfloat16, 8> {};
template <class L> class fragment<matrix_b, 16, 16, 16, __nv_bfloat16, L> : public __frag_base<__nv_bfloat16, 8> {};
template <> class fragment<accumulator, 16, 16, 16, float> : public __frag_base<float, 8> {};

namespace detail {

// The warp's rendezvous, where its lanes must agree on the matrix.
WARPNET_WMMA_INLINE void sync(const char* name, const void* p, unsigned ldm) {
  warpnet::simt::WmmaMatrix mine{p, ldm};
  warpnet::simt::warp_matrix_op({name, &warpnet::simt::wmma_same_matrix, &mine});
}

// CUDA: mptr 256-bit aligned; ldm a multiple of 16 bytes (8 for 16-bit elements, 4 for float).
template <class T>
WARPNET_WMMA_INLINE void check(const char* name, const T* p, unsigned ldm) {
  if (reinterpret_cast<uintptr_t>(p) % 32 != 0) warpnet::simt::device_misuse(name, "the pointer must be 32-byte aligned", p);
  if (ldm * sizeof(T) % 16 != 0) warpnet::simt::device_misuse(name, "ldm must be a multiple of 16 bytes", p);
}

// A (m,k) element (row, col) of a matrix stored with leading dimension ldm.
inline unsigned offset(warpnet::simt::RowCol e, unsigned ldm, bool row_major) {
  return row_major ? unsigned(e.row) * ldm + unsigned(e.col) : unsigned(e.col) * ldm + unsigned(e.row);
}

template <class Frag, class T>
WARPNET_WMMA_INLINE void load(Frag& f, const T* p, unsigned ldm, bool row_major, warpnet::simt::RowCol (*element)(unsigned, int)) {
  sync("wmma::load_matrix_sync", p, ldm);
  check("wmma::load_matrix_sync", p, ldm);
  const unsigned lane = warpnet::simt::lane_id();
  for (int i = 0; i < Frag::num_elements; ++i) f.x[i] = p[offset(element(lane, i), ldm, row_major)];
}

template <class T>
constexpr bool row_major_v = std::is_same_v<T, row_major>;

}  // namespace detail

template <class Use, int M, int N, int K, class T, class L>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, const std::type_identity_t<T>& v) {
  for (T& x : f.x) x = v;
}

// matrix_a: (16,16) = (m,k); row_major: element (m,k) at p[m*ldm + k], col_major: p[k*ldm + m].
template <class T, class L>
WARPNET_WMMA_INLINE void load_matrix_sync(fragment<matrix_a, 16, 16, 16, T, L>& a, const T* p, unsigned ldm) {
  detail::load(a, p, ldm, detail::row_major_v<L>, [](unsigned lane, int i) { return warpnet::simt::wmma_a_element(lane, i); });
}
// matrix_b: (16,16) = (k,n); row_major: element (k,n) at p[k*ldm + n], col_major: p[n*ldm + k].
template <class T, class L>
WARPNET_WMMA_INLINE void load_matrix_sync(fragment<matrix_b, 16, 16, 16, T, L>& b, const T* p, unsigned ldm) {
  detail::load(b, p, ldm, detail::row_major_v<L>, [](unsigned lane, int i) { return warpnet::simt::wmma_b_element(lane, i); });
}
// accumulator: (16,16) = (m,n), its memory layout named at the call.
WARPNET_WMMA_INLINE void load_matrix_sync(fragment<accumulator, 16, 16, 16, float>& c, const float* p, unsigned ldm, layout_t layout) {
  detail::load(c, p, ldm, layout == mem_row_major, [](unsigned lane, int i) { return warpnet::simt::wmma_c_element(lane, i); });
}

WARPNET_WMMA_INLINE void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 16, float>& c, unsigned ldm, layout_t layout) {
  detail::check("wmma::store_matrix_sync", p, ldm);
  const unsigned lane = warpnet::simt::lane_id();
  for (int i = 0; i < 8; ++i) p[detail::offset(warpnet::simt::wmma_c_element(lane, i), ldm, layout == mem_row_major)] = c.x[i];
  detail::sync("wmma::store_matrix_sync", p, ldm);  // after the stores: the warp sees them once every lane returns
}

// d (16,16) = a @ b + c, products exact, fp32 accumulation. d may be c.
template <class T, class LA, class LB>
WARPNET_WMMA_INLINE void mma_sync(fragment<accumulator, 16, 16, 16, float>& d, const fragment<matrix_a, 16, 16, 16, T, LA>& a,
                     const fragment<matrix_b, 16, 16, 16, T, LB>& b, const fragment<accumulator, 16, 16, 16, float>& c) {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "fp16 or bf16 inputs");
  uint16_t a_bits[8], b_bits[8];  // this lane's registers, as 16-bit patterns
  for (int i = 0; i < 8; ++i) {
    a_bits[i] = std::bit_cast<uint16_t>(a.x[i]);
    b_bits[i] = std::bit_cast<uint16_t>(b.x[i]);
  }
  warpnet::simt::WmmaLane lane{a_bits, b_bits, c.x, d.x};
  if constexpr (std::is_same_v<T, __half>)
    warpnet::simt::warp_matrix_op({"wmma::mma_sync (f16)", &warpnet::simt::wmma_m16n16k16_f16, &lane});
  else
    warpnet::simt::warp_matrix_op({"wmma::mma_sync (bf16)", &warpnet::simt::wmma_m16n16k16_bf16, &lane});
}

}  // inline namespace WARPNET_SIMT_COPY
}  // namespace nvcuda::wmma

#undef WARPNET_WMMA_INLINE
