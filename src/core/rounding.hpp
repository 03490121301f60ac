// fp32's γ_n, the constant of every rounding-error bound that counts the
// roundings behind a result: the library's kernel-specific bounds
// (device/kernels/conv/winograd_bound.hpp) and the tests' bounds use it.
#pragma once

namespace warpnet {

// γ_n = n·u / (1 − n·u), u = 2^-24: the relative bound on a sum of
// positive-weight terms after at most n fp32 roundings (Higham, ch. 3), in
// any order.
inline double gamma_fp32(double n) { return n * 0x1p-24 / (1 - n * 0x1p-24); }

}  // namespace warpnet
