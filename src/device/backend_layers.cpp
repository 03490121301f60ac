// The layer ops of device/backend.hpp: each turns tensor shapes into the
// registry op's sizes, allocates the outputs on the device and launches the
// chosen kernel (launch_op). The arithmetic is the kernels'; what is here is
// bookkeeping, and the few places where a device op is composed of several
// kernels (a convolution with a bias, the gradients of one).
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "core/error.hpp"
#include "device/backend.hpp"
#include "device/graph.hpp"

namespace warpnet::device {

namespace {

Tensor empty_like(const Shape& shape, const Tensor& on) { return Tensor::empty(shape, DType::f32, on.device()); }

// An activation op over the n elements of x (or of x and a second tensor of its shape).
Tensor unary(const char* op, const Tensor& x) {
  Tensor y = empty_like(x.shape(), x);
  launch_op(op, {x.numel()}, {&x}, {&y});
  return y;
}
Tensor binary(const char* op, const Tensor& a, const Tensor& b) {
  WN_CHECK(a.shape() == b.shape(), "device::", op, ": ", a.describe(), " and ", b.describe(), " differ in shape");
  Tensor c = empty_like(a.shape(), a);
  launch_op(op, {a.numel()}, {&a, &b}, {&c});
  return c;
}

// {N, C, S}: x viewed as (N, C, H·W), S = 1 for an (N, C) matrix.
Sizes channel_sizes(const char* op, const Tensor& x) {
  WN_CHECK(x.rank() == 2 || x.rank() == 4, "device::", op, ": needs (N,C) or (N,C,H,W), got ", x.describe());
  return {x.dim(0), x.dim(1), x.rank() == 4 ? x.dim(2) * x.dim(3) : 1};
}

// The conv ops' sizes {N, C, H, W, K, R, S, stride, pad, dilation}.
Sizes conv_sizes(const char* op, const Shape& x, const Shape& w, const cpu::Conv2dParams& p) {
  WN_CHECK(x.rank() == 4 && w.rank() == 4 && x[1] == w[1], "device::", op, ": x ", x, " and w ", w,
           " are not (N,C,H,W) and (K,C,R,S) with one C");
  return {x[0], x[1], x[2], x[3], w[0], w[2], w[3], p.stride, p.padding, p.dilation};
}

// The pool ops' sizes {N, C, H, W, kernel, stride, padding}.
Sizes pool_sizes(const char* op, const Shape& x, const cpu::Pool2dParams& p) {
  WN_CHECK(x.rank() == 4, "device::", op, ": needs (N,C,H,W), got ", x);
  return {x[0], x[1], x[2], x[3], p.kernel, p.stride, p.padding};
}

Shape pooled(const Shape& x, const cpu::Pool2dParams& p) {
  const cpu::Conv2dParams as_conv{p.stride, p.padding, 1};
  return {x[0], x[1], cpu::conv_out_size(x[2], p.kernel, as_conv), cpu::conv_out_size(x[3], p.kernel, as_conv)};
}

// A constant on the device, uploaded the first time it is asked for and
// kept: what the fused kernels read their scalars from. Kept, because the
// same few values (a loss's gradient seed) come back every step, and because
// an upload is a synchronous copy, which a step being captured in a graph
// may not make (device/graph.hpp): a step warmed up once finds its constants
// here. Never destroyed: tensors on the device must not be released during
// static destruction.
const Tensor& device_constant(double value, Device device) {
  static auto* kept = new std::map<std::pair<Device, double>, Tensor>;
  Tensor& t = (*kept)[{device, value}];
  if (!t.defined()) t = Tensor::full({1}, value).to(device);
  return t;
}

}  // namespace

namespace {
// bias_add and bias_relu: y = f(x + b), b along axis 1.
Tensor bias_op(const char* op, const Tensor& x, const Tensor& b) {
  const Sizes s = channel_sizes(op, x);
  WN_CHECK(b.rank() == 1 && b.dim(0) == s[1], "device::", op, ": b is ", b.describe(), ", x has ", s[1], " channels");
  Tensor y = empty_like(x.shape(), x);
  launch_op(op, s, {&x, &b}, {&y});
  return y;
}
}  // namespace

Tensor bias_add(const Tensor& x, const Tensor& b) { return bias_op("bias_add", x, b); }
Tensor bias_relu(const Tensor& x, const Tensor& b) { return bias_op("bias_relu", x, b); }

Tensor bias_add_backward(const Tensor& dy) {
  const Sizes s = channel_sizes("bias_add_backward", dy);
  Tensor db = empty_like({s[1]}, dy);
  launch_op("bias_add_backward", s, {&dy}, {&db});
  return db;
}

cpu::BiasReluGrads bias_relu_backward(const Tensor& y, const Tensor& dy) {
  const Sizes s = channel_sizes("bias_relu_backward", dy);
  WN_CHECK(y.shape() == dy.shape(), "device::bias_relu_backward: y ", y.describe(), " and dy ", dy.describe(),
           " differ in shape");
  cpu::BiasReluGrads g{empty_like(dy.shape(), dy), empty_like({s[1]}, dy)};
  launch_op("bias_relu_backward", s, {&y, &dy}, {&g.dx, &g.db});
  return g;
}

Tensor relu(const Tensor& x) { return unary("relu", x); }
Tensor relu_backward(const Tensor& x, const Tensor& dy) { return binary("relu_backward", x, dy); }
Tensor gelu(const Tensor& x) { return unary("gelu", x); }
Tensor gelu_backward(const Tensor& x, const Tensor& dy) { return binary("gelu_backward", x, dy); }
Tensor sigmoid(const Tensor& x) { return unary("sigmoid", x); }
Tensor sigmoid_backward(const Tensor& y, const Tensor& dy) { return binary("sigmoid_backward", y, dy); }
Tensor tanh(const Tensor& x) { return unary("tanh", x); }
Tensor tanh_backward(const Tensor& y, const Tensor& dy) { return binary("tanh_backward", y, dy); }

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::Conv2dParams& p) {
  const Sizes s = conv_sizes("conv2d", x.shape(), w.shape(), p);
  const int64_t P = cpu::conv_out_size(s[2], s[5], p), Q = cpu::conv_out_size(s[3], s[6], p);
  WN_CHECK(P > 0 && Q > 0, "device::conv2d: a ", s[5], "x", s[6], " filter does not fit x ", x.shape(),
           " with padding ", p.padding, " and dilation ", p.dilation);
  Tensor y = empty_like({s[0], s[4], P, Q}, x);
  launch_op("conv2d", s, {&x, &w}, {&y});
  return bias.defined() ? bias_add(y, bias) : y;
}

cpu::Conv2dGrads conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& dy, const cpu::Conv2dParams& p,
                                 bool has_bias, bool needs_dx) {
  const Sizes s = conv_sizes("conv2d_backward", x.shape(), w.shape(), p);
  cpu::Conv2dGrads g;
  if (needs_dx) {
    g.dx = empty_like(x.shape(), x);
    launch_op("conv2d_dgrad", s, {&dy, &w}, {&g.dx});
  }
  g.dw = empty_like(w.shape(), w);
  launch_op("conv2d_wgrad", s, {&x, &dy}, {&g.dw});
  if (has_bias) g.db = bias_add_backward(dy);
  return g;
}

Tensor max_pool2d(const Tensor& x, const cpu::Pool2dParams& p) {
  Tensor y = empty_like(pooled(x.shape(), p), x);
  launch_op("max_pool2d", pool_sizes("max_pool2d", x.shape(), p), {&x}, {&y});
  return y;
}

Tensor max_pool2d_backward(const Tensor& x, const Tensor& dy, const cpu::Pool2dParams& p) {
  Tensor dx = empty_like(x.shape(), x);
  launch_op("max_pool2d_backward", pool_sizes("max_pool2d_backward", x.shape(), p), {&x, &dy}, {&dx});
  return dx;
}

Tensor avg_pool2d(const Tensor& x, const cpu::Pool2dParams& p) {
  Tensor y = empty_like(pooled(x.shape(), p), x);
  launch_op("avg_pool2d", pool_sizes("avg_pool2d", x.shape(), p), {&x}, {&y});
  return y;
}

Tensor avg_pool2d_backward(const Tensor& dy, const Shape& x_shape, const cpu::Pool2dParams& p) {
  Tensor dx = empty_like(x_shape, dy);
  launch_op("avg_pool2d_backward", pool_sizes("avg_pool2d_backward", x_shape, p), {&dy}, {&dx});
  return dx;
}

cpu::DropoutResult dropout(const Tensor& x, double p, const Tensor& seed) {
  // The op takes p in millionths (device/ops/dropout_sizes.hpp): exact for
  // every p a user types with six decimals or fewer.
  const int64_t millionths = std::llround(p * 1e6);
  WN_CHECK(p >= 0.0 && p < 1.0 && double(millionths) / 1e6 == p, "device::dropout: p = ", p,
           " must be in [0, 1) with at most six decimals (the kernel takes it in millionths)");
  WN_CHECK(seed.dtype() == DType::i32 && seed.numel() == 2, "device::dropout: the seed is ", seed.describe(),
           "; it is an i32 (2) tensor (cpu::dropout_seed_words)");
  cpu::DropoutResult r{empty_like(x.shape(), x), empty_like(x.shape(), x)};
  launch_op("dropout", {x.numel(), millionths}, {&x, &seed}, {&r.y, &r.mask});
  return r;
}

Tensor dropout_backward(const Tensor& dy, const Tensor& mask) { return binary("mul", dy, mask); }

void gather_rows(const Tensor& table, const Tensor& indices, Tensor& out) {
  WN_CHECK(table.rank() >= 1 && table.dim(0) > 0, "device::gather_rows: the table is ", table.describe(),
           "; it needs at least one row");
  WN_CHECK(indices.dtype() == DType::i32 && indices.rank() == 1, "device::gather_rows: the indices are ",
           indices.describe(), "; they are an i32 (B) tensor");
  const int64_t rows = indices.dim(0), width = table.numel() / table.dim(0);
  WN_CHECK(out.dtype() == table.dtype() && out.numel() == rows * width, "device::gather_rows: out is ", out.describe(),
           ", but ", rows, " rows of ", table.describe(), " are ", rows * width, " ", name_of(table.dtype()),
           " elements");
  launch_op("gather_rows", {rows, width, table.dim(0)}, {&table, &indices}, {&out});
}

cpu::SoftmaxCrossEntropy softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
  WN_CHECK(logits.rank() == 2 && labels.rank() == 1 && labels.dim(0) == logits.dim(0) && labels.dtype() == DType::i32,
           "device::softmax_cross_entropy: logits ", logits.describe(), " and labels ", labels.describe(),
           " are not (N,C) and i32 (N)");
  const int64_t N = logits.dim(0), C = logits.dim(1);
  Tensor loss = empty_like({N}, logits);
  cpu::SoftmaxCrossEntropy out;
  out.probs = empty_like({N, C}, logits);
  launch_op("softmax_cross_entropy", {N, C}, {&logits, &labels}, {&loss, &out.probs});
  if (capturing()) {
    // Recorded, not run: there is no loss yet, and a download would end the
    // capture. Whoever replays the graph reads row_loss afterwards.
    out.loss = std::numeric_limits<double>::quiet_NaN();
  } else {
    out.loss = mean_row_loss(loss);
  }
  out.row_loss = std::move(loss);
  return out;
}

double mean_row_loss(const Tensor& row_loss) {
  const Tensor rows = row_loss.to(Device::cpu);
  double sum = 0;
  for (int64_t i = 0; i < rows.numel(); ++i) sum += rows.item(i);
  return rows.numel() ? sum / double(rows.numel()) : 0.0;
}

Tensor softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, double dloss) {
  const Tensor& scale = device_constant(dloss, probs.device());
  Tensor dlogits = empty_like(probs.shape(), probs);
  launch_op("softmax_cross_entropy_backward", {probs.dim(0), probs.dim(1)}, {&probs, &labels, &scale}, {&dlogits});
  return dlogits;
}

void add_into(Tensor& dst, const Tensor& src) { dst = binary("add", dst, src); }

Lenet5Step lenet5_step(const Tensor& x, const Tensor& labels, std::span<const Tensor* const> params) {
  WN_CHECK(x.rank() == 4 && x.dim(1) == 1 && x.dim(2) == 28 && x.dim(3) == 28, "device::lenet5_step: x is ",
           x.describe(), ", LeNet-5 takes (N,1,28,28) images");
  WN_CHECK(labels.rank() == 1 && labels.dtype() == DType::i32 && labels.dim(0) == x.dim(0),
           "device::lenet5_step: labels ", labels.describe(), " are not i32 (", x.dim(0), ")");
  WN_CHECK(params.size() == 10, "device::lenet5_step: ", params.size(), " parameters, LeNet-5 has 10");
  const int64_t N = x.dim(0), C = params[9]->numel();
  const Sizes sizes = {N, C};
  const std::vector<Shape> shapes = op("lenet5_step").output_shapes(sizes);  // probs, row_loss, the gradients
  for (size_t i = 0; i < params.size(); ++i)
    WN_CHECK(params[i]->shape() == shapes[2 + i], "device::lenet5_step: parameter ", i + 1, " is ",
             params[i]->describe(), ", LeNet-5's is ", shapes[2 + i].str());
  Lenet5Step out{empty_like(shapes[0], x), empty_like(shapes[1], x), {}};
  for (size_t i = 0; i < params.size(); ++i) out.grads.push_back(empty_like(shapes[2 + i], x));
  std::vector<Tensor>& g = out.grads;
  const auto& p = params;
  launch_op("lenet5_step", sizes, {&x, &labels, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9]},
            {&out.probs, &out.row_loss, &g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7], &g[8], &g[9]});
  return out;
}

namespace {
// One entry per parameter: its tensors (N of them, the gradient last) then
// hyper as the op's inputs, all but the gradient as its outputs (in place:
// the kernels read each element before they write it, kernels/optim).
template <size_t N>
void update_all(const char* op, std::span<const std::array<Tensor*, N>> params, const Tensor& hyper) {
  std::vector<OpTensors> entries;
  for (const std::array<Tensor*, N>& p : params) {
    OpTensors& e = entries.emplace_back();
    for (size_t k = 0; k < N; ++k) {
      WN_CHECK(p[k]->numel() == p[0]->numel(), "device::", op, ": ", p[0]->describe(), " and ", p[k]->describe(),
               " differ in size");
      e.inputs.push_back(p[k]);
      if (k + 1 < N) e.outputs.push_back(p[k]);
    }
    e.inputs.push_back(&hyper);
  }
  launch_op_many(op, entries);
}
}  // namespace

void sgd_momentum_update(std::span<const std::array<Tensor*, 3>> params, const Tensor& hyper) {
  WN_CHECK(hyper.numel() == 3, "device::sgd_momentum_update: hyper is ", hyper.describe(),
           "; it holds {lr, momentum, weight_decay}");
  update_all("sgd_momentum", params, hyper);
}

void adam_update(std::span<const std::array<Tensor*, 4>> params, const Tensor& hyper) {
  WN_CHECK(hyper.numel() == 4, "device::adam_update: hyper is ", hyper.describe(),
           "; it holds {step_size, beta1, beta2, eps_hat}");
  update_all("adam", params, hyper);
}

}  // namespace warpnet::device
