// Asks the CUDA runtime which GPUs this process can use, when the build has
// the toolkit. No driver (as on CI) is a normal answer, not an error.
#pragma once
#include <string>
#include <vector>

namespace warpnet::cli {

struct GpuInfo {
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  double memory_gib = 0;
};

struct GpuProbe {
  bool toolkit = false;     // built with the CUDA toolkit
  std::string status;       // why no GPU is listed, when none is
  std::vector<GpuInfo> gpus;
};

GpuProbe probe_gpus();

}  // namespace warpnet::cli
