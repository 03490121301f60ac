#include "nn/summary.hpp"

#include <cstdio>

#include "core/text.hpp"

namespace warpnet::nn {

std::vector<LayerSummary> summarize(Sequential& model, const Shape& input) {
  std::vector<LayerSummary> rows;
  Shape shape = input;
  for (const auto& layer : model.layers()) {
    LayerSummary row;
    row.name = layer->name();
    row.description = layer->describe();
    row.forward = layer->cost(shape);
    shape = layer->output_shape(shape);
    row.output = shape;
    row.parameters = layer->parameter_count();
    row.output_bytes = shape.numel() * 4;
    rows.push_back(row);
  }
  return rows;
}

std::string format_summary(const std::vector<LayerSummary>& rows) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "  %-8s %-28s %-16s %10s %10s %10s %8s\n", "layer", "", "output", "params",
                "MFLOP", "MB moved", "FLOP/B");
  out += line;
  int64_t params = 0;
  OpCost total;
  for (const LayerSummary& r : rows) {
    std::snprintf(line, sizeof line, "  %-8s %s %-16s %10lld %10.2f %10.2f %8.2f\n", r.name.c_str(),
                  pad_right(r.description, 28).c_str(), r.output.str().c_str(), static_cast<long long>(r.parameters),
                  r.forward.flops / 1e6, r.forward.bytes() / 1e6, r.forward.intensity());
    out += line;
    params += r.parameters;
    total += r.forward;
  }
  std::snprintf(line, sizeof line, "  %-8s %-28s %-16s %10lld %10.2f %10.2f %8.2f\n", "total", "", "",
                static_cast<long long>(params), total.flops / 1e6, total.bytes() / 1e6, total.intensity());
  out += line;
  return out;
}

}  // namespace warpnet::nn
