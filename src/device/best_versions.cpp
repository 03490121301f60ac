// The version of each op that `--kernels best` (the default of `warpnet
// train --device emu|cuda`) runs: best_kernel() in backend.cpp.
//
// Written out, not "the highest number registered": a kernel a learner adds
// as matmul/19 must not become what every training run uses just by being
// added. To make a new version the default, measure it against the entry it
// replaces (`warpnet bench <op>` on a GPU, `warpnet train --device emu
// --kernels <op>=<N>` for the losses), then change its entry here in a
// reviewed commit. Each entry must be an fp32 version (no input_format) that
// both the emulator and the GPU run; tests/simt/test_backend.cpp checks that
// every op with such a version has an entry here and that each entry is one.
#include "device/backend.hpp"

namespace warpnet::device {

const std::map<std::string, int>& best_versions() {
  static const std::map<std::string, int> versions = {
      // GEMM and convolution: the last fp32 rung of each ladder (lessons 04 and 05).
      {"matmul", 10},  // 10_autotuned: a tile shape per size
      {"conv2d", 11},  // 11_winograd_fused, or another candidate where Winograd does not fit
      {"conv2d_dgrad", 7},
      {"conv2d_wgrad", 4},
      {"conv2d_nhwc", 6},
      // Rows: reductions and softmax.
      {"sum_rows", 5},
      {"max_rows", 5},
      {"softmax", 6},
      {"softmax_cross_entropy", 2},
      {"softmax_cross_entropy_backward", 1},
      // A whole network's step (nn::GraphedStep with TrainOptions::fused_step).
      {"lenet5_step", 1},
      {"bias_add_backward", 3},
      {"bias_relu_backward", 3},
      // Elementwise: the vectorized versions.
      {"add", 2},
      {"mul", 2},
      {"relu", 2},
      {"relu_backward", 2},
      {"gelu", 2},
      {"gelu_backward", 2},
      {"sigmoid", 2},
      {"sigmoid_backward", 2},
      {"tanh", 2},
      {"tanh_backward", 2},
      {"bias_add", 2},
      {"bias_relu", 2},
      {"dropout", 1},
      {"gather_rows", 1},
      // Pooling.
      {"max_pool2d", 1},
      {"max_pool2d_backward", 1},
      {"avg_pool2d", 1},
      {"avg_pool2d_backward", 1},
      // Optimizers: one launch for every parameter of a step (launch_many).
      {"sgd_momentum", 3},
      {"adam", 3},
      // A measurement, not a layer (the instruction ceilings): no training
      // run launches it, and its one fp32 version is the entry.
      {"peak", 1},
  };
  return versions;
}

}  // namespace warpnet::device
