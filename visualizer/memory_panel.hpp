// The memory panel: where the bytes of one training step go, per layer and
// per tag (parameters, activations, gradients, optimizer state, workspace),
// and the live bytes after each layer's forward and backward. Measured, not
// estimated: one step of the chosen model runs on the CPU while the memory
// tracker (core/memory.hpp) watches, as lesson 06 measures it. Also the GPU's
// total and free memory when one is usable (device::gpu::probe).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "core/memory.hpp"
#include "visualizer/panel.hpp"

namespace warpnet::viz {

struct MemoryOptions {
  std::string model = "lenet5";
  int batch = 64;
  std::string optimizer = "adam";
  // fp32 or f64: parameters, inputs and activations in that format (the two
  // warpnet's CPU ops compute in); tf32, bf16, fp16, fp8: the step in that
  // mixed precision (autograd/precision.hpp), each rounded tensor counted at
  // its format's width.
  std::string precision = "fp32";
};

struct StepMemory {
  struct Layer {
    std::string name;
    std::array<int64_t, kMemTagCount> peak{};  // the most alive at once during the step, by tag
  };
  struct Phase {
    std::string label;  // "fwd conv1", "bwd conv1", "optimizer step"
    std::array<int64_t, kMemTagCount> live{};
    int64_t total = 0, total_peak = 0;  // live now; the most alive during the phase
  };
  MemoryOptions options;
  std::vector<Layer> layers;
  std::vector<Phase> timeline;
  int64_t peak = 0;
  double seconds = 0;
  std::string error;
};

// One step (forward, backward, optimizer) of `options.model` on a batch of
// synthetic 28x28 images, on the CPU.
StepMemory measure_step(const MemoryOptions& options);

class MemoryPanel : public Panel {
 public:
  explicit MemoryPanel(MemoryOptions options);
  void Draw() override;
  std::string failure() const override { return step_.error; }

 private:
  MemoryOptions options_;
  int model_index_ = 0;
  StepMemory step_;
  std::string gpu_memory_;  // "NVIDIA H200: 139.8 GiB, 139.2 GiB free", or why there is no GPU
};

}  // namespace warpnet::viz
