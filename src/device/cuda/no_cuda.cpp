// gpu.hpp in a build without the CUDA toolkit: there is no GPU to use, and
// probe() says so; nothing else may be called (a Problem cannot be made).
#include "device/cuda/gpu.hpp"

namespace warpnet::device::gpu {

Info probe() {
  Info info;
  info.why_not = "no usable GPU: warpnet was built without the CUDA toolkit (nvcc not found by CMake)";
  return info;
}

Listing list() { return Listing{{}, probe().why_not}; }

struct Problem::Impl {};

Problem::Problem(const Kernel& kernel, const Sizes&, const std::vector<Tensor>&) {
  throw Failure(cat(kernel.id(), ": warpnet was built without the CUDA toolkit"), false);
}
Problem::~Problem() = default;
double Problem::run(const Kernel&, double) { return 0; }
std::vector<Tensor> Problem::outputs() const { return {}; }
std::vector<double> Problem::time(const Kernel&, int, int, int, double, double) { return {}; }

ProfilerPause::ProfilerPause() = default;
ProfilerPause::~ProfilerPause() = default;

double copy_bandwidth_gbps(size_t, int) { throw Failure("warpnet was built without the CUDA toolkit", false); }

std::vector<Tensor> run(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs,
                        double timeout_s) {
  Problem problem(kernel, sizes, inputs);
  problem.run(kernel, timeout_s);
  return problem.outputs();
}

}  // namespace warpnet::device::gpu
