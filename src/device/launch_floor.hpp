// The floor under a training step of many small kernels: how long `launches`
// kernel launches take when the kernels do next to nothing, in one captured
// graph and one by one from the host. A LeNet-5 step at batch 64 is some 40
// launches of a few microseconds of work each; what the launches cost by
// themselves is the least such a step can take, whatever its kernels do.
#pragma once
#include <string>

#include "core/dtype.hpp"

namespace warpnet::device {

struct LaunchFloor {
  int launches = 0;        // kernels in the chain
  size_t graph_nodes = 0;  // what the capture recorded (at least `launches`)
  double graph_us = 0;     // one replay of the chain's graph, microseconds
  // The same chain captured with programmatic dependent launches
  // (StepGraph::Launches::programmatic): each ReLU launched while the one
  // before runs. What that saves per launch is what it could save a step.
  double programmatic_graph_us = 0;
  std::string programmatic_error;  // why it could not be timed (a GPU before sm_90), else empty
  double eager_us = 0;  // the chain launched one by one through the backend
};

// A chain of `launches` ReLUs over 32 floats on `device` (emu or cuda), each
// reading the one before's output as a step's kernels do, so none may read
// before the last one has written. Every timing is wall clock over `repeats`
// chains queued back to back, one wait at the end, divided by `repeats`,
// after one untimed chain (the capture, allocations, first launches).
// Throws for the CPU, for launches < 1 or repeats < 1. On the emulator both
// graphs run the same way (grids run one after another there): it checks
// the mechanics; only a GPU says what the launches cost.
LaunchFloor launch_floor(Device device, int launches, int repeats);

}  // namespace warpnet::device
