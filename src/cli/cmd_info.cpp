// warpnet info: how this binary was built and what machine it runs on.
#include <omp.h>

#include <Eigen/Core>
#include <cstdio>
#include <thread>

#include "cli/commands.hpp"
#include "cli/gpu_probe.hpp"
#include "cli/machine.hpp"
#include "core/build_info.hpp"
#include "datasets/idx.hpp"

namespace warpnet::cli {


void add_info_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "Show the build configuration, CPU features, CUDA toolkit and GPUs");
  cmd->callback([] {
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
    const GpuProbe probe = probe_gpus();
    if (probe.gpus.empty()) std::printf("gpu: none (%s)\n", probe.status.c_str());
    for (const GpuInfo& g : probe.gpus)
      std::printf("gpu: %s, sm_%d%d, %d SMs, %.1f GiB\n", g.name.c_str(), g.compute_major, g.compute_minor,
                  g.multiprocessors, g.memory_gib);
    std::printf("fashion-mnist: %s\n", data::fashion_mnist_dir().c_str());
  });
}

}  // namespace warpnet::cli
