// CUDA graphs from stream capture: instantiating one copies its nodes into an
// exec, and cudaGraphLaunch replays them in capture order, each run to the end
// before the next (a captured stream is a chain, so that is CUDA's order too).
// A kernel node runs on the worker threads like any launch, with the arguments
// frozen when it was captured; a copy or memset node touches whatever its
// buffers hold at replay.
#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "simt/allocations.hpp"
#include "simt/capture.hpp"
#include "simt/handles.hpp"

namespace warpnet::simt {

std::string describe(const NodeWork& work) {
  struct Describe {
    std::string operator()(const KernelNode& n) const { return cat("kernel ", kernel_name(n.call.kernel)); }
    std::string operator()(const MemcpyNode& n) const { return cat("memcpy of ", n.bytes, " bytes"); }
    std::string operator()(const MemsetNode& n) const { return cat("memset of ", n.bytes, " bytes"); }
    std::string operator()(const MemAllocNode& n) const { return cat("allocation of ", n.bytes, " bytes"); }
    std::string operator()(const MemFreeNode&) const { return "free"; }
  };
  return std::visit(Describe{}, work);
}

namespace {

// A copy or memset whose buffer was freed since the capture: on a GPU, a fault.
void check_still_allocated(const char* side, const void* p, size_t bytes) {
  if (bytes == 0 || find_allocation(p, bytes)) return;
  throw LaunchError(cudaErrorIllegalAddress,
                    cat("its ", side, " [", p, ", +", bytes, ") is no longer allocated: ",
                        describe_near(allocation_snapshot(), reinterpret_cast<uintptr_t>(p), bytes)));
}

// A kernel's pointer argument whose buffer was freed since the capture. On a
// GPU the replay would write wherever the pointer now lands, or fault; here
// it is an error before the kernel runs, whether or not the kernel is traced.
void check_pointers_still_allocated(const KernelNode& n) {
  for (const CapturedPointer& p : n.pointers) {
    const auto now = find_allocation(reinterpret_cast<const void*>(p.address), 1);
    if (now && now->begin == p.allocation && now->bytes == p.allocation_bytes) continue;
    throw LaunchError(cudaErrorIllegalAddress,
                      cat("argument ", p.argument + 1, " (0x", std::hex, p.address, ") pointed into a ", std::dec,
                          p.allocation_bytes, "-byte allocation at 0x", std::hex, p.allocation, std::dec,
                          " when captured, which has been freed since; a graph replays the pointers it captured, "
                          "so their buffers must outlive it"));
  }
}

// Runs one node; throws LaunchError.
void replay(const NodeWork& work) {
  struct Replay {
    void operator()(const KernelNode& n) const {
      check_pointers_still_allocated(n);
      run(n.call, n.shape);
    }
    void operator()(const MemcpyNode& n) const {
      check_still_allocated("destination", n.dst, n.bytes);
      check_still_allocated("source", n.src, n.bytes);
      if (n.bytes) std::memmove(n.dst, n.src, n.bytes);
    }
    void operator()(const MemsetNode& n) const {
      check_still_allocated("destination", n.dst, n.bytes);
      if (n.bytes) std::memset(n.dst, n.value, n.bytes);
    }
    // Graph memory is allocated when captured and kept by the graph.
    void operator()(const MemAllocNode&) const {}
    void operator()(const MemFreeNode&) const {}
  };
  std::visit(Replay{}, work);
}

}  // namespace
}  // namespace warpnet::simt

using namespace warpnet;
using namespace warpnet::simt;

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  if (!exec || !graph) return fail_with(cudaErrorInvalidValue, "cudaGraphInstantiate: null exec pointer or graph");
  if (flags != 0)
    return fail_with(cudaErrorInvalidValue, cat("cudaGraphInstantiate: flags ", flags, " are not emulated (only 0)"));
  if (cudaError_t e = check_live(live<CUgraph_st>(), graph, "cudaGraphInstantiate", "graph", "cudaStreamEndCapture"))
    return e;
  if (graph->has_memory_nodes && graph->memory->live_execs > 0) {
    return fail_with(cudaErrorInvalidValue,
                     "cudaGraphInstantiate: the graph has memory allocation or free nodes (cudaMallocAsync/"
                     "cudaFreeAsync during capture), and CUDA allows one exec of such a graph at a time; destroy the "
                     "other with cudaGraphExecDestroy first");
  }
  auto made = std::make_unique<CUgraphExec_st>();
  made->nodes.reserve(graph->nodes.size());
  for (const auto& node : graph->nodes) made->nodes.push_back(node->work);
  made->memory = graph->memory;
  made->has_memory_nodes = graph->has_memory_nodes;
  if (made->has_memory_nodes) ++made->memory->live_execs;
  *exec = made.release();
  live<CUgraphExec_st>().add(*exec);
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!exec) return fail_with(cudaErrorInvalidValue, "cudaGraphLaunch: null exec");
  if (cudaError_t e = check_live(live<CUgraphExec_st>(), exec, "cudaGraphLaunch", "graph exec", "cudaGraphInstantiate"))
    return e;
  const StreamUse use = use_stream(stream, "cudaGraphLaunch");
  if (use.action == StreamUse::refuse) return fail_with(use.error, use.message);
  if (use.action == StreamUse::capture) {
    // CUDA would add the graph as a child graph node; not emulated.
    return fail_with(cudaErrorNotSupported,
                     "cudaGraphLaunch into a capturing stream: the emulator does not capture graph launches "
                     "(child graph nodes); launch the graph outside the capture");
  }
  const size_t count = exec->nodes.size();
  for (size_t i = 0; i < count; ++i) {
    try {
      replay(exec->nodes[i]);
    } catch (const LaunchError& e) {
      // Recorded as a launch's error is; the nodes after it do not run.
      return fail_with(e.code(), cat("cudaGraphLaunch: node ", i, " of ", count, " (", describe(exec->nodes[i]),
                                     ") failed: ", e.what()));
    }
  }
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (!exec) return fail_with(cudaErrorInvalidValue, "cudaGraphExecDestroy: null exec");
  if (!live<CUgraphExec_st>().remove(exec))
    return fail_with(cudaErrorInvalidResourceHandle,
                     dead_handle_message("cudaGraphExecDestroy", "graph exec", exec, "cudaGraphInstantiate"));
  if (exec->has_memory_nodes) --exec->memory->live_execs;
  delete exec;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (!graph) return fail_with(cudaErrorInvalidValue, "cudaGraphDestroy: null graph");
  if (!live<CUgraph_st>().remove(graph))
    return fail_with(cudaErrorInvalidResourceHandle,
                     dead_handle_message("cudaGraphDestroy", "graph", graph, "cudaStreamEndCapture"));
  delete graph;
  return cudaSuccess;
}

// Without `nodes`, *count becomes the number of nodes. With it, *count is its
// capacity on entry: as many handles as fit are written in capture order, the
// rest of the array is set to null, and *count becomes the number written.
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  if (!graph || !count) return fail_with(cudaErrorInvalidValue, "cudaGraphGetNodes: null graph or count");
  if (cudaError_t e = check_live(live<CUgraph_st>(), graph, "cudaGraphGetNodes", "graph", "cudaStreamEndCapture")) return e;
  const size_t total = graph->nodes.size();
  if (!nodes) {
    *count = total;
    return cudaSuccess;
  }
  for (size_t i = 0; i < *count; ++i) nodes[i] = i < total ? graph->nodes[i].get() : nullptr;
  *count = std::min(*count, total);
  return cudaSuccess;
}
