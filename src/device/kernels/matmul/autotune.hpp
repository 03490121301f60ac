// The matmul autotuner of kernels/matmul/10_autotuned.cu, for a benchmark
// harness on a real GPU. Defined only in the CUDA copy of the registrations
// (link warpnet_kernels_cuda); the emulator copies use the tuning table alone.
#pragma once
#include <string>
#include <vector>

#include "device/registry.hpp"

namespace warpnet::device {

struct MatmulTuning {
  std::string chosen;              // the winner, as the version's candidate_name gives it
  std::vector<std::string> names;  // every candidate, in the kernel file's order
  std::vector<double> ms;          // its mean time per launch; NaN where it could not be launched,
                                   // +infinity where it is not a candidate at these sizes (no split)
};

// Times every candidate tile shape of matmul/10_autotuned on `sizes` ({M, N,
// K[, trans_a, trans_b]}, uniform [-1, 1] inputs, fixed seed) with CUDA events
// on the current device, checks the output of each one that ran (every
// element finite, and against a CPU dot product within the op's tolerance:
// every element at small sizes, 256 sampled ones at large;
// gpu_timing::verify_candidate), and caches the fastest: from then on the registered matmul/10 launches
// it for these sizes. Throws Error naming the CUDA call or the wrong element.
MatmulTuning autotune_matmul(const Sizes& sizes);

}  // namespace warpnet::device
