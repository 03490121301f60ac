// How library code reports memory accesses the compiler does not instrument
// (atomics): to the checker of a traced block, or nowhere.
#pragma once
#include <cstddef>

namespace warpnet::simt {

// `pc`: the kernel instruction that called the atomic, for messages.
// `block_scope`: an atomic of the _block family (atomicAdd_block...), atomic
// among the threads of its block only. `global_only`: for an atomic the PTX
// ISA allows on global memory only (atom with a vector type: the float2 and
// float4 adds), its name, for the error a shared address gets; else null.
void note_atomic(const void* address, size_t bytes, const void* pc, bool block_scope = false,
                 const char* global_only = nullptr);

// Marks emulator code running on a lane's fiber. A traced file's copies of
// inline library functions (std::string's, say) may be the ones the linker
// keeps for the whole program, so the emulator's own work can reach the
// access callbacks; inside this scope they ignore it.
// Always inlined: a traced file's out-of-line copy would report its own
// thread_local flag to the callbacks that ask it (the -fsanitize=thread
// instrumentation sees thread_locals), and they would ask it again.
class LibraryScope {
 public:
  [[gnu::always_inline]] LibraryScope() : outer_(active) { active = true; }
  [[gnu::always_inline]] ~LibraryScope() { active = outer_; }
  LibraryScope(const LibraryScope&) = delete;
  LibraryScope& operator=(const LibraryScope&) = delete;
  [[gnu::always_inline]] static bool inside() { return active; }

 private:
  static thread_local bool active;
  bool outer_;
};

}  // namespace warpnet::simt
