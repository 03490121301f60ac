// The checks every device backend passes (tests/simt for the emulator,
// tests/gpu for CUDA): tensors round-trip, host access is refused, and matmul
// with both gradients through the backend's best kernel matches the CPU
// (whose backward is checked by finite differences in tests/cpu), at sizes off
// every tile and in every layout.
#pragma once
#include <doctest/doctest.h>

#include <cmath>

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

}  // namespace warpnet::backend_checks
