// A training step recorded once and replayed: a CUDA graph.
//
// A LeNet-5 step on a GPU is some 60 kernel launches, most of them a few
// microseconds of work; launched one by one from the host, each costs about
// as much again in the driver. A graph is the whole sequence recorded once
// (stream capture) and launched with one call. What replaying means, and
// what code must do to be captured (the emulator enforces CUDA's rules, so a
// step that breaks one fails on CI as it would on a GPU):
//
// - A replay runs the same kernels with the same arguments on the same
//   addresses. New inputs are copied into the buffers the captured step
//   read; values that change from step to step (Adam's bias correction) live
//   in device memory the host writes before each replay
//   (dispatch::StepHyper), never in launch arguments, which are frozen.
// - While captured, the step may not wait for the device or copy to or from
//   the host: that would need results that do not exist yet. Such a call
//   ends the capture with an error naming it. Constants a step uploads are
//   uploaded once, by an ordinary step run before the capture (warm-up).
// - Memory allocated while capturing belongs to the graph: a block the
//   captured step freed may be reused by the same step (the replay runs in
//   the same order), but never by anything else while the graph lives, since
//   each replay writes it again.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "core/dtype.hpp"

namespace warpnet::device {

// The device's half: stream capture and graph launches with its runtime's
// API. The emulator's and CUDA's are one source compiled twice
// (graph_runtime.cpp; cuda/graph_runtime.cu), registered at static
// initialization like DeviceMemory.
class GraphRuntime {
 public:
  virtual ~GraphRuntime() = default;
  // From here this thread's launches (launch_kernel's stream) are recorded;
  // `programmatic`: as programmatic dependent launches (StepGraph::Launches).
  virtual void begin_capture(bool programmatic) = 0;
  // Ends the capture and instantiates the graph; returns its node count.
  // Throws with the runtime's error when the capture was invalidated.
  virtual size_t end_capture() = 0;
  // Ends a capture whose step threw, discarding what was recorded.
  virtual void abandon_capture() = 0;
  // One launch of the graph, queued: the host does not wait for it. Throws
  // with the runtime's error when the launch fails; an error in one of its
  // kernels on a GPU comes back from the next call that waits (reading a
  // result), as for any kernel launch.
  virtual void replay() = 0;
};
void register_graph_runtime(Device device, std::unique_ptr<GraphRuntime> (*make)());

class StepGraph {
 public:
  // Throws for the CPU, or for a device whose backend is not linked.
  explicit StepGraph(Device device);
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  // How the captured kernels follow each other: `ordered`, each starting
  // when the one before has finished, as launches on a stream do; or
  // `programmatic`, where the kernels launched with
  // warpnet::launch_dependent_kernel start while the one before still runs
  // and wait inside for it (programmatic dependent launch, sm_90), and every
  // other kernel is ordered as before.
  enum class Launches { ordered, programmatic };

  // Runs `step` with every launch recorded instead of run and every device
  // allocation taken from this graph's memory. Nothing is computed until
  // replay(). If `step` throws, the capture is discarded and the error
  // passed on; a second capture replaces the first.
  void capture(const std::function<void()>& step, Launches launches = Launches::ordered);
  // Queues the captured step once (see GraphRuntime::replay). Copies and
  // launches after it run after it.
  void replay();

  bool ready() const { return nodes_ > 0; }
  size_t nodes() const { return nodes_; }  // kernels and copies recorded

 private:
  Device device_;
  std::unique_ptr<GraphRuntime> runtime_;
  std::shared_ptr<struct GraphPool> pool_;
  size_t nodes_ = 0;
};

// True while this thread captures a graph: an op that would read a result
// on the host must not (device::softmax_cross_entropy leaves its mean loss
// to be read after the replay).
bool capturing();

}  // namespace warpnet::device
