// What the row-reduction registrations share (ops sum_rows and max_rows, one
// kernel template per version with the operation as a parameter): reading
// the sizes {N, C} and the buffers {X, Y}, the FLOP and byte formulas, and
// the launch. An anonymous namespace although this is a header: it is
// private to the registration files, each compiled as three copies (plain,
// traced, nvcc; see ../copy.hpp) whose helpers must not be merged by the linker.
#pragma once
#include "device/kernels/copy.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace warpnet::device::reduce_kernels {
namespace {

inline int N(const Sizes& s) { return int(s[0]); }
inline int C(const Sizes& s) { return int(s[1]); }

// One add (or max) per element.
inline double flops(const Sizes& s) { return double(N(s)) * C(s); }

// X read once, Y written once: every version moves the same bytes; what
// changes is how many instructions and how well they are coalesced.
inline double bytes(const Sizes& s) { return 4.0 * double(N(s)) * C(s) + 4.0 * N(s); }

// Every row-reduction kernel: (N, C, X, Y), X (N,C) fp32 row-major, Y (N).
using ReduceKernel = void (*)(int, int, const float*, float*);

// Launches `kernel` on buffers {X, Y}. Throws when the launch fails.
inline void launch_reduce(const Sizes& s, const Launch& l, Buffers b, ReduceKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, N(s), C(s), static_cast<const float*>(b[0]),
                static_cast<float*>(b[1]));
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::reduce_kernels
