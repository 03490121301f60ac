// The callbacks GCC's thread-sanitizer instrumentation calls before every load
// and store of a traced kernel (see warpnet_simt_traced in CMakeLists.txt).
// Outside a kernel, e.g. the host code of an instrumented file, they return at once.
#include "simt/block.hpp"
#include "simt/checker.hpp"
#include "simt/device.hpp"
#include "simt/stepper.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {
namespace {

inline void on_access(uintptr_t address, size_t bytes, bool write, const void* pc, bool strong = false) {
  Lane* lane = current_lane;
  if (!lane || LibraryScope::inside()) return;
  Touched touched;
  {
    LibraryScope scope;
    touched = current_block->checker().access(*lane, address, bytes, write, pc, strong);
  }
  // Held outside the scope: the other lanes run while this one is parked.
  Stepper* stepper = active_stepper();
  if (stepper && touched.device && stepper->watches(*current_block, lane->warp))
    stepper->hold(*current_block, *lane, touched, address, bytes, write, pc);
}

// An access GCC emitted as naturally aligned (the aligned hooks below; it
// calls the unaligned ones where it cannot know) at an address that is not:
// on a GPU every access must be aligned to its size, or the kernel stops
// with cudaErrorMisalignedAddress (a float4 read one float into a buffer).
inline void check_alignment(uintptr_t address, size_t bytes, bool write, const void* pc) {
  if (address % bytes == 0 || !current_lane || LibraryScope::inside()) return;
  misaligned_access_at(write ? "a store" : "a load", pc, reinterpret_cast<const void*>(address), unsigned(bytes));
}

}  // namespace

thread_local bool LibraryScope::active = false;

template <unsigned Width>
void traced_read(const void* address, size_t bytes) {
  on_access(reinterpret_cast<uintptr_t>(address), bytes, false, __builtin_return_address(0));
}
template void traced_read<4>(const void*, size_t);
template void traced_read<8>(const void*, size_t);
template void traced_read<16>(const void*, size_t);

void note_atomic(const void* address, size_t bytes, const void* pc, bool block_scope, const char* global_only) {
  const Lane* lane = current_lane;
  if (!lane || LibraryScope::inside()) return;
  LibraryScope scope;
  current_block->count_atomic();
  // Only kernels compiled traced have a checker; an untraced kernel's atomics go unchecked.
  if (Checker* checker = current_block->checker_if_traced())
    checker->atomic(*lane, reinterpret_cast<uintptr_t>(address), bytes, pc, block_scope, global_only);
}

}  // namespace warpnet::simt

using warpnet::simt::check_alignment;
using warpnet::simt::on_access;

// GCC's -fsanitize=thread instrumentation (ThreadSanitizer's callback ABI,
// libsanitizer/tsan/tsan_interface.h; no TSan runtime is linked). It calls a
// hook before every load and store, reads and writes apart, with no
// per-basic-block deduplication: `s[i] += x` is a read4 and a write4. The
// return address is the traced instruction: it identifies the access across
// lanes and names its source line.
#define WARPNET_ACCESS_HOOKS(n)                                                                              \
  extern "C" void __tsan_read##n(void* a) {                                                                  \
    check_alignment(uintptr_t(a), n, false, __builtin_return_address(0));                                    \
    on_access(uintptr_t(a), n, false, __builtin_return_address(0));                                          \
  }                                                                                                          \
  extern "C" void __tsan_write##n(void* a) {                                                                 \
    check_alignment(uintptr_t(a), n, true, __builtin_return_address(0));                                     \
    on_access(uintptr_t(a), n, true, __builtin_return_address(0));                                           \
  }                                                                                                          \
  extern "C" void __tsan_unaligned_read##n(void* a) {                                                        \
    on_access(uintptr_t(a), n, false, __builtin_return_address(0));                                          \
  }                                                                                                          \
  extern "C" void __tsan_unaligned_write##n(void* a) {                                                       \
    on_access(uintptr_t(a), n, true, __builtin_return_address(0));                                           \
  }                                                                                                          \
  extern "C" void __tsan_volatile_read##n(void* a) {                                                         \
    on_access(uintptr_t(a), n, false, __builtin_return_address(0), true);                                    \
  }                                                                                                          \
  extern "C" void __tsan_volatile_write##n(void* a) {                                                        \
    on_access(uintptr_t(a), n, true, __builtin_return_address(0), true);                                     \
  }
WARPNET_ACCESS_HOOKS(1)
WARPNET_ACCESS_HOOKS(2)
WARPNET_ACCESS_HOOKS(4)
WARPNET_ACCESS_HOOKS(8)
WARPNET_ACCESS_HOOKS(16)
#undef WARPNET_ACCESS_HOOKS

// Other sizes (float3, structs, bit-fields, unaligned memcpy): a range.
extern "C" void __tsan_read_range(void* a, unsigned long n) { on_access(uintptr_t(a), n, false, __builtin_return_address(0)); }
extern "C" void __tsan_write_range(void* a, unsigned long n) { on_access(uintptr_t(a), n, true, __builtin_return_address(0)); }

// A traced file's constructor calls __tsan_init; function entry and exit are
// off (--param tsan-instrument-func-entry-exit=0) but defined should a file
// be compiled without that param. Vtable pointers are the emulator's business.
extern "C" void __tsan_init() {}
extern "C" void __tsan_func_entry(void*) {}
extern "C" void __tsan_func_exit() {}
extern "C" void __tsan_vptr_update(void**, void*) {}
extern "C" void __tsan_vptr_read(void**) {}

// std::atomic and __atomic/__sync builtins in a traced file become these calls:
// they must do the operation. Every order is done as seq_cst (never weaker than
// asked for). Kernels' CUDA atomics are out of line (atomics.cpp), so these
// are library code (shared_ptr counts, std::atomic members), not checked.
#define WARPNET_TSAN_ATOMICS(bits, T)                                                                        \
  extern "C" T __tsan_atomic##bits##_load(const volatile T* a, int) { return __atomic_load_n(a, __ATOMIC_SEQ_CST); } \
  extern "C" void __tsan_atomic##bits##_store(volatile T* a, T v, int) { __atomic_store_n(a, v, __ATOMIC_SEQ_CST); } \
  extern "C" T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                                    \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                      \
  }                                                                                                          \
  extern "C" T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); } \
  extern "C" T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); } \
  extern "C" T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); } \
  extern "C" T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }   \
  extern "C" T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); } \
  extern "C" T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int) {                                  \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                      \
  }                                                                                                          \
  extern "C" int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* expected, T v, int, int) {  \
    return __atomic_compare_exchange_n(a, expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);           \
  }                                                                                                          \
  extern "C" int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* expected, T v, int, int) {    \
    return __atomic_compare_exchange_n(a, expected, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);            \
  }                                                                                                          \
  extern "C" T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T expected, T v, int, int) {       \
    __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                 \
    return expected;                                                                                         \
  }
WARPNET_TSAN_ATOMICS(8, char)
WARPNET_TSAN_ATOMICS(16, short)
WARPNET_TSAN_ATOMICS(32, int)
WARPNET_TSAN_ATOMICS(64, long)
#undef WARPNET_TSAN_ATOMICS
extern "C" void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
extern "C" void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
