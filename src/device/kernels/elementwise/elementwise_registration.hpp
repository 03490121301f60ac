// What the elementwise registrations share: the size {n} ({N, C, S} for
// bias_add), the buffers ({x, y} for a forward, {x, dy, dx} for a backward —
// {y, dy, dx} for sigmoid's and tanh's, {a, b, c} for mul — {x, b, y} for
// bias_add), the byte formulas, the capped grid (over
// n = N·C·S elements for bias_add), and one Kernel per activation op from a
// kernel template on the activation. An anonymous namespace although this is
// a header: it is private to the registration files, each compiled as three
// copies (plain, traced, nvcc; see ../copy.hpp) whose helpers must not be
// merged by the linker.
#pragma once
#include <string>

#include "device/kernels/copy.hpp"
#include "device/kernels/grid_stride.hpp"
#include "kernels/common/all.hpp"  // before any kernel file is included (see there)

namespace warpnet::device::elementwise_kernels {
namespace {

inline int n(const Sizes& s) { return int(s[0]); }

constexpr int kBlock = kGridStrideBlock;  // capped_grid's (grid_stride.hpp)

// Global bytes: a forward reads x and writes y, a backward reads x and dy
// and writes dx, 4 bytes each, exactly once.
inline double unary_bytes(const Sizes& s) { return 8.0 * n(s); }
inline double binary_bytes(const Sizes& s) { return 12.0 * n(s); }

using UnaryKernel = void (*)(int, const float*, float*);
using BinaryKernel = void (*)(int, const float*, const float*, float*);

// Launches `kernel` on buffers {x, y}; `dependent`: with
// launch_dependent_kernel (the kernel waits for the prior grids first).
// Throws when the launch fails.
inline void launch_unary(const Sizes& s, const Launch& l, Buffers b, UnaryKernel kernel, bool dependent = false) {
  const auto x = static_cast<const float*>(b[0]);
  const auto y = static_cast<float*>(b[1]);
  if (dependent)
    launch_dependent_kernel(kernel, l.grid, l.block, l.dynamic_shared, n(s), x, y);
  else
    launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, n(s), x, y);
  check_launch();
}
// Launches `kernel` on buffers {x, dy, dx}. Throws when the launch fails.
inline void launch_binary(const Sizes& s, const Launch& l, Buffers b, BinaryKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, n(s), static_cast<const float*>(b[0]),
                static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  check_launch();
}

// FLOPs per element, for listings only (these kernels are bound by memory):
// ReLU's compare (a select) and its backward's; GELU's 5 multiplies and adds
// for u, a tanh counted as one, and 3 more; its backward's 14. Sigmoid: the
// sign test, an exp counted as one, an add and a divide; its backward y·(1−y)·dy
// 3; tanh 1; its backward dy·(1 − y²) 3; mul 1.
constexpr double kReluFlops = 1, kReluBackwardFlops = 1, kGeluFlops = 9, kGeluBackwardFlops = 14;
constexpr double kSigmoidFlops = 4, kSigmoidBackwardFlops = 3, kTanhFlops = 1, kTanhBackwardFlops = 3, kMulFlops = 1,
                 kAddFlops = 1;

// One registration's Kernel for `op`: what differs between the ops of one
// version is only the op's name, its FLOPs and the bytes (unary or binary).
inline Kernel unary_kernel(std::string op, int version, std::string name, std::string shape_text,
                           Launch (*shape)(const Sizes&), double (*flops)(const Sizes&),
                           void (*launch)(const Sizes&, const Launch&, Buffers)) {
  return Kernel{.op = std::move(op), .version = version, .name = std::move(name), .precision = "fp32",
                .shape_text = std::move(shape_text), .shape = shape, .flops = flops, .bytes = unary_bytes,
                .launch = launch, .copy = kThisCopy};
}
inline Kernel binary_kernel(std::string op, int version, std::string name, std::string shape_text,
                            Launch (*shape)(const Sizes&), double (*flops)(const Sizes&),
                            void (*launch)(const Sizes&, const Launch&, Buffers)) {
  return Kernel{.op = std::move(op), .version = version, .name = std::move(name), .precision = "fp32",
                .shape_text = std::move(shape_text), .shape = shape, .flops = flops, .bytes = binary_bytes,
                .launch = launch, .copy = kThisCopy};
}

// bias_add: sizes {N, C, S}, S = H·W; buffers {x, b, y}. Its elements: N·C·S.
inline int64_t bias_elements(const Sizes& s) { return s[0] * s[1] * s[2]; }
// One add per element.
inline double bias_flops(const Sizes& s) { return double(bias_elements(s)); }
// x read and y written once, and b[c] asked for once per element (4 bytes
// each): 12 bytes per element requested, though b's C floats come from
// cache after the first touch and DRAM sees about 8.
inline double bias_bytes(const Sizes& s) { return 12.0 * double(bias_elements(s)); }

using BiasKernel = void (*)(int, int, int, const float*, const float*, float*);

// Launches `kernel` on buffers {x, b, y}. Throws when the launch fails.
inline void launch_bias(const Sizes& s, const Launch& l, Buffers b, BiasKernel kernel) {
  launch_kernel(kernel, l.grid, l.block, l.dynamic_shared, int(s[0]), int(s[1]), int(s[2]),
                static_cast<const float*>(b[0]), static_cast<const float*>(b[1]), static_cast<float*>(b[2]));
  check_launch();
}

}  // namespace
}  // namespace warpnet::device::elementwise_kernels
