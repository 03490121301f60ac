#include "nn/module.hpp"

#include "core/memory.hpp"

namespace warpnet::nn {

ag::Var Module::operator()(const ag::Var& x) {
  MemoryScope scope(MemTag::activation, name_);
  return forward(x);
}

int64_t Module::parameter_count() {
  int64_t n = 0;
  for (Parameter* p : parameters()) n += p->var.value().numel();
  return n;
}

void Module::to(Device device) {
  for (Parameter* p : parameters()) p->var.value() = p->var.value().to(device);  // keeps the parameter tag
}

Parameter Module::make_parameter(const std::string& suffix, const Shape& shape) {
  MemoryScope scope(MemTag::parameter, name_);
  std::string full = name_ + "." + suffix;
  return Parameter{full, ag::Var(Tensor::zeros(shape), true, full)};
}

}  // namespace warpnet::nn
