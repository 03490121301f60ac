// warpnet info: how this binary was built and what machine it runs on.
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "cli/commands.hpp"
#include "cli/machine.hpp"
#include "core/build_info.hpp"
#include "datasets/idx.hpp"
#include "device/cuda/gpu.hpp"
#include "device/registry.hpp"

namespace warpnet::cli {

namespace {

// Every registered kernel, op by op: what `train --kernels` and `trace` take,
// and where this build can run each: a build without the CUDA toolkit has no
// GPU copy, so there the emulator alone.
void print_kernels() {
  const std::vector<const device::Kernel*> emulated = device::kernels(device::Copy::emulator);
  std::vector<const device::Kernel*> all = emulated;
  std::set<std::string> on_gpu;  // the ids of the CUDA copy
  // Versions only the CUDA copy has (version 0: the vendor libraries).
  for (const device::Kernel* k : device::kernels(device::Copy::cuda)) {
    on_gpu.insert(k->id());
    if (k->version == 0) all.push_back(k);
  }
  if (on_gpu.empty())
    std::printf("(this build has no GPU kernels: it was built without the CUDA toolkit; the emulator runs them)\n");
  std::stable_sort(all.begin(), all.end(), [](auto* a, auto* b) {
    return a->op != b->op ? a->op < b->op : a->version < b->version;
  });
  size_t width = 0;
  for (const device::Kernel* k : all) width = std::max(width, k->id().size());
  std::string op;
  for (const device::Kernel* k : all) {
    if (k->op != op) {
      op = k->op;
      std::printf("%s (%s)\n", op.c_str(), device::describe_sizes(device::op(op), device::op(op).defaults).c_str());
    }
    const bool emu = k->copy != device::Copy::cuda && k->emulator, gpu = on_gpu.contains(k->id());
    const char* where = emu ? (gpu ? "emu and gpu" : "emu") : (gpu ? "gpu only" : "gpu builds");
    std::printf("  %-*s  %-11s  %s\n", int(width), k->id().c_str(), where, k->precision.c_str());
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "Show the build configuration, CPU features, CUDA toolkit and GPUs");
  auto list_kernels = std::make_shared<bool>(false);
  cmd->add_flag("--kernels", *list_kernels, "List every registered kernel version, op by op, and stop");
  cmd->callback([list_kernels] {
    if (*list_kernels) return print_kernels();
    std::printf("warpnet %s (%s, %s%s)\n", build::version, build::build_type, build::compiler,
                build::native ? ", -march=native" : "");
    const CpuInfo cpu = read_cpuinfo();
    std::printf("cpu: %s, %u hardware threads, OpenMP up to %d threads\n", cpu.model.c_str(),
                std::thread::hardware_concurrency(), omp_get_max_threads());
    std::string features;
    for (const char* f : {"avx2", "fma", "f16c", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16"})
      if (cpu.flags.count(f)) features += std::string(features.empty() ? "" : " ") + f;
    std::printf("cpu features: %s\n", features.empty() ? "(none of the wide SIMD sets)" : features.c_str());
    std::printf("eigen %d.%d.%d, SIMD in use: %s\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
                Eigen::SimdInstructionSetsInUse());
    if (build::cuda_toolkit)
      std::printf("cuda toolkit: nvcc %s, architectures %s\n", build::cuda_version, build::cuda_architectures);
    else
      std::printf("cuda toolkit: not found at build time (the emulator runs kernels instead)\n");
    const device::gpu::Listing listing = device::gpu::list();
    if (listing.gpus.empty()) std::printf("gpu: none (%s)\n", listing.why_none.c_str());
    for (const device::gpu::Info& g : listing.gpus)
      std::printf("gpu: %s, sm_%d%d, %d SMs, %.1f GiB\n", g.name.c_str(), g.cc_major, g.cc_minor, g.multiprocessors,
                  g.memory_gib);
    std::printf("fashion-mnist: %s\n", data::fashion_mnist_dir().c_str());
  });
}

}  // namespace warpnet::cli
