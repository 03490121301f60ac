// Stream capture inside the emulator: what a capture records (a graph of
// nodes), and the checks the runtime API makes before a call that an active
// capture restricts. capture.cpp keeps the captures, graphs.cpp replays graphs,
// runtime.cpp calls the checks. Not for kernels or host code: they use the
// CUDA names in cuda_runtime.hpp.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "simt/allocations.hpp"
#include "simt/cuda_runtime.hpp"
#include "simt/launch.hpp"

namespace warpnet::simt {

// The work of one graph node, replayed in capture order by cudaGraphLaunch.
// A pointer argument that pointed into an allocation when captured: at
// replay that allocation must still be there.
struct CapturedPointer {
  size_t argument;          // 0-based position in the kernel's parameter list (messages count from 1)
  uintptr_t address;        // the pointer's value
  uintptr_t allocation;     // the start of the allocation it pointed into
  size_t allocation_bytes;  // and its size
};
struct KernelNode {
  KernelCall call;
  LaunchShape shape;
  std::shared_ptr<const void> arguments;  // what call.bound points to, frozen at capture
  std::vector<CapturedPointer> pointers;
};
struct MemcpyNode {
  void* dst;
  const void* src;
  size_t bytes;
};
struct MemsetNode {
  void* dst;
  int value;
  size_t bytes;
};
struct MemAllocNode {  // cudaMallocAsync: allocated at capture, nothing to do at replay
  void* ptr;
  size_t bytes;
};
struct MemFreeNode {  // cudaFreeAsync of a graph allocation: bookkeeping only
  void* ptr;
};
using NodeWork = std::variant<KernelNode, MemcpyNode, MemsetNode, MemAllocNode, MemFreeNode>;

// "kernel relu_forward", "memcpy of 4096 bytes": a node, for messages.
std::string describe(const NodeWork& work);

// The memory cudaMallocAsync handed out during one capture. The graph and
// every exec made from it share it; the last one to go frees it.
class GraphMemory {
 public:
  GraphMemory() = default;
  GraphMemory(const GraphMemory&) = delete;
  GraphMemory& operator=(const GraphMemory&) = delete;
  ~GraphMemory();
  void adopt(void* ptr);
  bool owns(const void* ptr) const;
  int live_execs = 0;  // CUDA allows one exec at a time of a graph with memory nodes

 private:
  std::vector<void*> pointers_;
};

// Whether `ptr` is the start of memory some graph owns (cudaFree must refuse it).
bool owned_by_a_graph(const void* ptr);

// An active capture: what its stream has recorded so far.
struct Capture {
  cudaStreamCaptureMode mode;
  std::thread::id thread;      // the thread that began it
  std::string invalidated_by;  // the refused operation's message; empty while valid
  std::unique_ptr<CUgraph_st> graph;
};

// What an operation on a stream must do now.
struct StreamUse {
  enum Action { run, capture, refuse } action = run;
  cudaError_t error = cudaSuccess;  // when refused
  std::string message;              // when refused
};

// `operation` on `stream`: run now (legacy or an idle stream), be captured
// (the stream captures), or be refused: the legacy stream while any capture
// is active (cudaErrorStreamCaptureImplicit, every capture invalidated), a
// stream whose capture was invalidated (cudaErrorStreamCaptureInvalidated).
// Records nothing: the caller records or throws.
StreamUse use_stream(cudaStream_t stream, const std::string& operation);

// Appends a node to the capture on `stream` (use_stream answered capture).
// False if the capture has ended since (another thread ended it meanwhile):
// the caller refuses the operation with capture_ended's message.
bool capture_node(cudaStream_t stream, NodeWork work);
// The memory cudaMallocAsync gives the capture on `stream`; null if it has ended since.
std::shared_ptr<GraphMemory> capture_memory(cudaStream_t stream);
std::string capture_ended(cudaStream_t stream, const std::string& operation);
// A refused operation on a capturing stream invalidates its capture, as on a
// GPU; records and returns `code`.
cudaError_t refuse_in_capture(cudaStream_t stream, cudaError_t code, const std::string& message);

// Checks before runtime calls that captures restrict; each records the error,
// invalidates the captures concerned, and returns the code (cudaSuccess: go on).
// A call on the legacy stream (cudaMemcpy, cudaMemset): refused while any capture is active.
cudaError_t check_legacy_stream_use(const std::string& call);
// A call that waits for the device (cudaDeviceSynchronize): refused while any capture is active.
cudaError_t check_device_wait(const std::string& call);
// A call CUDA deems unsafe during capture (cudaMalloc, cudaFree): refused by
// the captures the calling thread's mode makes it respect (cudaThreadExchangeStreamCaptureMode).
cudaError_t check_unsafe_call(const std::string& call);

// runtime.cpp: records the error for cudaGetLastError and returns it.
cudaError_t fail_with(cudaError_t code, const std::string& message);
// runtime.cpp: the fault (7xx) a launch on any host thread left since the
// last synchronization, cleared: what a synchronization returns.
cudaError_t take_pending_fault();
// runtime.cpp: cudaMalloc/cudaFree without the capture checks (and
// cudaMallocHost/cudaFreeHost, kind pinned_host: each frees only its own).
cudaError_t allocate_device(void** ptr, size_t bytes, const char* call, AllocationKind kind = AllocationKind::device);
cudaError_t free_device(void* ptr, const char* call, AllocationKind kind = AllocationKind::device);
// runtime.cpp: cudaMemcpy's and cudaMemset's checks and work, without the capture checks.
cudaError_t copy_checked(const char* call, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t set_checked(const char* call, void* ptr, int value, size_t bytes);

}  // namespace warpnet::simt

// The handles behind cudaStream_t, cudaGraph_t, cudaGraphNode_t, cudaGraphExec_t.
struct CUstream_st {
  std::unique_ptr<warpnet::simt::Capture> capture;  // set between Begin and EndCapture
};
struct CUgraphNode_st {
  warpnet::simt::NodeWork work;
};
struct CUgraph_st {
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;  // in capture order
  std::shared_ptr<warpnet::simt::GraphMemory> memory = std::make_shared<warpnet::simt::GraphMemory>();
  bool has_memory_nodes = false;
};
struct CUgraphExec_st {
  std::vector<warpnet::simt::NodeWork> nodes;
  std::shared_ptr<warpnet::simt::GraphMemory> memory;
  bool has_memory_nodes = false;
};
