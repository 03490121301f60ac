// device::GraphRuntime with the CUDA runtime API: compiled by g++ against
// the emulator (Device::emu, in warpnet_device) and by nvcc against CUDA
// (Device::cuda, through cuda/graph_runtime.cu), the way every kernel
// registration is: one source, the same calls, two runtimes.
//
// The capture goes on a stream of its own (CUDA refuses to capture the
// legacy default stream), made the thread's launch stream while capturing
// and replayed on. It is a blocking stream: ordinary copies and launches on
// the legacy stream before and after a replay stay ordered with it. The
// capture mode is relaxed, so the step may cudaMalloc (a fresh block for the
// graph's pool, device/graph.hpp); a copy to or from the host, or waiting
// for the device, still ends it with an error. A programmatic capture
// records its launches as programmatic dependent launches
// (warpnet::programmatic_launches, on while capturing).
#include <memory>
#include <utility>

#include "core/error.hpp"
#include "device/graph.hpp"
#include "device/kernels/copy.hpp"  // check_cuda
#include "kernels/common/cuda_compat.hpp"

namespace warpnet::device {
namespace {

#if defined(__CUDACC__)
constexpr Device kGraphDevice = Device::cuda;
#else
constexpr Device kGraphDevice = Device::emu;
#endif

void check(cudaError_t error, const char* call) { check_cuda(error, "graph on ", name_of(kGraphDevice), ": ", call); }

class ApiGraph final : public GraphRuntime {
 public:
  ApiGraph() { check(cudaStreamCreate(&stream_), "cudaStreamCreate"); }
  ~ApiGraph() override {
    drop();
    cudaStreamDestroy(stream_);
  }

  void begin_capture(bool programmatic) override {
    drop();
    check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
    previous_ = std::exchange(launch_stream(), stream_);
    was_programmatic_ = std::exchange(programmatic_launches(), programmatic);
  }

  size_t end_capture() override {
    launch_stream() = previous_;
    programmatic_launches() = was_programmatic_;
    check(cudaStreamEndCapture(stream_, &graph_), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
    size_t nodes = 0;
    check(cudaGraphGetNodes(graph_, nullptr, &nodes), "cudaGraphGetNodes");
    return nodes;
  }

  void abandon_capture() override {
    launch_stream() = previous_;
    programmatic_launches() = was_programmatic_;
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream_, &partial);  // invalidated, most likely: no graph
    if (partial) cudaGraphDestroy(partial);
    cudaGetLastError();  // the step's own error is the one to report
  }

  // Not waited for: the host goes on to queue the next step while this one
  // runs (nn/graphed_step.hpp). The emulator runs the graph inside
  // cudaGraphLaunch and returns a failing kernel's error from it.
  void replay() override { check(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch"); }

 private:
  void drop() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr, graph_ = nullptr;
  }

  cudaStream_t stream_ = nullptr;
  cudaStream_t previous_ = nullptr;
  bool was_programmatic_ = false;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

const bool registered = [] {
  register_graph_runtime(kGraphDevice, []() -> std::unique_ptr<GraphRuntime> { return std::make_unique<ApiGraph>(); });
  return true;
}();

}  // namespace
}  // namespace warpnet::device
