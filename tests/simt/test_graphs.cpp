// Stream capture and CUDA graphs on the emulator: a capture records instead of
// running, each cudaGraphLaunch replays on what the buffers hold then, kernel
// arguments are frozen at capture, and what CUDA forbids during a capture is
// refused with CUDA's code and invalidates the capture.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "simt/allocations.hpp"
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/small_integers.hpp"

namespace {

// y = a*x + b, elementwise; x, y: (n)
__global__ void scale_add(const float* x, float* y, float a, float b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}

// out = in * in, elementwise; in, out: (n)
__global__ void square(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i];
}

// acc += in, elementwise; acc, in: (n)
__global__ void accumulate(float* acc, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += in[i];
}

// 37: not a multiple of the 32-thread blocks, so the last block is partial.
constexpr int kN = 37;
const dim3 kGrid(warpnet::ceil_div(kN, 32)), kBlock(32);

// Inputs are small integers, and a, b too: every value below is an integer
// under 2^24, exact in float, so results are compared for equality.
std::vector<float> scale_add_square(const std::vector<float>& x, float a, float b) {
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = (a * x[i] + b) * (a * x[i] + b);
  return out;
}

// A stream from cudaStreamCreate that, whatever a failing check left behind,
// ends its capture before it is destroyed (a capture left open would make the
// legacy stream unusable for the tests that follow).
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { REQUIRE(cudaStreamCreate(&s) == cudaSuccess); }
  ~Stream() {
    cudaStreamCaptureStatus status;
    if (cudaStreamIsCapturing(s, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
      cudaGraph_t graph = nullptr;
      if (cudaStreamEndCapture(s, &graph) == cudaSuccess) cudaGraphDestroy(graph);
    }
    cudaStreamDestroy(s);
    cudaGetLastError();
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return s; }
};

// Sends this thread's launch_kernel calls to `stream` while in scope.
struct LaunchStreamScope {
  explicit LaunchStreamScope(cudaStream_t stream) { warpnet::launch_stream() = stream; }
  ~LaunchStreamScope() { warpnet::launch_stream() = nullptr; }
};

cudaStreamCaptureStatus capture_status(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  REQUIRE(cudaStreamIsCapturing(stream, &status) == cudaSuccess);
  return status;
}

size_t node_count(cudaGraph_t graph) {
  size_t count = 0;
  REQUIRE(cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess);
  return count;
}

bool allocated(const void* p) { return warpnet::simt::find_allocation(p, 1).has_value(); }

}  // namespace

TEST_CASE("a captured graph runs only when launched, each time on what its buffers hold then") {
  // The pattern of a training step: pinned input -> device, kernels, device ->
  // pinned output, all in the graph; the host refills the pinned input between launches.
  float* host_in = nullptr;
  float* host_out = nullptr;
  REQUIRE(cudaMallocHost(&host_in, kN * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMallocHost(&host_out, kN * sizeof(float)) == cudaSuccess);
  DeviceBuffer<float> x(kN), y(kN), z(kN), acc(kN);
  Stream stream;
  const float a = 2.0f, b = 1.0f;

  cudaGraph_t graph = nullptr;
  {
    LaunchStreamScope scope(stream);
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    CHECK(capture_status(stream) == cudaStreamCaptureStatusActive);
    CHECK(cudaMemcpyAsync(x.get(), host_in, kN * sizeof(float), cudaMemcpyHostToDevice, stream) == cudaSuccess);
    CHECK(cudaMemsetAsync(acc.get(), 0, kN * sizeof(float), stream) == cudaSuccess);
    warpnet::launch_kernel(scale_add, kGrid, kBlock, 0, x.get(), y.get(), a, b, kN);
    warpnet::launch_kernel(square, kGrid, kBlock, 0, y.get(), z.get(), kN);
    warpnet::launch_kernel(accumulate, kGrid, kBlock, 0, acc.get(), z.get(), kN);
    warpnet::launch_kernel(accumulate, kGrid, kBlock, 0, acc.get(), z.get(), kN);
    CHECK(cudaMemcpyAsync(host_out, acc.get(), kN * sizeof(float), cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
    REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  }
  REQUIRE(graph != nullptr);
  CHECK(capture_status(stream) == cudaStreamCaptureStatusNone);
  CHECK(node_count(graph) == 7);
  // Nothing ran: fresh device memory is still poisoned (NaN).
  for (float v : y.download()) REQUIRE(std::isnan(v));

  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph) == cudaSuccess);
  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<float> input = small_integers(kN, seed);
    std::copy(input.begin(), input.end(), host_in);
    REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    // acc is reset by the memset node, then accumulates z twice.
    std::vector<float> expected = scale_add_square(input, a, b);
    for (float& e : expected) e *= 2.0f;
    CHECK(std::vector<float>(host_out, host_out + kN) == expected);
  }
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaFreeHost(host_in) == cudaSuccess);
  CHECK(cudaFreeHost(host_out) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("kernel arguments are frozen when captured: changing a variable later does not change the replay") {
  DeviceBuffer<float> x(small_integers(kN, 7)), y(kN), other(kN);
  Stream stream;
  float a = 2.0f;
  float* out = y.get();
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  {
    LaunchStreamScope scope(stream);
    warpnet::launch_kernel(scale_add, kGrid, kBlock, 0, x.get(), out, a, 0.0f, kN);
  }
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  // The host's variables change; the graph holds copies of their values at capture.
  a = 5.0f;
  out = other.get();
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
  std::vector<float> expected = small_integers(kN, 7);
  for (float& e : expected) e *= 2.0f;  // the a of the capture
  CHECK(y.download() == expected);
  for (float v : other.download()) CHECK(std::isnan(v));  // never written
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_CASE("cudaGraphGetNodes counts, and fills an array up to its capacity") {
  DeviceBuffer<float> x(kN), y(kN);
  Stream stream;
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  for (int i = 0; i < 3; ++i) warpnet::simt::launch_on(stream, square, kGrid, kBlock, 0, x.get(), y.get(), kN);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  CHECK(node_count(graph) == 3);
  cudaGraphNode_t nodes[5] = {};
  size_t count = 2;
  CHECK(cudaGraphGetNodes(graph, nodes, &count) == cudaSuccess);
  CHECK(count == 2);
  CHECK(nodes[0] != nullptr);
  CHECK(nodes[1] != nullptr);
  CHECK(nodes[2] == nullptr);
  count = 5;
  CHECK(cudaGraphGetNodes(graph, nodes, &count) == cudaSuccess);
  CHECK(count == 3);
  CHECK(nodes[2] != nullptr);
  CHECK(nodes[3] == nullptr);
  CHECK(nodes[4] == nullptr);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
}

TEST_CASE("what CUDA forbids during a capture fails with CUDA's code and invalidates the capture") {
  DeviceBuffer<float> x(kN), y(kN);
  std::vector<float> pageable(kN);
  struct Forbidden {
    const char* what;
    std::function<cudaError_t(cudaStream_t)> call;
    cudaError_t code;
    const char* message;  // a piece of the error message
  };
  const std::vector<Forbidden> forbidden = {
      {"a launch on the legacy stream",
       [&](cudaStream_t) {
         warpnet::launch_kernel(square, kGrid, kBlock, 0, x.get(), y.get(), kN);  // launch_stream() is nullptr
         return cudaGetLastError();
       },
       cudaErrorStreamCaptureImplicit, "a launch of kernel square uses the legacy stream"},
      {"synchronous cudaMemcpy", [&](cudaStream_t) { return cudaMemcpy(y.get(), x.get(), 4, cudaMemcpyDeviceToDevice); },
       cudaErrorStreamCaptureImplicit, "cudaMemcpy uses the legacy stream"},
      {"synchronous cudaMemset", [&](cudaStream_t) { return cudaMemset(y.get(), 0, 4); },
       cudaErrorStreamCaptureImplicit, "cudaMemset uses the legacy stream"},
      {"cudaDeviceSynchronize", [](cudaStream_t) { return cudaDeviceSynchronize(); },
       cudaErrorStreamCaptureUnsupported, "would wait for work that is only being recorded"},
      {"cudaStreamSynchronize of the capturing stream", [](cudaStream_t s) { return cudaStreamSynchronize(s); },
       cudaErrorStreamCaptureUnsupported, "nothing to wait for"},
      {"cudaMalloc in global mode",
       [](cudaStream_t) {
         void* p = nullptr;
         return cudaMalloc(&p, 64);
       },
       cudaErrorStreamCaptureUnsupported, "cudaMalloc while stream"},
      {"cudaMemcpyAsync from pageable host memory",
       [&](cudaStream_t s) {
         return cudaMemcpyAsync(x.get(), pageable.data(), kN * sizeof(float), cudaMemcpyHostToDevice, s);
       },
       cudaErrorStreamCaptureUnsupported, "neither device memory nor pinned host memory"},
      {"a launch with more threads per block than CUDA allows",
       [&](cudaStream_t s) {
         const LaunchStreamScope on(s);
         warpnet::launch_kernel(square, dim3(1), dim3(2048), 0, x.get(), y.get(), kN);
         return cudaGetLastError();
       },
       cudaErrorInvalidConfiguration, "block dimension x is 2048, the limit is 1024"},
  };
  for (const Forbidden& f : forbidden) {
    INFO(f.what);
    Stream stream;
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    warpnet::simt::launch_on(stream, square, kGrid, kBlock, 0, x.get(), y.get(), kN);  // captured, fine
    CHECK(f.call(stream) == f.code);
    CHECK(warpnet::simt::last_error_message().find(f.message) != std::string::npos);
    CHECK(warpnet::simt::last_error_message().find("the capture is invalidated") != std::string::npos);
    cudaGetLastError();
    CHECK(capture_status(stream) == cudaStreamCaptureStatusInvalidated);
    // Whatever follows on the stream fails until the capture is ended.
    CHECK_THROWS_WITH_AS(warpnet::simt::launch_on(stream, square, kGrid, kBlock, 0, x.get(), y.get(), kN),
                         doctest::Contains("its capture was invalidated"), warpnet::simt::LaunchError);
    cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(&stream);  // not null, to see it cleared
    CHECK(cudaStreamEndCapture(stream, &graph) == cudaErrorStreamCaptureInvalidated);
    CHECK(graph == nullptr);
    CHECK(warpnet::simt::last_error_message().find(f.message) != std::string::npos);  // names the first error
    cudaGetLastError();
    // The capture is over: the stream and the legacy stream work again.
    CHECK(capture_status(stream) == cudaStreamCaptureStatusNone);
    CHECK(cudaMemcpy(y.get(), x.get(), 4, cudaMemcpyDeviceToDevice) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
  }
}

TEST_CASE("cudaMalloc during capture: refused in global and thread-local mode, allowed in relaxed mode") {
  for (cudaStreamCaptureMode mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal}) {
    INFO("capture mode ", int(mode));
    Stream stream;
    REQUIRE(cudaStreamBeginCapture(stream, mode) == cudaSuccess);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 64) == cudaErrorStreamCaptureUnsupported);
    CHECK(p == nullptr);
    CHECK(capture_status(stream) == cudaStreamCaptureStatusInvalidated);
    cudaGetLastError();
  }
  {
    Stream stream;
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 64) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(capture_status(stream) == cudaStreamCaptureStatusActive);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
    CHECK(node_count(graph) == 0);  // cudaMalloc is not recorded
    cudaGraphDestroy(graph);
  }
  {
    // A thread may relax itself for a global capture (cudaThreadExchangeStreamCaptureMode).
    Stream stream;
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
    CHECK(mode == cudaStreamCaptureModeGlobal);  // the previous one
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 64) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);  // back to global
    CHECK(capture_status(stream) == cudaStreamCaptureStatusActive);
  }
  {
    // Another thread in global mode respects a global capture; a thread-local one does not.
    Stream stream;
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    cudaError_t other_thread = cudaErrorInvalidValue;  // overwritten by the thread
    std::thread([&] {
      void* p = nullptr;
      other_thread = cudaMalloc(&p, 64);
      cudaFree(p);
    }).join();
    CHECK(other_thread == cudaSuccess);
    CHECK(capture_status(stream) == cudaStreamCaptureStatusActive);
  }
  {
    Stream stream;
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    cudaError_t other_thread = cudaSuccess;
    std::thread([&] {
      void* p = nullptr;
      other_thread = cudaMalloc(&p, 64);
    }).join();
    CHECK(other_thread == cudaErrorStreamCaptureUnsupported);
    CHECK(capture_status(stream) == cudaStreamCaptureStatusInvalidated);
  }
}

TEST_CASE("cudaMallocAsync memory of a capture belongs to the graph: valid after cudaFreeAsync, until graph and exec go") {
  const std::vector<float> x0 = small_integers(kN, 11), x1 = small_integers(kN, 12);
  DeviceBuffer<float> x(x0), out(kN);
  Stream stream;
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  float* tmp = nullptr;
  REQUIRE(cudaMallocAsync(&tmp, kN * sizeof(float), stream) == cudaSuccess);
  warpnet::simt::launch_on(stream, scale_add, kGrid, kBlock, 0, x.get(), tmp, 3.0f, -1.0f, kN);
  warpnet::simt::launch_on(stream, square, kGrid, kBlock, 0, tmp, out.get(), kN);
  REQUIRE(cudaFreeAsync(tmp, stream) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  CHECK(node_count(graph) == 4);  // allocation, two kernels, free

  cudaGraphExec_t exec = nullptr, second = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph) == cudaSuccess);
  // CUDA: one exec at a time of a graph with memory nodes.
  CHECK(cudaGraphInstantiate(&second, graph) == cudaErrorInvalidValue);
  cudaGetLastError();
  REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
  CHECK(out.download() == scale_add_square(x0, 3.0f, -1.0f));
  x.upload(x1);
  REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
  CHECK(out.download() == scale_add_square(x1, 3.0f, -1.0f));

  // The graph owns tmp: cudaFree refuses it, and it outlives the graph while the exec lives.
  CHECK(cudaFree(tmp) == cudaErrorInvalidValue);
  CHECK(warpnet::simt::last_error_message().find("belongs to the graph") != std::string::npos);
  cudaGetLastError();
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(allocated(tmp));
  REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
  CHECK(out.download() == scale_add_square(x1, 3.0f, -1.0f));
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(!allocated(tmp));

  // Outside a capture they are cudaMalloc and cudaFree.
  void* p = nullptr;
  REQUIRE(cudaMallocAsync(&p, 64, stream) == cudaSuccess);
  CHECK(allocated(p));
  CHECK(cudaFreeAsync(p, stream) == cudaSuccess);
  CHECK(!allocated(p));
}

TEST_CASE("a launch on another stream runs at once while a stream captures") {
  // Streams from cudaStreamCreate are blocking streams: they wait for the
  // legacy stream, not for each other, so CUDA runs work sent to a stream
  // that is not capturing, and the capture goes on.
  const std::vector<float> input = small_integers(kN, 5);
  DeviceBuffer<float> x(input), y(kN), z(kN);
  Stream capturing, other;
  REQUIRE(cudaStreamBeginCapture(capturing, cudaStreamCaptureModeGlobal) == cudaSuccess);
  warpnet::simt::launch_on(capturing, square, kGrid, kBlock, 0, x.get(), z.get(), kN);
  warpnet::simt::launch_on(other, scale_add, kGrid, kBlock, 0, x.get(), y.get(), 1.0f, 0.0f, kN);
  CHECK(cudaMemcpyAsync(y.get(), y.get(), kN * sizeof(float), cudaMemcpyDeviceToDevice, other) == cudaSuccess);
  CHECK(capture_status(capturing) == cudaStreamCaptureStatusActive);
  CHECK(capture_status(other) == cudaStreamCaptureStatusNone);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(capturing, &graph) == cudaSuccess);
  CHECK(node_count(graph) == 1);
  CHECK(y.download() == input);                     // ran
  for (float v : z.download()) CHECK(std::isnan(v));  // only recorded
  cudaGraphDestroy(graph);
}

TEST_CASE("capture misuse: the legacy stream, nested or unmatched captures, the wrong thread") {
  Stream stream;
  CHECK(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph) == cudaErrorIllegalState);  // not capturing
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaErrorIllegalState);
  CHECK(capture_status(stream) == cudaStreamCaptureStatusActive);  // the refusals above leave it valid
  // Asking about the legacy stream is answered so, and invalidates nothing (CUDA documents it).
  cudaStreamCaptureStatus status;
  CHECK(cudaStreamIsCapturing(nullptr, &status) == cudaErrorStreamCaptureImplicit);
  CHECK(cudaStreamDestroy(stream) == cudaErrorIllegalState);
  // Begun in global mode: only the beginning thread may end it.
  cudaError_t other_thread = cudaSuccess;
  std::thread([&] { other_thread = cudaStreamEndCapture(stream, &graph); }).join();
  CHECK(other_thread == cudaErrorStreamCaptureWrongThread);
  CHECK(capture_status(stream) == cudaStreamCaptureStatusActive);
  // An event recorded in a capture stands for work not done: it cannot be timed.
  cudaEvent_t event;
  REQUIRE(cudaEventCreate(&event) == cudaSuccess);
  CHECK(cudaEventRecord(event, stream) == cudaSuccess);
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, event, event) == cudaErrorCapturedEvent);
  cudaEventDestroy(event);
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  // Launching a graph into a capture (a child graph in CUDA) is not emulated.
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  CHECK(cudaGraphLaunch(exec, stream) == cudaErrorNotSupported);
  // Relaxed: another thread may end it.
  cudaGraph_t second = nullptr;
  std::thread([&] { other_thread = cudaStreamEndCapture(stream, &second); }).join();
  CHECK(other_thread == cudaSuccess);
  CHECK(second != nullptr);
  cudaGraphDestroy(second);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaGetLastError();
  CHECK(cudaDeviceSynchronize() == cudaSuccess);  // refused calls are not faults: nothing sticky is left
}

TEST_CASE("a node that fails at replay: cudaGraphLaunch returns and records its error, later nodes do not run") {
  DeviceBuffer<float> x(small_integers(kN, 3)), y(kN);
  float* gone = nullptr;
  REQUIRE(cudaMalloc(&gone, kN * sizeof(float)) == cudaSuccess);
  Stream stream;
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  warpnet::simt::launch_on(stream, square, kGrid, kBlock, 0, x.get(), gone, kN);
  warpnet::simt::launch_on(stream, square, kGrid, kBlock, 0, x.get(), y.get(), kN);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph) == cudaSuccess);
  REQUIRE(cudaFree(gone) == cudaSuccess);  // node 0 now fails at replay
  CHECK(cudaGraphLaunch(exec, stream) == cudaErrorIllegalAddress);
  CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
  CHECK(warpnet::simt::last_error_message().find("node 0 of 2 (kernel square)") != std::string::npos);
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);  // a fault: taken by the next sync
  for (float v : y.download()) CHECK(std::isnan(v));           // node 1 never ran
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_CASE("a copy node whose buffer was freed after the capture faults at replay, as on a GPU") {
  float* gone = nullptr;
  REQUIRE(cudaMalloc(&gone, kN * sizeof(float)) == cudaSuccess);
  DeviceBuffer<float> y(kN);
  Stream stream;
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(y.get(), gone, kN * sizeof(float), cudaMemcpyDeviceToDevice, stream) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph) == cudaSuccess);
  REQUIRE(cudaFree(gone) == cudaSuccess);
  CHECK(cudaGraphLaunch(exec, stream) == cudaErrorIllegalAddress);
  CHECK(warpnet::simt::last_error_message().find("node 0 of 1 (memcpy of 148 bytes) failed: its source") !=
        std::string::npos);
  CHECK(warpnet::simt::last_error_message().find("no longer allocated") != std::string::npos);
  CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);  // a fault: it shows at the next sync too
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_CASE("a kernel node whose pointer argument's buffer was freed after the capture is an error at replay") {
  DeviceBuffer<float> x(small_integers(kN, 4));
  float* gone = nullptr;
  REQUIRE(cudaMalloc(&gone, kN * sizeof(float)) == cudaSuccess);
  Stream stream;
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  warpnet::simt::launch_on(stream, square, kGrid, kBlock, 0, x.get(), gone, kN);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);  // still allocated: fine
  REQUIRE(cudaFree(gone) == cudaSuccess);
  CHECK(cudaGraphLaunch(exec, stream) == cudaErrorIllegalAddress);
  CHECK(warpnet::simt::last_error_message().find("node 0 of 1 (kernel square) failed: argument 2") !=
        std::string::npos);
  CHECK(warpnet::simt::last_error_message().find("has been freed since") != std::string::npos);
  cudaGetLastError();
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}
