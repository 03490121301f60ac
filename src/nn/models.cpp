#include "nn/models.hpp"

namespace warpnet::nn {

std::unique_ptr<Sequential> make_mlp(int64_t in, const std::vector<int64_t>& hidden, int64_t classes,
                                     uint64_t seed) {
  Rng rng(seed);
  auto net = std::make_unique<Sequential>("mlp");
  net->add<Flatten>("flatten");
  int64_t width = in;
  for (size_t i = 0; i < hidden.size(); ++i) {
    net->add<Linear>(cat("fc", i + 1), width, hidden[i], rng);
    net->add<ReLU>(cat("relu", i + 1));
    width = hidden[i];
  }
  net->add<Linear>(cat("fc", hidden.size() + 1), width, classes, rng);
  return net;
}

std::unique_ptr<Sequential> make_lenet5(int64_t classes, uint64_t seed) {
  Rng rng(seed);
  auto net = std::make_unique<Sequential>("lenet5");
  net->add<Conv2d>("conv1", 1, 6, 5, rng, cpu::Conv2dParams{1, 2, 1});  // (N,6,28,28)
  net->add<ReLU>("relu1");
  net->add<MaxPool2d>("pool1", 2, 2);                                   // (N,6,14,14)
  net->add<Conv2d>("conv2", 6, 16, 5, rng);                             // (N,16,10,10)
  net->add<ReLU>("relu2");
  net->add<MaxPool2d>("pool2", 2, 2);                                   // (N,16,5,5)
  net->add<Flatten>("flatten");                                         // (N,400)
  net->add<Linear>("fc1", 400, 120, rng);
  net->add<ReLU>("relu3");
  net->add<Linear>("fc2", 120, 84, rng);
  net->add<ReLU>("relu4");
  net->add<Linear>("fc3", 84, classes, rng);
  return net;
}

std::unique_ptr<Sequential> make_mini_alexnet(int64_t classes, uint64_t seed) {
  Rng rng(seed);
  const cpu::Conv2dParams same{1, 1, 1};
  auto net = std::make_unique<Sequential>("alexnet");
  net->add<Conv2d>("conv1", 1, 32, 3, rng, same);     // (N,32,28,28)
  net->add<ReLU>("relu1");
  net->add<MaxPool2d>("pool1", 2, 2);                 // (N,32,14,14)
  net->add<Conv2d>("conv2", 32, 64, 3, rng, same);    // (N,64,14,14)
  net->add<ReLU>("relu2");
  net->add<MaxPool2d>("pool2", 2, 2);                 // (N,64,7,7)
  net->add<Conv2d>("conv3", 64, 128, 3, rng, same);   // (N,128,7,7)
  net->add<ReLU>("relu3");
  net->add<Conv2d>("conv4", 128, 128, 3, rng, same);  // (N,128,7,7)
  net->add<ReLU>("relu4");
  net->add<Conv2d>("conv5", 128, 64, 3, rng, same);   // (N,64,7,7)
  net->add<ReLU>("relu5");
  net->add<MaxPool2d>("pool3", 2, 2);                 // (N,64,3,3)
  net->add<Flatten>("flatten");                       // (N,576)
  net->add<Dropout>("drop1", 0.5, seed + 1);
  net->add<Linear>("fc1", 576, 256, rng);
  net->add<ReLU>("relu6");
  net->add<Dropout>("drop2", 0.5, seed + 2);
  net->add<Linear>("fc2", 256, 128, rng);
  net->add<ReLU>("relu7");
  net->add<Linear>("fc3", 128, classes, rng);
  return net;
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names{"mlp", "lenet5", "alexnet"};
  return names;
}

std::unique_ptr<Sequential> make_model(const std::string& name, const Shape& input, int64_t classes,
                                       uint64_t seed) {
  const bool image28 = input == Shape{1, 28, 28};
  if (name == "mlp") return make_mlp(input.numel(), {128, 64}, classes, seed);
  if (name == "lenet5" || name == "alexnet") {
    WN_CHECK(image28, "model ", name, " expects 1×28×28 images, but the data set gives examples of shape ", input,
             " (the MLP, `warpnet train --model mlp`, takes examples of any shape)");
    return name == "lenet5" ? make_lenet5(classes, seed) : make_mini_alexnet(classes, seed);
  }
  fail("unknown model '", name, "' (choose mlp, lenet5 or alexnet)");
}

}  // namespace warpnet::nn
