// The checks every device backend passes (tests/simt for the emulator,
// tests/gpu for CUDA): tensors round-trip, host access is refused, and matmul
// with both gradients through the backend's best kernel matches the CPU
// (whose backward is checked by finite differences in tests/cpu), at sizes off
// every tile and in every layout.
#pragma once
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.hpp"
#include "device/backend.hpp"

namespace warpnet::backend_checks {

inline Tensor random(Shape shape, Rng& rng) {
  Tensor t = Tensor::empty(std::move(shape));
  fill_uniform(t, rng, -1.0, 1.0);
  return t;
}

// fp32 sums of n products of numbers in [-1, 1], in any order: |error| <=
// n·eps·Σ|a·b| <= n²·eps (the bound src/device/ops/matmul.cpp explains).
inline void check_close(const Tensor& got, const Tensor& want, int64_t n) {
  REQUIRE(got.shape() == want.shape());
  const double bound = double(n) * double(n) * 1.2e-7 + 1e-30;
  int64_t bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    if (!(std::abs(got.item(i) - want.item(i)) <= bound) && ++bad <= 3)
      MESSAGE("[", i, "] got ", got.item(i), ", want ", want.item(i));
  CHECK(bad == 0);
}

// Ops that round once, the same way on every device (an fp32 add or
// multiply, a comparison, a copy): the device must give the CPU's bits,
// the sign of a zero included. A NaN matches any NaN: IEEE 754 leaves its
// sign and payload to the implementation, and on an H200 (2026-12-04) ReLU
// returned a NaN whose bits differ from its input's, which the CPU passes
// on (nvcc may turn the select into a NaN-propagating max, whose NaN is
// the canonical one).
inline void check_same(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  int64_t bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.item(i), w = want.item(i);
    const bool same = std::isnan(w) ? std::isnan(g) : std::bit_cast<uint64_t>(g) == std::bit_cast<uint64_t>(w);
    if (!same && ++bad <= 3) MESSAGE("[", i, "] got ", g, ", want ", w);
  }
  CHECK(bad == 0);
}

inline void round_trip(Device device, uint64_t seed) {
  Rng rng(seed);
  const Tensor host = random({3, 5}, rng);
  const Tensor there = host.to(device);
  CHECK(there.device() == device);
  CHECK(there.describe() == cat("f32 (3,5) on ", name_of(device)));
  const std::string refused = cat("host access to a f32 (3,5) on ", name_of(device));
  CHECK_THROWS_WITH_AS(there.data<float>(), doctest::Contains(refused.c_str()), Error);
  const Tensor back = there.to(Device::cpu);
  for (int64_t i = 0; i < host.numel(); ++i) CHECK(back.item(i) == host.item(i));
}

inline void matmul_and_gradients(Device device, uint64_t seed) {
  const int64_t M = 37, N = 29, K = 41;
  for (const auto& [ta, tb] : {std::pair{false, false}, {false, true}, {true, false}, {true, true}}) {
    INFO(name_of(device), ": trans_a ", ta, " trans_b ", tb, " seed ", seed);
    Rng rng(seed);
    const Tensor a = ta ? random({K, M}, rng) : random({M, K}, rng);
    const Tensor b = tb ? random({N, K}, rng) : random({K, N}, rng);
    const Tensor dc = random({M, N}, rng);
    const Tensor a_dev = a.to(device), b_dev = b.to(device), dc_dev = dc.to(device);

    const Tensor c = device::matmul(a_dev, b_dev, ta, tb);
    CHECK(c.device() == device);
    check_close(c.to(Device::cpu), cpu::matmul(a, b, ta, tb), K);

    const auto want = cpu::matmul_backward(a, b, dc, ta, tb);
    const auto got = device::matmul_backward(a_dev, b_dev, dc_dev, ta, tb);
    check_close(got.da.to(Device::cpu), want.da, N);  // dA sums over N
    check_close(got.db.to(Device::cpu), want.db, M);  // dB sums over M
  }
}

// The layer ops of device/backend.hpp against their CPU twins at small,
// awkward shapes. The registry tests check each kernel against its reference
// with a derived bound; this checks what the backend adds: sizes, buffer
// order, and ops made of several kernels (a convolution with its bias, its
// three gradients). Bounds: check_close's n²·eps for sums of n products of
// values in [-1, 1]; n = 4 (a few roundings) for the elementwise ops that
// call exp or tanh; check_same (the CPU's bits) for those rounding once.
inline void layer_ops(Device device, uint64_t seed) {
  INFO(name_of(device), " seed ", seed);
  Rng rng(seed);
  auto there = [&](const Tensor& t) { return t.to(device); };
  auto back = [](const Tensor& t) { return t.to(Device::cpu); };

  // Convolution: C = 3, K = 5, 9x7 input, 3x3 filter, stride 2, padding 1.
  const cpu::Conv2dParams p{2, 1, 1};
  const Tensor x = random({2, 3, 9, 7}, rng), w = random({5, 3, 3, 3}, rng), b = random({5}, rng);
  const Tensor y = cpu::conv2d(x, w, b, p);
  const Tensor dy = random(y.shape(), rng);
  check_close(back(device::conv2d(there(x), there(w), there(b), p)), y, 27 + 1);
  const cpu::Conv2dGrads want = cpu::conv2d_backward(x, w, dy, p, true);
  const cpu::Conv2dGrads got = device::conv2d_backward(there(x), there(w), there(dy), p, true);
  check_close(back(got.dx), want.dx, 5 * 9);                           // K·R·S terms at most
  check_close(back(got.dw), want.dw, y.dim(0) * y.dim(2) * y.dim(3));  // N·P·Q
  check_close(back(got.db), want.db, y.dim(0) * y.dim(2) * y.dim(3));
  CHECK_FALSE(device::conv2d_backward(there(x), there(w), there(dy), p, false, false).dx.defined());

  // A linear layer's bias: (N, C) with S = 1.
  const Tensor m = random({7, 11}, rng), mb = random({11}, rng);
  check_same(back(device::bias_add(there(m), there(mb))), cpu::bias_add(m, mb));
  check_close(back(device::bias_add_backward(there(m))), cpu::bias_add_backward(m), 7);

  // Activations, on the convolution's output (negative and positive values).
  const Tensor a = y;
  check_same(back(device::relu(there(a))), cpu::relu(a));
  check_same(back(device::relu_backward(there(a), there(dy))), cpu::relu_backward(a, dy));
  Tensor with_nan = a.clone();  // a NaN passes through ReLU on every device, and so does its gradient, as PyTorch's
  with_nan.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  check_same(back(device::relu(there(with_nan))), cpu::relu(with_nan));
  CHECK(std::isnan(back(device::relu(there(with_nan))).item(3)));
  check_same(back(device::relu_backward(there(with_nan), there(dy))), cpu::relu_backward(with_nan, dy));
  CHECK(back(device::relu_backward(there(with_nan), there(dy))).item(3) == dy.item(3));
  // GELU at the ends of the line (-0 or x; slopes 0 or 1), never NaN: on every device as on the CPU.
  const Tensor ends = Tensor::from<float>({4}, {-INFINITY, -1e20f, 1e20f, INFINITY});
  const Tensor ones = Tensor::full({4}, 1.0);
  check_same(back(device::gelu(there(ends))), cpu::gelu(ends));
  check_same(back(device::gelu_backward(there(ends), there(ones))), cpu::gelu_backward(ends, ones));
  check_close(back(device::gelu(there(a))), cpu::gelu(a), 4);
  check_close(back(device::gelu_backward(there(a), there(dy))), cpu::gelu_backward(a, dy), 4);
  const Tensor s = cpu::sigmoid(a), t = cpu::tanh(a);
  check_close(back(device::sigmoid(there(a))), s, 4);
  check_close(back(device::sigmoid_backward(there(s), there(dy))), cpu::sigmoid_backward(s, dy), 4);
  check_close(back(device::tanh(there(a))), t, 4);
  check_close(back(device::tanh_backward(there(t), there(dy))), cpu::tanh_backward(t, dy), 4);

  // The vectorized versions' scalar path (elementwise/02: float4s only where
  // every pointer is 16-byte aligned): operands one float into a buffer.
  const auto misaligned = [&](const Tensor& t) {  // t's values flattened, at an odd offset on the device
    Tensor v = Tensor::zeros({t.numel() + 1}).to(device).rows(1, t.numel());
    v.copy_from(t.contiguous().reshape({t.numel()}));
    return v;
  };
  const auto flat = [](const Tensor& t) { return t.contiguous().reshape({t.numel()}); };
  check_same(back(device::relu(misaligned(a))), flat(cpu::relu(a)));
  check_same(back(device::relu_backward(misaligned(a), misaligned(dy))), flat(cpu::relu_backward(a, dy)));
  check_close(back(device::gelu(misaligned(a))), flat(cpu::gelu(a)), 4);
  check_close(back(device::sigmoid_backward(misaligned(s), misaligned(dy))), flat(cpu::sigmoid_backward(s, dy)), 4);
  Tensor acc_odd = misaligned(m);
  device::add_into(acc_odd, misaligned(m));
  Tensor m_twice = m.clone();
  cpu::add_into(m_twice, m);
  check_same(back(acc_odd), flat(m_twice));

  // Pooling: overlapping 3x3 windows, stride 2, padding 1, so a gradient
  // element may sum up to four windows.
  const cpu::Pool2dParams pool{3, 2, 1};
  const cpu::MaxPoolResult mp = cpu::max_pool2d(x, pool);
  const Tensor dp = random(mp.y.shape(), rng);
  check_same(back(device::max_pool2d(there(x), pool)), mp.y);
  check_close(back(device::max_pool2d_backward(there(x), there(dp), pool)),
              cpu::max_pool2d_backward(dp, mp.argmax, x.shape()), 4);
  // Two NaNs in the first window, (0,0) and (1,1) of the first plane (rows
  // of 7): its gradient goes to the last, as on the CPU and in PyTorch.
  Tensor x_nan = x.clone();
  x_nan.set(0, std::nan(""));
  x_nan.set(7 + 1, std::nan(""));
  const cpu::MaxPoolResult mp_nan = cpu::max_pool2d(x_nan, pool);
  CHECK(mp_nan.argmax.item(0) == 7 + 1);
  check_close(back(device::max_pool2d_backward(there(x_nan), there(dp), pool)),
              cpu::max_pool2d_backward(dp, mp_nan.argmax, x.shape()), 4);
  check_close(back(device::avg_pool2d(there(x), pool)), cpu::avg_pool2d(x, pool), 9);
  check_close(back(device::avg_pool2d_backward(there(dp), x.shape(), pool)),
              cpu::avg_pool2d_backward(dp, x.shape(), pool), 4);  // at most four windows' dp/9

  // Dropout: the same seed gives the same mask on every device.
  const uint64_t dropout_seed = rng.next_u64();
  const cpu::DropoutResult dc = cpu::dropout(x, 0.3, dropout_seed);
  const cpu::DropoutResult dd = device::dropout(there(x), 0.3, there(cpu::dropout_seed_words(dropout_seed)));
  check_same(back(dd.mask), dc.mask);
  check_same(back(dd.y), dc.y);
  const Tensor dx_in = random(x.shape(), rng);
  check_same(back(device::dropout_backward(there(dx_in), dd.mask)), cpu::dropout_backward(dx_in, dc.mask));

  // Softmax + cross-entropy over 10 classes, labels from the generator.
  const Tensor logits = random({13, 10}, rng);
  Tensor labels = Tensor::empty({13}, DType::i32);
  for (int64_t i = 0; i < 13; ++i) labels.data<int32_t>()[i] = int32_t(rng.below(10));
  const cpu::SoftmaxCrossEntropy ce = cpu::softmax_cross_entropy(logits, labels);
  const cpu::SoftmaxCrossEntropy ce_dev = device::softmax_cross_entropy(there(logits), there(labels));
  CHECK(ce_dev.loss == doctest::Approx(ce.loss).epsilon(1e-6));
  check_close(back(ce_dev.probs), ce.probs, 10);
  check_close(back(device::softmax_cross_entropy_backward(ce_dev.probs, there(labels), 0.5)),
              cpu::softmax_cross_entropy_backward(ce.probs, labels, 0.5), 10);
  // A label outside [0, C) (the CPU refuses it): that row's loss and gradient
  // are NaN on the device, the other rows' as they were.
  Tensor bad_labels = labels.clone();
  bad_labels.data<int32_t>()[4] = 10;
  const cpu::SoftmaxCrossEntropy ce_bad = device::softmax_cross_entropy(there(logits), there(bad_labels));
  CHECK(std::isnan(ce_bad.loss));
  const Tensor dz_bad = back(device::softmax_cross_entropy_backward(ce_dev.probs, there(bad_labels), 0.5));
  const Tensor dz = back(device::softmax_cross_entropy_backward(ce_dev.probs, there(labels), 0.5));
  for (int64_t i = 0; i < dz.numel(); ++i) {
    if (i / 10 == 4) CHECK(std::isnan(dz_bad.item(i)));
    else CHECK(dz_bad.item(i) == dz.item(i));
  }

  // Gradient accumulation.
  Tensor acc = there(m);
  device::add_into(acc, there(m));
  Tensor twice = m.clone();
  cpu::add_into(twice, m);
  check_same(back(acc), twice);
}

// One optimizer step over many parameters, in place, against the CPU's
// loops: 18 parameters (two launches of a multi-tensor version, 16 per
// launch), 1 to 4099 elements, three of them views one float into a buffer
// (not 16-byte aligned: the kernels' scalar path). With the best kernels
// (sgd_momentum/03, adam/03: one launch per 16) and with version 2 (one
// launch per parameter).
inline void optimizer_steps(Device device, uint64_t seed) {
  const std::vector<int64_t> sizes = {1, 7, 33, 1000, 1031, 4099, 6, 150, 2400, 16, 2050, 120, 10, 84, 840, 5, 3, 4096};
  for (const char* choice : {"best", "sgd_momentum=2,adam=2"}) {
    CAPTURE(choice);
    device::set_kernel_choice(choice);
    Rng rng(seed);
    // Host tensors, and the same values on the device (every third a view at an odd offset).
    std::vector<std::array<Tensor, 4>> host, dev;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::array<Tensor, 4>& h = host.emplace_back();
      std::array<Tensor, 4>& d = dev.emplace_back();
      for (size_t k = 0; k < 4; ++k) {
        h[k] = random({sizes[i]}, rng);
        d[k] = i % 6 == 1 ? Tensor::zeros({sizes[i] + 1}).to(device).rows(1, sizes[i]) : Tensor::empty({sizes[i]}, DType::f32, device);
        d[k].copy_from(h[k]);
      }
      h[2] = h[2].clone();  // Adam's second moment must be >= 0
      for (int64_t j = 0; j < sizes[i]; ++j) h[2].set(j, std::abs(h[2].item(j)));
      d[2].copy_from(h[2]);
    }
    // SGD: {w, v, g} = tensors 0, 1, 3.
    std::vector<std::array<Tensor*, 3>> sgd;
    for (auto& d : dev) sgd.push_back({&d[0], &d[1], &d[3]});
    device::sgd_momentum_update(sgd, Tensor::from<float>({3}, {0.1f, 0.9f, 1e-4f}).to(device));
    for (size_t i = 0; i < sizes.size(); ++i) {
      CAPTURE(i);
      Tensor w = host[i][0].clone(), v = host[i][1].clone();
      cpu::sgd_momentum_update(w, v, host[i][3], 0.1, 0.9, 1e-4);
      check_close(dev[i][0].to(Device::cpu), w, 4);
      check_close(dev[i][1].to(Device::cpu), v, 4);
    }
    // Adam on the updated tensors: {w, m, v, g} = 0, 1, 2, 3.
    for (size_t i = 0; i < sizes.size(); ++i)
      for (size_t k = 0; k < 2; ++k) host[i][k] = dev[i][k].to(Device::cpu);
    // One parameter (tensor 0, of 1) whose step ε decides: v = g = 0 leave
    // √v = 0, so the step is step_size·m/ε, some 10^4 (ε under the root, or
    // left out, would be 10^4 times smaller, or infinite).
    for (size_t k : {2, 3}) {
      host[0][k].set(0, 0.0);
      dev[0][k].copy_from(host[0][k]);
    }
    std::vector<std::array<Tensor*, 4>> adam;
    for (auto& d : dev) adam.push_back({&d[0], &d[1], &d[2], &d[3]});
    device::adam_update(adam, Tensor::from<float>({4}, {1e-3f, 0.9f, 0.999f, 1e-8f}).to(device));
    for (size_t i = 0; i < sizes.size(); ++i) {
      CAPTURE(i);
      Tensor w = host[i][0].clone(), m = host[i][1].clone(), v = host[i][2].clone();
      cpu::adam_update(w, m, v, host[i][3], 1e-3, 0.9, 0.999, 1e-8);
      if (i == 0)  // the ε-sized step: a few fp32 roundings of a value near 10^4, relative
        CHECK(std::abs(dev[i][0].to(Device::cpu).item(0) - w.item(0)) <= 4 * 1.2e-7 * std::abs(w.item(0)));
      else
        check_close(dev[i][0].to(Device::cpu), w, 4);
      check_close(dev[i][1].to(Device::cpu), m, 4);
      check_close(dev[i][2].to(Device::cpu), v, 4);
    }
    // What ran: the multi-tensor version, or v2 one parameter at a time.
    const bool best = choice == std::string("best");
    CHECK((device::chosen_kernel("sgd_momentum", device).launch_many != nullptr) == best);
    CHECK((device::chosen_kernel("adam", device).launch_many != nullptr) == best);
  }
  device::set_kernel_choice("best");
}

}  // namespace warpnet::backend_checks
