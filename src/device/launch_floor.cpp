#include "device/launch_floor.hpp"

#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "core/timer.hpp"
#include "device/backend.hpp"
#include "device/graph.hpp"

namespace warpnet::device {

namespace {

// ReLU after ReLU: each launch reads the last one's output.
Tensor chain(const Tensor& x, int launches) {
  Tensor y = x;
  for (int i = 0; i < launches; ++i) y = relu(y);
  return y;
}

// Seconds per call of `queue` (which queues work on the device and returns),
// over `repeats` calls and one wait for the device: reading `last()` back.
template <class Queue, class Last>
double seconds_per(int repeats, Queue queue, Last last) {
  const Timer timer;
  for (int r = 0; r < repeats; ++r) queue();
  (void)last().to(Device::cpu);  // waits for everything queued before it
  return timer.seconds() / repeats;
}

}  // namespace

LaunchFloor launch_floor(Device device, int launches, int repeats) {
  WN_CHECK(device != Device::cpu, "launch_floor: the CPU launches no kernels; ask for emu or cuda");
  WN_CHECK(launches >= 1 && repeats >= 1, "launch_floor: launches (", launches, ") and repeats (", repeats,
           ") must be at least 1");
  // Negative and positive values, so the ReLUs' outputs are not all their inputs.
  std::vector<float> values(32);
  for (int i = 0; i < 32; ++i) values[size_t(i)] = float(i - 16);
  const Tensor x = Tensor::from({32}, values).to(device);

  LaunchFloor floor;
  floor.launches = launches;
  Tensor out;
  (void)chain(x, launches).to(Device::cpu);  // untimed: first launches, allocations
  floor.eager_us = 1e6 * seconds_per(repeats, [&] { out = chain(x, launches); }, [&] { return out; });

  // One graph of the chain, launched one way or the other: microseconds per replay.
  auto graph_us = [&](StepGraph::Launches how) {
    StepGraph graph(device);
    graph.capture([&] { out = chain(x, launches); }, how);
    floor.graph_nodes = graph.nodes();
    graph.replay();  // untimed: the graph's first launch
    return 1e6 * seconds_per(repeats, [&] { graph.replay(); }, [&] { return out; });
  };
  floor.graph_us = graph_us(StepGraph::Launches::ordered);
  try {
    floor.programmatic_graph_us = graph_us(StepGraph::Launches::programmatic);
  } catch (const Error& e) {  // the ordered figures stand without it
    floor.programmatic_error = e.what();
  }
  return floor;
}

}  // namespace warpnet::device
