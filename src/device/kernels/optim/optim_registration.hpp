// What the optimizer-update registrations share: the size {n}, the buffers
// ({w, v, g, hyper, w', v'} for sgd_momentum, {w, m, v, g, hyper, w', m', v'}
// for adam), the capped grid, the FLOP and byte formulas, and the launches.
// An anonymous namespace although this is a header: it is private to the
// registration files, each compiled as three copies (plain, traced, nvcc; see
// ../copy.hpp) whose helpers must not be merged by the linker.
#pragma once

#include "device/kernels/copy.hpp"
#include "device/kernels/grid_stride.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace warpnet::device::optim_kernels {
namespace {

inline int n(const Sizes& s) { return int(s[0]); }

constexpr int kBlock = kGridStrideBlock;  // capped_grid's (grid_stride.hpp)
inline double threads(const Launch& l) { return double(l.grid.x) * l.block.x; }

// FLOPs per element, for listings (the updates are bound by memory): SGD's
// 2 products and 2 adds for v, a product and a subtraction for w; Adam's 4
// for m (1 − β1 included), 5 for v, and sqrt, add, product, division and
// subtraction for w.
constexpr double kSgdFlops = 6, kAdamFlops = 14;

// Global bytes: SGD reads w, v, g and writes w, v (20 per element), Adam
// reads w, m, v, g and writes w, m, v (28); every thread also reads the 3
// (4) hyperparameters once, from cache after the first.
inline double sgd_bytes(const Sizes& s, const Launch& l) { return 20.0 * n(s) + 12.0 * threads(l); }
inline double adam_bytes(const Sizes& s, const Launch& l) { return 28.0 * n(s) + 16.0 * threads(l); }

// (n, w, v, g, hyper, w_out, v_out) and (n, w, m, v, g, hyper, w_out, m_out, v_out).
using SgdKernel = void (*)(int, const float*, const float*, const float*, const float*, float*, float*);
using AdamKernel = void (*)(int, const float*, const float*, const float*, const float*, const float*, float*, float*,
                            float*);

// Launches `kernel` on buffers {w, v, g, hyper, w_out, v_out}. Throws when the launch fails.
inline void launch_sgd(const Sizes& s, const Launch& l, Buffers b, SgdKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, n(s), static_cast<const float*>(b[0]),
                static_cast<const float*>(b[1]), static_cast<const float*>(b[2]), static_cast<const float*>(b[3]),
                static_cast<float*>(b[4]), static_cast<float*>(b[5]));
  check_launch();
}
// Launches `kernel` on buffers {w, m, v, g, hyper, w_out, m_out, v_out}. Throws when the launch fails.
inline void launch_adam(const Sizes& s, const Launch& l, Buffers b, AdamKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, n(s), static_cast<const float*>(b[0]),
                static_cast<const float*>(b[1]), static_cast<const float*>(b[2]), static_cast<const float*>(b[3]),
                static_cast<const float*>(b[4]), static_cast<float*>(b[5]), static_cast<float*>(b[6]),
                static_cast<float*>(b[7]));
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::optim_kernels
