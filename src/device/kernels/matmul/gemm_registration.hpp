// What the matmul registrations share: reading the sizes {M, N, K, trans_a,
// trans_b} and the buffers {A, B, C}, the FLOP and byte formulas, and
// launching the kernel template's instance for the problem's layout.
// An anonymous namespace although this is a header: it is private to the
// registration files, each compiled as three copies (plain, traced, nvcc;
// see ../copy.hpp) whose helpers must not be merged by the linker.
#pragma once
#include "device/kernels/copy.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace warpnet::device::gemm {
namespace {

inline int M(const Sizes& s) { return int(s[0]); }
inline int N(const Sizes& s) { return int(s[1]); }
inline int K(const Sizes& s) { return int(s[2]); }

inline double flops(const Sizes& s) { return 2.0 * double(M(s)) * N(s) * K(s); }

// Global bytes of a kernel that stages BM x BK tiles of A and BK x BN tiles
// of B in shared memory (or registers): A is read once per column of C tiles,
// B once per row of C tiles (`in_bytes` per element), C written once in fp32.
// Loads past the edges are skipped, so off tile multiples this is an upper bound.
inline double tiled_bytes(const Sizes& s, int bm, int bn, int in_bytes = 4) {
  return in_bytes * (double(M(s)) * K(s) * ceil_div(N(s), bn) + double(K(s)) * N(s) * ceil_div(M(s), bm)) +
         4.0 * M(s) * N(s);
}

// The C-covering grid for a block that owns a BM x BN tile of C.
inline dim3 tile_grid(const Sizes& s, int bm, int bn) { return dim3(ceil_div(N(s), bn), ceil_div(M(s), bm)); }

// Every matmul kernel: (M, N, K, A, B, C), A and B of element type In
// (float, or the 16/8-bit format of Kernel::input_format), C fp32.
template <class In = float>
using GemmKernel = void (*)(int, int, int, const In*, const In*, float*);

// visit.template operator()<TA, TB>() for the layout in the sizes (trans_a,
// trans_b): what a registration computes per layout, a kernel's instance or
// its shared memory.
template <class Visit>
auto with_layout(const Sizes& s, Visit visit) {
  const bool ta = s[3] != 0, tb = s[4] != 0;
  if (ta) return tb ? visit.template operator()<true, true>() : visit.template operator()<true, false>();
  return tb ? visit.template operator()<false, true>() : visit.template operator()<false, false>();
}

// Launches `instance.template operator()<TA, TB>()` — a generic lambda
// returning the kernel template's instance for one layout — for the layout in
// the sizes, on buffers {A, B, C}. Throws when the launch fails.
template <class In = float, class Instance>
void launch_gemm(const Sizes& s, const Launch& l, Buffers b, Instance instance) {
  const GemmKernel<In> kernel = with_layout(s, instance);
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, M(s), N(s), K(s), static_cast<const In*>(b[0]),
                static_cast<const In*>(b[1]), static_cast<float*>(b[2]));
  check_launch();
}

// ": <why>" when the emulator's cuTensorMapEncodeTiled refused a map; the
// driver gives no reason, so "" under nvcc. For the TMA versions' errors.
inline std::string tensor_map_refusal() {
#if defined(__CUDACC__)
  return "";
#else
  return ": " + simt::last_tensor_map_refusal();
#endif
}

}  // namespace
}  // namespace warpnet::device::gemm
