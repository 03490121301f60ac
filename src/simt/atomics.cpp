#include "simt/atomics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "simt/device.hpp"
#include "simt/low_precision.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {
namespace {

// A GPU faults on an atomic not aligned to its size
// (cudaErrorMisalignedAddress); here the word would be updated across two,
// silently wrong, and std::atomic_ref would be undefined. Then the checker
// and the trace see one atomic access of `bytes`, by the kernel's call `pc`
// (__builtin_return_address of the atomic), which messages name.
void note_aligned_atomic(const void* address, size_t bytes, const void* pc, bool block_scope = false,
                         const char* global_only = nullptr) {
  if (reinterpret_cast<uintptr_t>(address) % bytes != 0) misaligned_access_at("an atomic", pc, address, unsigned(bytes));
  note_atomic(address, bytes, pc, block_scope, global_only);
}

// Blocks on other workers may touch the same word, so these are real atomics;
// lanes of one block take turns on one OS thread and cannot interleave inside one.
template <class T, class Update>
T update_word(T* address, Update next) {
  std::atomic_ref<T> word(*address);
  T old = word.load(std::memory_order_relaxed);
  while (!word.compare_exchange_weak(old, next(old), std::memory_order_relaxed)) {
  }
  return old;
}

// Every scope is the device's here: a _block atomic differs only in what the
// traced build's checker makes of it (a plain write, to the other blocks),
// and a _system one is a device one, no host memory being mapped.
template <class T, class Update>
T update(T* address, const void* pc, bool block_scope, Update next) {
  note_aligned_atomic(address, sizeof(T), pc, block_scope);
  return update_word(address, next);
}

// One 16-bit float F at `bits` plus `value`, rounded once (the sum of two
// is exact in double), as atom.add.noftz.{f16,bf16}. Returns the old value.
template <class F, class Raw>
F add_16_bit(unsigned short* bits, F value) {
  const double v = float(value);
  const unsigned short old =
      update_word(bits, [&](unsigned short o) { return Raw(F(double(float(F(Raw{o}))) + v)).x; });
  return F(Raw{old});
}

// atom.add.f32 flushes subnormal inputs and results to zero of the same sign
// (PTX ISA, "atom"), whatever the kernel's -ftz setting; the f64 add keeps them.
float flushed(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

}  // namespace
}  // namespace warpnet::simt

using warpnet::simt::add_16_bit;
using warpnet::simt::flushed;
using warpnet::simt::note_aligned_atomic;
using warpnet::simt::update;
using warpnet::simt::update_word;

// name, name_block and name_system of one type: `next` computes the new
// value from `old` and the call's other arguments (PARAMS, ARGS).
#define WARPNET_ATOMIC_SCOPES(R, name, PARAMS, next)                                                            \
  R name PARAMS { return update(address, __builtin_return_address(0), false, [&](R old) -> R { return next; }); } \
  R name##_block PARAMS {                                                                                       \
    return update(address, __builtin_return_address(0), true, [&](R old) -> R { return next; });               \
  }                                                                                                             \
  R name##_system PARAMS {                                                                                      \
    return update(address, __builtin_return_address(0), false, [&](R old) -> R { return next; });              \
  }
#define WARPNET_ATOMIC_DEF(name, T, expr) WARPNET_ATOMIC_SCOPES(T, name, (T * address, T value), expr)
#define WARPNET_ATOMIC_INTEGERS(name, expr)          \
  WARPNET_ATOMIC_DEF(name, int, expr)                \
  WARPNET_ATOMIC_DEF(name, unsigned int, expr)       \
  WARPNET_ATOMIC_DEF(name, unsigned long long, expr)
#define WARPNET_ATOMIC_CAS(T) \
  WARPNET_ATOMIC_SCOPES(T, atomicCAS, (T * address, T compare, T value), old == compare ? value : old)

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
WARPNET_ATOMIC_CAS(int)
WARPNET_ATOMIC_CAS(unsigned int)
WARPNET_ATOMIC_CAS(unsigned long long)
WARPNET_ATOMIC_SCOPES(unsigned int, atomicInc, (unsigned int* address, unsigned int limit),
                      old >= limit ? 0u : old + 1)
WARPNET_ATOMIC_SCOPES(unsigned int, atomicDec, (unsigned int* address, unsigned int limit),
                      (old == 0 || old > limit) ? limit : old - 1)
#undef WARPNET_ATOMIC_CAS
#undef WARPNET_ATOMIC_INTEGERS
#undef WARPNET_ATOMIC_DEF
#undef WARPNET_ATOMIC_SCOPES

unsigned short int atomicCAS(unsigned short int* address, unsigned short int compare, unsigned short int value) {
  return update(address, __builtin_return_address(0), false,
                [&](unsigned short int old) { return old == compare ? value : old; });
}

// The 16-bit floats and the vectors: see atomics.hpp.
__half atomicAdd(__half* address, __half value) {
  note_aligned_atomic(address, 2, __builtin_return_address(0));
  return add_16_bit<__half, __half_raw>(reinterpret_cast<unsigned short*>(address), value);
}
__nv_bfloat16 atomicAdd(__nv_bfloat16* address, __nv_bfloat16 value) {
  note_aligned_atomic(address, 2, __builtin_return_address(0));
  return add_16_bit<__nv_bfloat16, __nv_bfloat16_raw>(reinterpret_cast<unsigned short*>(address), value);
}
__half2 atomicAdd(__half2* address, __half2 value) {
  note_aligned_atomic(address, 4, __builtin_return_address(0));
  auto* halves = reinterpret_cast<unsigned short*>(address);
  return __halves2half2(add_16_bit<__half, __half_raw>(halves, __low2half(value)),
                        add_16_bit<__half, __half_raw>(halves + 1, __high2half(value)));
}
__nv_bfloat162 atomicAdd(__nv_bfloat162* address, __nv_bfloat162 value) {
  note_aligned_atomic(address, 4, __builtin_return_address(0));
  auto* halves = reinterpret_cast<unsigned short*>(address);
  return __halves2bfloat162(add_16_bit<__nv_bfloat16, __nv_bfloat16_raw>(halves, __low2bfloat16(value)),
                            add_16_bit<__nv_bfloat16, __nv_bfloat16_raw>(halves + 1, __high2bfloat16(value)));
}
float2 atomicAdd(float2* address, float2 value) {
  note_aligned_atomic(address, 8, __builtin_return_address(0), false, "float2 atomicAdd");
  const auto add = [](float v) { return [v](float old) { return flushed(flushed(old) + flushed(v)); }; };
  return {update_word(&address->x, add(value.x)), update_word(&address->y, add(value.y))};
}
float4 atomicAdd(float4* address, float4 value) {
  note_aligned_atomic(address, 16, __builtin_return_address(0), false, "float4 atomicAdd");
  const auto add = [](float v) { return [v](float old) { return flushed(flushed(old) + flushed(v)); }; };
  return {update_word(&address->x, add(value.x)), update_word(&address->y, add(value.y)),
          update_word(&address->z, add(value.z)), update_word(&address->w, add(value.w))};
}
