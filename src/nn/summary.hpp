// A per-layer table of a model: output shape, parameters, FLOPs, bytes moved
// and the activation memory one forward pass keeps for backward.
#pragma once
#include <string>
#include <vector>

#include "nn/layers.hpp"

namespace warpnet::nn {

struct LayerSummary {
  std::string name, description;
  Shape output;
  int64_t parameters = 0;
  OpCost forward;            // one forward pass over the batch
  int64_t output_bytes = 0;  // f32 activation this layer produces
};

// Walks a Sequential for a batch of shape `input` (e.g. (64,1,28,28)).
std::vector<LayerSummary> summarize(Sequential& model, const Shape& input);
// The table as text, with totals.
std::string format_summary(const std::vector<LayerSummary>& rows);

}  // namespace warpnet::nn
