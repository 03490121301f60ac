// OpenBLAS for `warpnet bench`, opened when the bench first asks for it
// rather than linked: only a benchmark peer (README), and a linked OpenBLAS
// breaks the program.
//
// Why not linked: the emulator's __shared__ arrays are thread_locals
// (src/simt/cuda.hpp), about 10 MB of static TLS in warpnet, which glibc
// carves out of every thread's stack. simt/stacks.cpp grows the default
// stack of new threads to hold it, at the program's static initialization.
// A linked OpenBLAS starts its worker threads in its own constructor, which
// runs before that, so they got a stack of the TLS plus 16 KiB and its
// SGEMM kernels overflowed it (`warpnet bench matmul` died of SIGSEGV with
// two threads). Opened from main's code, its threads start on grown stacks.
#pragma once
#include <string>

#if WARPNET_HAS_OPENBLAS
#include <cblas.h>
#endif

namespace warpnet::cli {

#if WARPNET_HAS_OPENBLAS
// The few OpenBLAS entry points the bench calls, as cblas.h declares them.
struct OpenBlas {
  decltype(&cblas_sgemm) sgemm;
  decltype(&openblas_set_num_threads) set_num_threads;
  decltype(&openblas_get_corename) corename;
  decltype(&openblas_get_config) config;
};
#else
struct OpenBlas;
#endif

// The library, opened on the first call; nullptr when this build has no
// OpenBLAS or it cannot be opened, with the reason in `why`.
const OpenBlas* open_openblas(std::string& why);

}  // namespace warpnet::cli
