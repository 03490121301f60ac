// The floor under a training step of many small kernels: how long `launches`
// kernel launches take when the kernels do next to nothing, in one captured
// graph and one by one from the host. A LeNet-5 step at batch 64 is some 40
// launches of a few microseconds of work each; what the launches cost by
// themselves is the least such a step can take, whatever its kernels do.
#pragma once
#include "core/dtype.hpp"

namespace warpnet::device {

struct LaunchFloor {
  int launches = 0;        // kernels in the chain
  size_t graph_nodes = 0;  // what the capture recorded (at least `launches`)
  double graph_us = 0;     // one replay of the chain's graph, microseconds
  double eager_us = 0;     // the chain launched one by one through the backend
};

// A chain of `launches` ReLUs over 32 floats on `device` (emu or cuda), each
// reading the one before's output as a step's kernels do, so none may start
// before the last one ends. Both timings are wall clock over `repeats` chains
// queued back to back, one wait at the end, divided by `repeats`, after one
// untimed chain (the capture, allocations, first launches). Throws for the
// CPU, for launches < 1 or repeats < 1.
LaunchFloor launch_floor(Device device, int launches, int repeats);

}  // namespace warpnet::device
