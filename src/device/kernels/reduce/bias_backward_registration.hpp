// What the bias_add_backward registrations share: reading the sizes {N, C, S}
// and the buffers {dY, db}, the FLOP and byte formulas, and the launch. An
// anonymous namespace although this is a header: it is private to the
// registration files, each compiled as three copies (plain, traced, nvcc; see
// ../copy.hpp) whose helpers must not be merged by the linker.
#pragma once
#include "device/kernels/copy.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace warpnet::device::reduce_kernels {
namespace {

// Sizes {N, C, S}: dY is (N,C,S), S = H·W (1 for a linear layer's (N,C)).
inline int bias_N(const Sizes& s) { return int(s[0]); }
inline int bias_C(const Sizes& s) { return int(s[1]); }
inline int bias_S(const Sizes& s) { return int(s[2]); }
inline double bias_elements(const Sizes& s) { return double(s[0]) * double(s[1]) * double(s[2]); }

// One add per element of dY.
inline double bias_backward_flops(const Sizes& s) { return bias_elements(s); }
// dY read once, db written once: the same bytes for every version; what
// changes is how many sectors they take (v1 with S > 1: 8x) and how many
// threads share the work.
inline double bias_backward_bytes(const Sizes& s) { return 4.0 * bias_elements(s) + 4.0 * bias_C(s); }

// Every bias-backward kernel: (N, C, S, dY, db), dY (N,C,S) fp32, db (C).
using BiasBackwardKernel = void (*)(int, int, int, const float*, float*);

// Launches `kernel` on buffers {dY, db}. Throws when the launch fails.
inline void launch_bias_backward(const Sizes& s, const Launch& l, Buffers b, BiasBackwardKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, bias_N(s), bias_C(s), bias_S(s),
                static_cast<const float*>(b[0]), static_cast<float*>(b[1]));
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::reduce_kernels
