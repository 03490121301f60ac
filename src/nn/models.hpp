// The models the lessons train: an MLP, LeNet-5 and a miniature AlexNet.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/layers.hpp"

namespace warpnet::nn {

// in → hidden… → classes, ReLU between layers. Input (N,in).
std::unique_ptr<Sequential> make_mlp(int64_t in, const std::vector<int64_t>& hidden, int64_t classes,
                                     uint64_t seed);
// LeNet-5 with ReLU and max pooling, for (N,1,28,28): conv 1→6 5×5 pad 2,
// pool, conv 6→16 5×5, pool, 400→120→84→10.
std::unique_ptr<Sequential> make_lenet5(int64_t classes, uint64_t seed);
// AlexNet in miniature for (N,1,28,28): five 3×3 convolutions (32, 64, 128,
// 128, 64 channels) with three max pools, then 576→256→128→classes with
// dropout, the layout of the 2012 network at a size a CPU trains in minutes.
std::unique_ptr<Sequential> make_mini_alexnet(int64_t classes, uint64_t seed);

// By name: "mlp", "lenet5", "alexnet". `input` is one example's shape, e.g.
// (1,28,28) or (2); an MLP flattens whatever it gets.
std::unique_ptr<Sequential> make_model(const std::string& name, const Shape& input, int64_t classes,
                                       uint64_t seed);
const std::vector<std::string>& model_names();

}  // namespace warpnet::nn
