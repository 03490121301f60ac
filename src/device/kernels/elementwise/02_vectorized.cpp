#include "device/kernels/elementwise/elementwise_registration.hpp"

namespace {
#include "kernels/elementwise/02_vectorized.cu"
}  // namespace

namespace warpnet::device::elementwise_kernels {
namespace {

constexpr const char* kShapeText = "block (256), grid (min(ceil(n/1024), 1056)): grid-stride loop, a float4 per "
                                   "thread per iteration, the last n % 4 elements scalar";
// One thread per float4 (the tail needs at most 3 threads, which the first
// block always has).
Launch shape(const Sizes& s) { return capped_grid((int64_t(n(s)) + 3) / 4); }

const Registration relu{unary_kernel(
    "relu", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kReluFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_unary(s, l, b, unary_vectorized<kBlock, Relu>, /*dependent=*/true);
    })};
const Registration relu_backward{binary_kernel(
    "relu_backward", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kReluBackwardFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_binary(s, l, b, binary_vectorized<kBlock, ReluBackward>);
    })};

const Registration gelu{unary_kernel(
    "gelu", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kGeluFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_unary(s, l, b, unary_vectorized<kBlock, Gelu>, /*dependent=*/true);
    })};
const Registration gelu_backward{binary_kernel(
    "gelu_backward", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kGeluBackwardFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_binary(s, l, b, binary_vectorized<kBlock, GeluBackward>);
    })};

const Registration sigmoid{unary_kernel(
    "sigmoid", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kSigmoidFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_unary(s, l, b, unary_vectorized<kBlock, Sigmoid>, /*dependent=*/true);
    })};
const Registration sigmoid_backward{binary_kernel(
    "sigmoid_backward", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kSigmoidBackwardFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_binary(s, l, b, binary_vectorized<kBlock, SigmoidBackward>);
    })};

const Registration tanh_op{unary_kernel(
    "tanh", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kTanhFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_unary(s, l, b, unary_vectorized<kBlock, Tanh>, /*dependent=*/true);
    })};
const Registration tanh_backward{binary_kernel(
    "tanh_backward", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kTanhBackwardFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) {
      launch_binary(s, l, b, binary_vectorized<kBlock, TanhBackward>);
    })};

// mul: c = a ⊙ b, buffers {a, b, c}; the backward of dropout (dy ⊙ mask).
const Registration mul{binary_kernel(
    "mul", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kMulFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) { launch_binary(s, l, b, binary_vectorized<kBlock, Mul>); })};

// add: c = a + b, buffers {a, b, c}; gradients accumulating (autograd's +=).
const Registration add{binary_kernel(
    "add", 2, "vectorized", kShapeText, shape, [](const Sizes& s) { return kAddFlops * n(s); },
    [](const Sizes& s, const Launch& l, Buffers b) { launch_binary(s, l, b, binary_vectorized<kBlock, Add>); })};

const Registration bias_add{Kernel{
    .op = "bias_add",
    .version = 2,
    .name = "vectorized",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = [](const Sizes& s) { return capped_grid((bias_elements(s) + 3) / 4); },
    .flops = bias_flops,
    .bytes = bias_bytes,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_bias(s, l, b, bias_add_vectorized<kBlock>); },
    .copy = kThisCopy,
}};

// bias_relu: y = max(x + b, 0), buffers {x, b, y}: bias_add's loop with the
// ReLU applied before the store.
const Registration bias_relu{Kernel{
    .op = "bias_relu",
    .version = 2,
    .name = "vectorized",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = [](const Sizes& s) { return capped_grid((bias_elements(s) + 3) / 4); },
    .flops = [](const Sizes& s) { return bias_flops(s) + kReluFlops * double(bias_elements(s)); },
    .bytes = bias_bytes,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_bias(s, l, b, bias_add_vectorized<kBlock, Relu>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::elementwise_kernels
