// How the dropout op's sizes {n, p_millionths, seed_lo, seed_hi} encode its
// parameters, read alike by the op's reference (ops/dropout.cpp) and the
// kernel registrations (kernels/dropout/), so both derive p, the threshold
// and the seed from the same expressions. Sizes are int64 and `--size`
// takes decimal integers: p is given in millionths (500000 for 0.5), and the
// 64-bit seed — any value the CPU's Rng draws, so a device run can repeat a
// CPU one — as two 32-bit halves, each a non-negative int64 (the whole seed
// would not fit one above 2^63). An anonymous namespace: private to the few
// files that include it, one copy each (the registrations are compiled three
// times, see device/kernels/copy.hpp).
#pragma once
#include <cstdint>

#include "core/error.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

inline void check_dropout_sizes(const Sizes& s) {
  if (s.size() != 4 || s[0] < 0 || s[0] > INT32_MAX || s[1] < 0 || s[1] >= 1000000 || s[2] < 0 ||
      s[2] > UINT32_MAX || s[3] < 0 || s[3] > UINT32_MAX)
    fail("dropout: sizes are {n, p_millionths, seed_lo, seed_hi}: 0 <= n < 2^31, 0 <= p_millionths < 1000000, "
         "seed halves in [0, 2^32)");
}
inline int64_t dropout_n(const Sizes& s) { return s[0]; }
// p in [0, 1): the double nearest p_millionths / 10^6, the same on every machine.
inline double dropout_p(const Sizes& s) { return double(s[1]) / 1e6; }
inline uint64_t dropout_seed(const Sizes& s) { return uint64_t(s[3]) << 32 | uint64_t(s[2]); }

}  // namespace
}  // namespace warpnet::device
