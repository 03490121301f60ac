#include "device/kernels/elementwise/elementwise_registration.hpp"

namespace {
#include "kernels/elementwise/01_grid_stride.cu"
}  // namespace

namespace warpnet::device::elementwise_kernels {
namespace {

constexpr const char* kShapeText = "block (256), grid (min(ceil(n/256), 1056)): grid-stride loop, one element per "
                                   "thread per iteration";
Launch shape(const Sizes& s) { return capped_grid(n(s)); }

const Registration relu{unary_kernel(
    "relu", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kReluFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) { launch_unary(s, l, b, unary_grid_stride<kBlock, Relu>); })};
const Registration relu_backward{binary_kernel(
    "relu_backward", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kReluBackwardFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_binary(s, l, b, binary_grid_stride<kBlock, ReluBackward>);
    })};

const Registration gelu{unary_kernel(
    "gelu", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kGeluFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) { launch_unary(s, l, b, unary_grid_stride<kBlock, Gelu>); })};
const Registration gelu_backward{binary_kernel(
    "gelu_backward", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kGeluBackwardFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_binary(s, l, b, binary_grid_stride<kBlock, GeluBackward>);
    })};

const Registration sigmoid{unary_kernel(
    "sigmoid", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kSigmoidFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) { launch_unary(s, l, b, unary_grid_stride<kBlock, Sigmoid>); })};
const Registration sigmoid_backward{binary_kernel(
    "sigmoid_backward", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kSigmoidBackwardFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_binary(s, l, b, binary_grid_stride<kBlock, SigmoidBackward>);
    })};

const Registration tanh_op{unary_kernel(
    "tanh", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kTanhFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) { launch_unary(s, l, b, unary_grid_stride<kBlock, Tanh>); })};
const Registration tanh_backward{binary_kernel(
    "tanh_backward", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kTanhBackwardFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_binary(s, l, b, binary_grid_stride<kBlock, TanhBackward>);
    })};

// mul: c = a ⊙ b, buffers {a, b, c}; the backward of dropout (dy ⊙ mask).
const Registration mul{binary_kernel(
    "mul", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kMulFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) { launch_binary(s, l, b, binary_grid_stride<kBlock, Mul>); })};

// add: c = a + b, buffers {a, b, c}; gradients accumulating (autograd's +=).
const Registration add{binary_kernel(
    "add", 1, "grid_stride", kShapeText, shape, [](const Sizes& s) { return kAddFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) { launch_binary(s, l, b, binary_grid_stride<kBlock, Add>); })};

const Registration bias_add{Kernel{
    .op = "bias_add",
    .version = 1,
    .name = "grid_stride",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = [](const Sizes& s) { return capped_grid(bias_elements(s)); },
    .flops = bias_flops,
    .bytes = bias_bytes,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_bias(s, l, b, bias_add_grid_stride<kBlock>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::elementwise_kernels
