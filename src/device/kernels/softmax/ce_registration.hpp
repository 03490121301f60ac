// What the softmax + cross-entropy registrations share, on top of the softmax
// ones (N, C): the buffers ({Z, labels, loss, P} forward, {P, labels, dloss,
// dZ} backward), the FLOP and byte formulas and the launches. An anonymous
// namespace although this is a header: it is private to the registration
// files, each compiled as three copies (plain, traced, nvcc; see ../copy.hpp)
// whose helpers must not be merged by the linker.
#pragma once
#include "device/kernels/grid_stride.hpp"
#include "device/kernels/softmax/softmax_registration.hpp"

namespace warpnet::device::softmax_kernels {
namespace {

// Forward: softmax's 5 FLOPs per element, and per row a subtraction, a log
// and an add for the loss. For listings: the op is bound by memory.
inline double ce_flops(const Sizes& s) { return 5.0 * double(N(s)) * C(s) + 3.0 * N(s); }

// Forward global bytes when Z is read `reads` times and P written once, plus
// per row the label, z[label] and the loss (4 bytes each).
inline double ce_bytes(const Sizes& s, int reads) { return pass_bytes(s, reads) + 12.0 * N(s); }

// Every forward kernel: (N, C, Z, labels, loss, P); Z, P (N,C) fp32
// row-major, labels (N) i32, loss (N) fp32.
using CeKernel = void (*)(int, int, const float*, const int*, float*, float*);

// Launches `kernel` on buffers {Z, labels, loss, P}. Throws when the launch fails.
inline void launch_ce(const Sizes& s, const Launch& l, Buffers b, CeKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, N(s), C(s), static_cast<const float*>(b[0]),
                static_cast<const int*>(b[1]), static_cast<float*>(b[2]), static_cast<float*>(b[3]));
  check_launch();
}

// The backward's grid-stride launch over the N·C elements (grid_stride.hpp).
inline Launch ce_backward_grid(const Sizes& s) { return capped_grid(int64_t(N(s)) * C(s)); }

// Every backward kernel: (N, C, P, labels, dloss, dZ); P, dZ (N,C) fp32
// row-major, labels (N) i32, dloss (1) fp32.
using CeBackwardKernel = void (*)(int, int, const float*, const int*, const float*, float*);

// Launches `kernel` on buffers {P, labels, dloss, dZ}. Throws when the launch fails.
inline void launch_ce_backward(const Sizes& s, const Launch& l, Buffers b, CeBackwardKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, N(s), C(s), static_cast<const float*>(b[0]),
                static_cast<const int*>(b[1]), static_cast<const float*>(b[2]), static_cast<float*>(b[3]));
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::softmax_kernels
