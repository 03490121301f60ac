// What the running executable's own symbol table tells the emulator: kernel
// names, each kernel's __shared__ variables (function-local thread_locals,
// with their sizes), and the source line of an instruction (via addr2line,
// for error messages). Without a symbol table it degrades to addresses.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace warpnet::simt {

struct SharedVariable {
  std::string name;  // "As", from sgemm_tiled<16>(...)::As
  size_t offset;     // within this thread's TLS block
  size_t bytes;
};

// "sgemm_tiled<16>" for the function at `address`.
std::string function_name(const void* address);

// The __shared__ variables declared in this kernel's body.
std::vector<SharedVariable> kernel_shared_variables(const void* kernel);

// The TLS offsets of the guard variables of those of them that have a dynamic
// initializer (arrays of a class type): the kernel reads a guard's first byte
// on entry (and the first lane on a worker sets it) to run the initializer once
// per OS thread.
std::vector<size_t> kernel_guard_variables(const void* kernel);

// The calling OS thread's TLS block: [begin, begin + bytes).
struct TlsBlock {
  char* begin;
  size_t bytes;
};
TlsBlock this_thread_tls();

// Whether an address lies in the executable's own image (its globals,
// __constant__ and __device__ variables, read-only tables).
bool in_program_image(uintptr_t address);

// "byte 4 of `histogram` (a 40-byte __device__ variable)" for an address in
// the image, from its symbol; "a __device__ variable" without one.
std::string describe_variable(uintptr_t address);

// "kernels/matmul/01_naive.cu:31 (sgemm_naive)" or "sgemm_naive+0x4c".
std::string describe_code(const void* pc);

}  // namespace warpnet::simt
