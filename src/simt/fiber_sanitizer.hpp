// AddressSanitizer assumes each OS thread runs on one stack; the emulator's
// fibers switch stacks under it. Its fiber API, called before and after every
// switch, tells it which stack is current so its bookkeeping (fake frames,
// no-return handling when an exception is thrown on a fiber) stays right.
// Under the asan preset these call it; in every other build they are empty.
#pragma once
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace warpnet::simt {

// Before switching to the stack [bottom, bottom+size). `fake_stack` saves this
// side's fake frames; null when this side is ending for good.
inline void asan_start_switch(void** fake_stack, const void* bottom, size_t size) {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#endif
}

// First thing after a switch lands; reports the stack that was left.
inline void asan_finish_switch(void* fake_stack, const void** bottom_old, size_t* size_old) {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(fake_stack, bottom_old, size_old);
#endif
}

// A pooled stack handed to a new fiber may carry poison from the last one.
inline void asan_unpoison(const void* bottom, size_t size) {
#if defined(__SANITIZE_ADDRESS__)
  __asan_unpoison_memory_region(bottom, size);
#endif
}

}  // namespace warpnet::simt
