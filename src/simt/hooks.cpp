// The callbacks GCC's kernel-address instrumentation calls before every load
// and store of a traced kernel (see warpnet_simt_traced in CMakeLists.txt).
// Outside a kernel, e.g. the host code of an instrumented file, they return at once.
#include "simt/block.hpp"
#include "simt/checker.hpp"
#include "simt/stepper.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {
namespace {

inline void on_access(uintptr_t address, size_t bytes, bool write, const void* pc) {
  Lane* lane = current_lane;
  if (!lane || LibraryScope::inside()) return;
  Touched touched;
  {
    LibraryScope scope;
    touched = current_block->checker().access(*lane, address, bytes, write, pc);
  }
  // Held outside the scope: the other lanes run while this one is parked.
  Stepper* stepper = active_stepper();
  if (stepper && touched.device && stepper->watches(*current_block, lane->warp))
    stepper->hold(*current_block, *lane, touched, address, bytes, write, pc);
}

}  // namespace

thread_local bool LibraryScope::active = false;

void note_atomic(const void* address, size_t bytes) {
  const Lane* lane = current_lane;
  if (!lane || LibraryScope::inside()) return;
  LibraryScope scope;
  // Only kernels compiled traced have a checker; an untraced kernel's atomics go unchecked.
  if (Checker* checker = current_block->checker_if_traced())
    checker->atomic(*lane, reinterpret_cast<uintptr_t>(address), bytes);
}

}  // namespace warpnet::simt

using warpnet::simt::on_access;

// The return address is the traced instruction: it identifies the access
// across lanes and names its source line.
#define WARPNET_ACCESS_HOOKS(n)                                                                       \
  extern "C" void __asan_load##n##_noabort(uintptr_t a) { on_access(a, n, false, __builtin_return_address(0)); } \
  extern "C" void __asan_store##n##_noabort(uintptr_t a) { on_access(a, n, true, __builtin_return_address(0)); }
WARPNET_ACCESS_HOOKS(1)
WARPNET_ACCESS_HOOKS(2)
WARPNET_ACCESS_HOOKS(4)
WARPNET_ACCESS_HOOKS(8)
WARPNET_ACCESS_HOOKS(16)
#undef WARPNET_ACCESS_HOOKS

extern "C" void __asan_loadN_noabort(uintptr_t a, size_t n) { on_access(a, n, false, __builtin_return_address(0)); }
extern "C" void __asan_storeN_noabort(uintptr_t a, size_t n) { on_access(a, n, true, __builtin_return_address(0)); }
// Emitted before calls that never return (throw); there is no shadow stack to clean.
extern "C" void __asan_handle_no_return() {}
// Bracket a file's dynamic initializers (ASan's init-order check); nothing to do.
extern "C" void __asan_before_dynamic_init(const char*) {}
extern "C" void __asan_after_dynamic_init() {}
