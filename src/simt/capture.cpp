// Streams and stream capture. A stream that captures records what is sent to
// it (kernels, async copies and memsets, stream-ordered allocations) as graph
// nodes instead of running it; cudaStreamEndCapture hands the graph over.
// CUDA's rules come with it: the emulated streams are blocking streams, so the
// legacy stream (nullptr) is unusable while any of them captures; nothing may
// wait for work that is only being recorded; cudaMalloc & co. are refused per
// the capture modes. A refused operation invalidates the capture, and
// cudaStreamEndCapture then returns no graph.
#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "simt/allocations.hpp"
#include "simt/capture.hpp"
#include "simt/handles.hpp"

namespace warpnet::simt {
namespace {

// Guards every stream's capture and the list of capturing streams.
std::mutex capture_mutex;
std::vector<cudaStream_t> capturing;  // streams between Begin and EndCapture

std::mutex graph_memory_mutex;
std::set<const void*> graph_owned;  // starts of memory some GraphMemory owns

// The calling thread's interaction mode (cudaThreadExchangeStreamCaptureMode).
thread_local cudaStreamCaptureMode thread_mode = cudaStreamCaptureModeGlobal;

thread_local cudaStream_t thread_launch_stream = nullptr;

const char* mode_name(cudaStreamCaptureMode mode) {
  switch (mode) {
    case cudaStreamCaptureModeGlobal: return "cudaStreamCaptureModeGlobal";
    case cudaStreamCaptureModeThreadLocal: return "cudaStreamCaptureModeThreadLocal";
    case cudaStreamCaptureModeRelaxed: return "cudaStreamCaptureModeRelaxed";
  }
  return "an unknown mode";
}

std::string stream_name(cudaStream_t stream) {
  return stream ? cat("stream ", static_cast<const void*>(stream)) : std::string("the legacy stream");
}

// Marks a capture invalid with the first reason; the caller holds capture_mutex.
void invalidate(cudaStream_t stream, const std::string& why) {
  if (stream->capture->invalidated_by.empty()) stream->capture->invalidated_by = why;
}

// "stream 0x.. (and 1 more)": the capturing streams, for messages; the caller holds capture_mutex.
std::string capturing_names() {
  std::string names = stream_name(capturing.front());
  if (capturing.size() > 1) names += cat(" (and ", capturing.size() - 1, " more)");
  return names;
}

// Refuses `call` for every active capture; the caller holds capture_mutex.
cudaError_t refuse_for_all(cudaError_t code, const std::string& message) {
  for (cudaStream_t s : capturing) invalidate(s, message);
  return fail_with(code, cat(message, " (", cudaGetErrorName(code), "); the capture is invalidated"));
}

std::string legacy_use_message(const std::string& operation) {
  return cat(operation, " uses the legacy stream while ", capturing_names(),
             " captures: streams from cudaStreamCreate are blocking streams, so the legacy stream would have to wait "
             "for work that is only being recorded. Send it to the capturing stream instead (an Async call, or "
             "warpnet::launch_stream() for launch_kernel)");
}

}  // namespace

cudaStream_t& launch_stream_slot() { return thread_launch_stream; }

bool& programmatic_launch_slot() {
  static thread_local bool on = false;
  return on;
}

// ---- graph memory ----

GraphMemory::~GraphMemory() {
  for (void* p : pointers_) {
    {
      std::lock_guard lock(graph_memory_mutex);
      graph_owned.erase(p);
    }
    free_device(p, "GraphMemory");
  }
}

// Under graph_memory_mutex: threads may allocate on one capturing stream at once.
void GraphMemory::adopt(void* ptr) {
  std::lock_guard lock(graph_memory_mutex);
  pointers_.push_back(ptr);
  graph_owned.insert(ptr);
}

bool GraphMemory::owns(const void* ptr) const {
  std::lock_guard lock(graph_memory_mutex);
  return std::find(pointers_.begin(), pointers_.end(), ptr) != pointers_.end();
}

bool owned_by_a_graph(const void* ptr) {
  std::lock_guard lock(graph_memory_mutex);
  return graph_owned.count(ptr) != 0;
}

// ---- what a capture allows ----

StreamUse use_stream(cudaStream_t stream, const std::string& operation) {
  std::lock_guard lock(capture_mutex);
  if (!stream) {
    if (capturing.empty()) return {};
    const std::string message = legacy_use_message(operation);
    for (cudaStream_t s : capturing) invalidate(s, message);
    return {StreamUse::refuse, cudaErrorStreamCaptureImplicit,
            cat(message, " (cudaErrorStreamCaptureImplicit); the capture is invalidated")};
  }
  if (!live<CUstream_st>().contains(stream))
    return {StreamUse::refuse, cudaErrorInvalidResourceHandle,
            dead_handle_message(operation, "stream", stream, "cudaStreamCreate")};
  if (!stream->capture) return {};
  if (!stream->capture->invalidated_by.empty()) {
    return {StreamUse::refuse, cudaErrorStreamCaptureInvalidated,
            cat(operation, " on ", stream_name(stream), ": its capture was invalidated by an earlier error: ",
                stream->capture->invalidated_by, " (cudaErrorStreamCaptureInvalidated)")};
  }
  return {StreamUse::capture, cudaSuccess, {}};
}

bool capture_node(cudaStream_t stream, NodeWork work) {
  std::lock_guard lock(capture_mutex);
  if (!stream->capture) return false;
  CUgraph_st& graph = *stream->capture->graph;
  if (std::holds_alternative<MemAllocNode>(work) || std::holds_alternative<MemFreeNode>(work))
    graph.has_memory_nodes = true;
  graph.nodes.push_back(std::make_unique<CUgraphNode_st>(CUgraphNode_st{std::move(work)}));
  return true;
}

std::shared_ptr<GraphMemory> capture_memory(cudaStream_t stream) {
  std::lock_guard lock(capture_mutex);
  return stream->capture ? stream->capture->graph->memory : nullptr;
}

std::string capture_ended(cudaStream_t stream, const std::string& operation) {
  return cat(operation, " on ", stream_name(stream),
             ": the capture ended (on another thread) while the operation was being recorded (cudaErrorIllegalState)");
}

cudaError_t refuse_in_capture(cudaStream_t stream, cudaError_t code, const std::string& message) {
  const std::string full = cat(message, " (", cudaGetErrorName(code), ")");
  {
    std::lock_guard lock(capture_mutex);
    if (stream->capture) invalidate(stream, full);
  }
  return fail_with(code, cat(full, "; the capture is invalidated"));
}

cudaError_t check_legacy_stream_use(const std::string& call) {
  std::lock_guard lock(capture_mutex);
  if (capturing.empty()) return cudaSuccess;
  return refuse_for_all(cudaErrorStreamCaptureImplicit, legacy_use_message(call));
}

cudaError_t check_device_wait(const std::string& call) {
  std::lock_guard lock(capture_mutex);
  if (capturing.empty()) return cudaSuccess;
  return refuse_for_all(cudaErrorStreamCaptureUnsupported,
                        cat(call, " while ", capturing_names(), " captures: it would wait for work that is only being "
                                                                "recorded, not run"));
}

// CUDA's rule (cudaThreadExchangeStreamCaptureMode): a thread in Global mode
// respects its own non-relaxed captures and every thread's Global ones; in
// ThreadLocal mode its own non-relaxed captures; in Relaxed mode none.
cudaError_t check_unsafe_call(const std::string& call) {
  std::lock_guard lock(capture_mutex);
  if (thread_mode == cudaStreamCaptureModeRelaxed) return cudaSuccess;
  std::vector<cudaStream_t> forbidding;
  for (cudaStream_t s : capturing) {
    const Capture& c = *s->capture;
    if (c.mode == cudaStreamCaptureModeRelaxed) continue;
    const bool mine = c.thread == std::this_thread::get_id();
    if (mine || (thread_mode == cudaStreamCaptureModeGlobal && c.mode == cudaStreamCaptureModeGlobal))
      forbidding.push_back(s);
  }
  if (forbidding.empty()) return cudaSuccess;
  const std::string message =
      cat(call, " while ", stream_name(forbidding.front()), " captures in ", mode_name(forbidding.front()->capture->mode),
          ": it is not recorded in the graph, and CUDA forbids it unless the capture was begun with "
          "cudaStreamCaptureModeRelaxed; allocate before capturing, or use cudaMallocAsync on the capturing stream");
  for (cudaStream_t s : forbidding) invalidate(s, message);
  return fail_with(cudaErrorStreamCaptureUnsupported,
                   cat(message, " (cudaErrorStreamCaptureUnsupported); the capture is invalidated"));
}

// ---- launches ----

void run_on(cudaStream_t stream, const KernelCall& call, const LaunchShape& shape,
            std::shared_ptr<const void> arguments, ArgumentAddresses addresses) {
  if (!call.kernel)  // (would otherwise fault at address 0 in a worker, blaming an access)
    throw LaunchError(cudaErrorInvalidDeviceFunction, "a launch of a null kernel pointer (cudaErrorInvalidDeviceFunction)");
  const StreamUse use = use_stream(stream, cat("a launch of kernel ", kernel_name(call.kernel)));
  if (use.action == StreamUse::refuse) throw LaunchError(use.error, use.message);
  if (use.action == StreamUse::run) return run(call, shape);
  // A capturing launch still checks its configuration, as CUDA's launch call
  // does: the error comes from this call, nothing is recorded, and, as with
  // any failed call during a capture, the capture is invalidated.
  try {
    check_launch(call, shape);
  } catch (const LaunchError& e) {
    {
      std::lock_guard lock(capture_mutex);
      if (stream->capture) invalidate(stream, e.what());
    }
    throw LaunchError(e.code(), cat(e.what(), "; the capture is invalidated"));
  }
  KernelNode node{call, shape, std::move(arguments), {}};
  const std::vector<uintptr_t> values = addresses(call.bound);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) continue;
    if (auto a = find_allocation(reinterpret_cast<const void*>(values[i]), 1))
      node.pointers.push_back({i, values[i], a->begin, a->bytes});
  }
  if (!capture_node(stream, std::move(node))) throw LaunchError(cudaErrorIllegalState, capture_ended(stream, "a launch"));
}

}  // namespace warpnet::simt

using namespace warpnet;
using namespace warpnet::simt;

// ---- streams ----

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  if (!stream) return fail_with(cudaErrorInvalidValue, "cudaStreamCreate: null pointer for the stream");
  *stream = new CUstream_st;
  live<CUstream_st>().add(*stream);
  return cudaSuccess;
}

// What CUDA does to a capture whose stream is destroyed is not documented;
// the emulator refuses, so the mistake is seen.
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream) return fail_with(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: the legacy stream cannot be destroyed");
  if (cudaError_t e = check_live(live<CUstream_st>(), stream, "cudaStreamDestroy", "stream", "cudaStreamCreate")) return e;
  {
    std::lock_guard lock(capture_mutex);
    if (stream->capture) {
      return fail_with(cudaErrorIllegalState, cat("cudaStreamDestroy: ", stream_name(stream),
                                                  " is capturing; end the capture with cudaStreamEndCapture first"));
    }
  }
  live<CUstream_st>().remove(stream);
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (!stream) {
    if (cudaError_t e = check_legacy_stream_use("cudaStreamSynchronize(nullptr)")) return e;
    return take_pending_fault();
  }
  if (cudaError_t e = check_live(live<CUstream_st>(), stream, "cudaStreamSynchronize", "stream", "cudaStreamCreate")) return e;
  std::lock_guard lock(capture_mutex);
  if (!stream->capture) return take_pending_fault();  // launches ran when they were made; a fault stays for this
  const std::string message = cat("cudaStreamSynchronize of ", stream_name(stream),
                                  ", which captures: its work is only being recorded, so there is nothing to wait for "
                                  "until the graph is launched");
  invalidate(stream, message);
  return fail_with(cudaErrorStreamCaptureUnsupported,
                   cat(message, " (cudaErrorStreamCaptureUnsupported); the capture is invalidated"));
}

// ---- capture ----

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (!stream) {
    return fail_with(cudaErrorStreamCaptureUnsupported,
                     "cudaStreamBeginCapture: the legacy stream (nullptr) cannot capture; create a stream with "
                     "cudaStreamCreate and capture that (cudaErrorStreamCaptureUnsupported)");
  }
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
      mode != cudaStreamCaptureModeRelaxed)
    return fail_with(cudaErrorInvalidValue, cat("cudaStreamBeginCapture: ", int(mode), " is not a cudaStreamCaptureMode"));
  if (cudaError_t e = check_live(live<CUstream_st>(), stream, "cudaStreamBeginCapture", "stream", "cudaStreamCreate"))
    return e;
  std::lock_guard lock(capture_mutex);
  if (stream->capture) {
    return fail_with(cudaErrorIllegalState, cat("cudaStreamBeginCapture: ", stream_name(stream),
                                                " is already capturing; end that capture first (cudaErrorIllegalState)"));
  }
  stream->capture = std::make_unique<Capture>(
      Capture{mode, std::this_thread::get_id(), std::string(), std::make_unique<CUgraph_st>()});
  capturing.push_back(stream);
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  if (!graph) return fail_with(cudaErrorInvalidValue, "cudaStreamEndCapture: null pointer for the graph");
  if (!stream) return fail_with(cudaErrorIllegalState, "cudaStreamEndCapture: the legacy stream never captures");
  if (cudaError_t e = check_live(live<CUstream_st>(), stream, "cudaStreamEndCapture", "stream", "cudaStreamCreate")) return e;
  std::unique_ptr<Capture> capture;
  {
    std::lock_guard lock(capture_mutex);
    if (!stream->capture) {
      return fail_with(cudaErrorIllegalState,
                       cat("cudaStreamEndCapture: ", stream_name(stream), " is not capturing (cudaErrorIllegalState)"));
    }
    if (stream->capture->mode != cudaStreamCaptureModeRelaxed && stream->capture->thread != std::this_thread::get_id()) {
      return fail_with(cudaErrorStreamCaptureWrongThread,
                       cat("cudaStreamEndCapture: the capture on ", stream_name(stream), " was begun in ",
                           mode_name(stream->capture->mode), " by another thread; only that thread may end it"));
    }
    capture = std::move(stream->capture);
    capturing.erase(std::find(capturing.begin(), capturing.end(), stream));
  }
  *graph = nullptr;
  if (!capture->invalidated_by.empty()) {
    // The graph and the memory it was given go with the capture.
    return fail_with(cudaErrorStreamCaptureInvalidated,
                     cat("cudaStreamEndCapture: the capture on ", stream_name(stream), " was invalidated by: ",
                         capture->invalidated_by, "; no graph (cudaErrorStreamCaptureInvalidated)"));
  }
  *graph = capture->graph.release();
  live<CUgraph_st>().add(*graph);
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (!status) return fail_with(cudaErrorInvalidValue, "cudaStreamIsCapturing: null pointer for the status");
  if (stream)
    if (cudaError_t e = check_live(live<CUstream_st>(), stream, "cudaStreamIsCapturing", "stream", "cudaStreamCreate"))
      return e;
  std::lock_guard lock(capture_mutex);
  if (!stream) {
    // CUDA answers so for the legacy stream, and leaves the captures valid.
    if (!capturing.empty()) {
      return fail_with(cudaErrorStreamCaptureImplicit, cat("cudaStreamIsCapturing of the legacy stream while ",
                                                           capturing_names(), " captures (cudaErrorStreamCaptureImplicit)"));
    }
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  *status = !stream->capture                           ? cudaStreamCaptureStatusNone
            : stream->capture->invalidated_by.empty() ? cudaStreamCaptureStatusActive
                                                       : cudaStreamCaptureStatusInvalidated;
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  if (!mode) return fail_with(cudaErrorInvalidValue, "cudaThreadExchangeStreamCaptureMode: null pointer for the mode");
  if (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal &&
      *mode != cudaStreamCaptureModeRelaxed) {
    return fail_with(cudaErrorInvalidValue,
                     cat("cudaThreadExchangeStreamCaptureMode: ", int(*mode), " is not a cudaStreamCaptureMode"));
  }
  std::swap(*mode, thread_mode);
  return cudaSuccess;
}

// ---- stream-ordered copies and allocations ----

namespace {

// A copy's side during capture must be memory the GPU reaches when the graph
// runs: device memory or pinned host memory (both registered allocations).
// Pageable host memory is read or written by the runtime at the call, which a
// graph cannot replay.
bool reachable_at_replay(const void* p, size_t bytes) { return bytes == 0 || find_allocation(p, bytes).has_value(); }

}  // namespace

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  const StreamUse use = use_stream(stream, "cudaMemcpyAsync");
  if (use.action == StreamUse::refuse) return fail_with(use.error, use.message);
  if (use.action == StreamUse::run) return copy_checked("cudaMemcpyAsync", dst, src, bytes, kind);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return refuse_in_capture(stream, cudaErrorInvalidMemcpyDirection, cat("cudaMemcpyAsync: ", int(kind), " is not a cudaMemcpyKind"));
  for (auto [side, p] : {std::pair<const char*, const void*>{"destination", dst}, {"source", src}}) {
    if (reachable_at_replay(p, bytes)) continue;
    return refuse_in_capture(
        stream, cudaErrorStreamCaptureUnsupported,
        cat("cudaMemcpyAsync during capture on ", stream_name(stream), ": the ", side, " [", p, ", +", bytes,
            ") is neither device memory nor pinned host memory (cudaMallocHost); a graph replays copies of those only (nearest allocation: ",
            describe_near(allocation_snapshot(), reinterpret_cast<uintptr_t>(p), bytes), ")"));
  }
  if (!capture_node(stream, MemcpyNode{dst, src, bytes}))
    return fail_with(cudaErrorIllegalState, capture_ended(stream, "cudaMemcpyAsync"));
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream) {
  const StreamUse use = use_stream(stream, "cudaMemsetAsync");
  if (use.action == StreamUse::refuse) return fail_with(use.error, use.message);
  if (use.action == StreamUse::run) return set_checked("cudaMemsetAsync", ptr, value, bytes);
  if (!reachable_at_replay(ptr, bytes)) {
    return refuse_in_capture(stream, cudaErrorInvalidValue,
                             cat("cudaMemsetAsync during capture on ", stream_name(stream), ": [", ptr, ", +", bytes,
                                 ") is not inside a device allocation: ",
                                 describe_near(allocation_snapshot(), reinterpret_cast<uintptr_t>(ptr), bytes)));
  }
  if (!capture_node(stream, MemsetNode{ptr, value, bytes}))
    return fail_with(cudaErrorIllegalState, capture_ended(stream, "cudaMemsetAsync"));
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t stream) {
  if (!ptr) return fail_with(cudaErrorInvalidValue, "cudaMallocAsync: null pointer for the result");
  const StreamUse use = use_stream(stream, "cudaMallocAsync");
  if (use.action == StreamUse::refuse) return fail_with(use.error, use.message);
  if (cudaError_t e = allocate_device(ptr, bytes, "cudaMallocAsync")) return e;
  if (use.action == StreamUse::capture) {
    const std::shared_ptr<GraphMemory> memory = capture_memory(stream);
    if (!memory || !capture_node(stream, MemAllocNode{*ptr, bytes})) {
      free_device(std::exchange(*ptr, nullptr), "cudaMallocAsync");
      return fail_with(cudaErrorIllegalState, capture_ended(stream, "cudaMallocAsync"));
    }
    memory->adopt(*ptr);
  }
  return cudaSuccess;
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  const StreamUse use = use_stream(stream, "cudaFreeAsync");
  if (use.action == StreamUse::refuse) return fail_with(use.error, use.message);
  if (use.action == StreamUse::run) return free_device(ptr, "cudaFreeAsync");
  if (!ptr) return cudaSuccess;
  const std::shared_ptr<GraphMemory> memory = capture_memory(stream);
  if (!memory) return fail_with(cudaErrorIllegalState, capture_ended(stream, "cudaFreeAsync"));
  if (!memory->owns(ptr)) {
    return refuse_in_capture(stream, cudaErrorInvalidValue,
                             cat("cudaFreeAsync(", ptr, ") during capture on ", stream_name(stream),
                                 ": the emulator records frees only of memory cudaMallocAsync gave this capture"));
  }
  // The memory stays allocated: the graph owns it (see GraphMemory).
  if (!capture_node(stream, MemFreeNode{ptr}))
    return fail_with(cudaErrorIllegalState, capture_ended(stream, "cudaFreeAsync"));
  return cudaSuccess;
}
