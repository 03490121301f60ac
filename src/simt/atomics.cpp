#include "simt/atomics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "simt/device.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {
namespace {

// Blocks on other workers may touch the same word, so these are real atomics;
// lanes of one block take turns on one OS thread and cannot interleave inside one.
// `pc`: the kernel's call, which messages name (__builtin_return_address of the atomic).
template <class T, class Update>
T update(T* address, const void* pc, Update next) {
  // A GPU faults (cudaErrorMisalignedAddress); here the word would be updated
  // across two, silently wrong, and std::atomic_ref would be undefined.
  if (reinterpret_cast<uintptr_t>(address) % sizeof(T) != 0) misaligned_access_at("an atomic", pc, address, sizeof(T));
  note_atomic(address, sizeof(T), pc);
  std::atomic_ref<T> word(*address);
  T old = word.load(std::memory_order_relaxed);
  while (!word.compare_exchange_weak(old, next(old), std::memory_order_relaxed)) {
  }
  return old;
}

// atom.add.f32 flushes subnormal inputs and results to zero of the same sign
// (PTX ISA, "atom"), whatever the kernel's -ftz setting; the f64 add keeps them.
float flushed(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

}  // namespace
}  // namespace warpnet::simt

using warpnet::simt::flushed;
using warpnet::simt::update;

#define WARPNET_ATOMIC_DEF(name, T, expr)                                                                    \
  T name(T* address, T value) {                                                                              \
    return update(address, __builtin_return_address(0), [&](T old) -> T { return expr; });                   \
  }
#define WARPNET_ATOMIC_INTEGERS(name, expr)          \
  WARPNET_ATOMIC_DEF(name, int, expr)                \
  WARPNET_ATOMIC_DEF(name, unsigned int, expr)       \
  WARPNET_ATOMIC_DEF(name, unsigned long long, expr)

WARPNET_ATOMIC_INTEGERS(atomicAdd, old + value)
WARPNET_ATOMIC_DEF(atomicAdd, float, flushed(flushed(old) + flushed(value)))
WARPNET_ATOMIC_DEF(atomicAdd, double, old + value)
WARPNET_ATOMIC_DEF(atomicSub, int, old - value)
WARPNET_ATOMIC_DEF(atomicSub, unsigned int, old - value)
WARPNET_ATOMIC_INTEGERS(atomicMax, std::max(old, value))
WARPNET_ATOMIC_DEF(atomicMax, long long, std::max(old, value))
WARPNET_ATOMIC_INTEGERS(atomicMin, std::min(old, value))
WARPNET_ATOMIC_DEF(atomicMin, long long, std::min(old, value))
WARPNET_ATOMIC_INTEGERS(atomicExch, value)
WARPNET_ATOMIC_DEF(atomicExch, float, value)
WARPNET_ATOMIC_INTEGERS(atomicAnd, old & value)
WARPNET_ATOMIC_INTEGERS(atomicOr, old | value)
WARPNET_ATOMIC_INTEGERS(atomicXor, old ^ value)

int atomicCAS(int* address, int compare, int value) {
  return update(address, __builtin_return_address(0),
                [&](int old) { return old == compare ? value : old; });
}
unsigned int atomicCAS(unsigned int* address, unsigned int compare, unsigned int value) {
  return update(address, __builtin_return_address(0),
                [&](unsigned int old) { return old == compare ? value : old; });
}
unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare, unsigned long long value) {
  return update(address, __builtin_return_address(0),
                [&](unsigned long long old) { return old == compare ? value : old; });
}
unsigned int atomicInc(unsigned int* address, unsigned int limit) {
  return update(address, __builtin_return_address(0),
                [&](unsigned int old) { return old >= limit ? 0u : old + 1; });
}
unsigned int atomicDec(unsigned int* address, unsigned int limit) {
  return update(address, __builtin_return_address(0),
                [&](unsigned int old) { return (old == 0 || old > limit) ? limit : old - 1; });
}
