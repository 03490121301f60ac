// What the softmax registrations share: reading the sizes {N, C} and the
// buffers {Z, P}, the FLOP and byte formulas, and the launch. An anonymous
// namespace although this is a header: it is private to the registration
// files, each compiled as three copies (plain, traced, nvcc; see ../copy.hpp)
// whose helpers must not be merged by the linker.
#pragma once
#include "device/kernels/copy.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace warpnet::device::softmax_kernels {
namespace {

inline int N(const Sizes& s) { return int(s[0]); }
inline int C(const Sizes& s) { return int(s[1]); }

// Per element: a max, a subtraction, an exp, an add, a scale (exp counted as
// one FLOP; the naive versions' recomputed exp is not counted again). The
// figure is for listings: softmax is bound by memory, not arithmetic.
inline double flops(const Sizes& s) { return 5.0 * double(N(s)) * C(s); }

// Global bytes when the kernel reads Z `reads` times and writes P once.
inline double pass_bytes(const Sizes& s, int reads) { return 4.0 * (reads + 1) * double(N(s)) * C(s); }

// Every softmax kernel: (N, C, Z, P), Z and P (N,C) fp32 row-major.
using SoftmaxKernel = void (*)(int, int, const float*, float*);

// Launches `kernel` on buffers {Z, P}. Throws when the launch fails.
inline void launch_softmax(const Sizes& s, const Launch& l, Buffers b, SoftmaxKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, N(s), C(s), static_cast<const float*>(b[0]),
                static_cast<float*>(b[1]));
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::softmax_kernels
