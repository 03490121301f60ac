// How the dropout op's sizes {n, p_millionths} encode its parameters, read
// alike by the op's reference (ops/dropout.cpp) and the kernel registrations
// (kernels/dropout/), so both derive p and the threshold from the same
// expressions. Sizes are int64 and `--size` takes decimal integers: p is
// given in millionths (500000 for 0.5). The seed is not a size but an input,
// an i32 (2) tensor holding its 64 bits, low word first, which the kernel
// reads from device memory (kernels/dropout/01_counter_hash.cu says why).
// An anonymous namespace: private to the few files that include it, one
// copy each (the registrations are compiled three times, see
// device/kernels/copy.hpp).
#pragma once
#include <cstdint>

#include "core/error.hpp"
#include "device/registry.hpp"

namespace warpnet::device {
namespace {

inline void check_dropout_sizes(const Sizes& s) {
  if (s.size() != 2 || s[0] < 0 || s[0] > INT32_MAX || s[1] < 0 || s[1] >= 1000000)
    fail("dropout: sizes are {n, p_millionths}: 0 <= n < 2^31, 0 <= p_millionths < 1000000");
}
inline int64_t dropout_n(const Sizes& s) { return s[0]; }
// p in [0, 1): the double nearest p_millionths / 10^6, the same on every machine.
inline double dropout_p(const Sizes& s) { return double(s[1]) / 1e6; }

}  // namespace
}  // namespace warpnet::device
