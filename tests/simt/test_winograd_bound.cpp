// Which bound the registry's checks give the Winograd versions (conv2d v10,
// v11, v12; conv2d_dgrad v6, v7, v8): Winograd's own (device/kernels/conv/
// winograd_bound.hpp), for the arithmetic the choice runs — F(2x2, 3x3) or
// F(4x4, 3x3) — at the sizes where their choice is a Winograd candidate,
// the op's where it is one of the earlier versions' kernels, in both
// emulator copies; the versions without a Winograd candidate keep the op's.
// (The registry test then checks every kernel through compare(), which
// takes the bound from tolerance_of.)
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "device/kernels/conv/winograd_bound.hpp"
#include "device/registry.hpp"
#include "device/run.hpp"

using namespace warpnet;

namespace {

constexpr uint64_t kSeed = 2026;

bool same(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.item(i) != b.item(i)) return false;
  return true;
}

}  // namespace

TEST_CASE("winograd bound: a Winograd version is checked against Winograd's bound where it runs a Winograd candidate") {
  namespace wb = device::conv::winograd_bound;
  using device::conv::WinogradTile;
  struct Version {
    const char* id;
    bool forward;
  };
  // The bound of the arithmetic candidate `name` runs (its name says which).
  const auto bound_of = [](const Version& v, const std::string& name, const device::Sizes& sizes,
                           const std::vector<Tensor>& inputs) {
    const bool f4x4 = name.starts_with("winograd F(4x4,3x3)");
    REQUIRE((f4x4 || name.starts_with("winograd F(2x2,3x3)")));
    const WinogradTile tile = f4x4 ? WinogradTile::f4x4 : WinogradTile::f2x2;
    return v.forward ? wb::forward_tolerance(sizes, inputs, tile) : wb::dgrad_tolerance(sizes, inputs, tile);
  };
  for (const device::Copy copy : {device::Copy::emulator, device::Copy::traced}) {
    for (const Version v : {Version{"conv2d/10", true}, Version{"conv2d/11", true}, Version{"conv2d/12", true},
                            Version{"conv2d_dgrad/06", false}, Version{"conv2d_dgrad/07", false},
                            Version{"conv2d_dgrad/08", false}}) {
      const device::Kernel& kernel = device::find_kernel(v.id, copy);
      const device::Op& op = device::op(kernel.op);
      REQUIRE(bool(kernel.tolerance));
      int winograd_sizes = 0;
      for (const device::Sizes& sizes : op.test_sizes) {
        INFO(kernel.id(), " (", device::to_string(copy), ") at ", device::describe_sizes(op, sizes));
        Rng rng(kSeed);
        const auto inputs = device::make_inputs(kernel, sizes, rng);
        const std::string name = kernel.candidate(sizes);
        const bool winograd = name.starts_with("winograd");
        const auto want = winograd ? bound_of(v, name, sizes, inputs) : op.tolerance(sizes, inputs);
        CHECK(same(device::tolerance_of(kernel, sizes, inputs).at(0), want.at(0)));
        winograd_sizes += winograd;
      }
      CHECK(winograd_sizes == 3);  // the three test sizes with C, K >= 16 at 3x3, stride 1 (ops/conv2d.cpp)
    }
  }
  // Earlier versions, none of whose candidates is Winograd, keep the op's.
  for (const char* id : {"conv2d/07", "conv2d/09", "conv2d_dgrad/03", "conv2d_dgrad/05"})
    CHECK_FALSE(bool(device::find_kernel(id).tolerance));
}

TEST_CASE("winograd bound: sizes where no Winograd candidate applies are refused, naming them") {
  const std::vector<float> x(9), w(9);
  // 3x3 at stride 2; dgrad at pad 3 (its forward view's pad would be -1).
  CHECK_THROWS_WITH_AS(
      device::conv::winograd_bound::forward({1, 1, 3, 3, 1, 3, 3, 2, 0, 1}, x, w, device::conv::WinogradTile::f4x4),
      doctest::Contains("conv2d: the Winograd bound takes 3x3 filters at stride 1"), Error);
  CHECK_THROWS_WITH_AS(
      device::conv::winograd_bound::forward({1, 1, 3, 3, 1, 3, 3, 1, 0, 1}, x, w, device::conv::WinogradTile::none),
      doctest::Contains("the candidate runs no Winograd arithmetic"), Error);
  CHECK_THROWS_WITH_AS(
      device::conv::winograd_bound::dgrad({1, 1, 3, 3, 1, 3, 3, 1, 3, 1}, x, w, device::conv::WinogradTile::f2x2),
                       doctest::Contains("pad <= 2, got N=1 C=1"), Error);
}

TEST_CASE("winograd bound: one element's bound, as the GPU tuners sample it, is the whole output's at that element") {
  namespace wb = device::conv::winograd_bound;
  Rng rng(kSeed);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = float(rng.uniform(-1, 1));
    return v;
  };
  for (int pad = 0; pad <= 2; ++pad) {
    // {N, C, H, W, K, R, S, stride, pad, dilation}: odd planes, so the last tiles are cut.
    const device::Sizes s{2, 3, 7, 6, 5, 3, 3, 1, pad, 1};
    INFO("pad ", pad);
    const int N = 2, C = 3, H = 7, W = 6, K = 5, P = H + 2 * pad - 2, Q = W + 2 * pad - 2;
    const std::vector<float> x = random(size_t(N) * C * H * W), w = random(size_t(K) * C * 9);
    const std::vector<float> dy = random(size_t(N) * K * P * Q);
    for (const auto tile : {device::conv::WinogradTile::f2x2, device::conv::WinogradTile::f4x4}) {
      INFO((tile == device::conv::WinogradTile::f4x4 ? "F(4x4, 3x3)" : "F(2x2, 3x3)"));
      const std::vector<double> y_bound = wb::forward(s, x, w, tile), dx_bound = wb::dgrad(s, dy, w, tile);
      REQUIRE(y_bound.size() == size_t(N) * K * P * Q);
      REQUIRE(dx_bound.size() == size_t(N) * C * H * W);
      size_t e = 0;
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
          for (int p = 0; p < P; ++p)
            for (int q = 0; q < Q; ++q, ++e) CHECK(wb::forward_at(s, x, w, {n, k, p, q}, tile) == y_bound[e]);
      e = 0;
      for (int n = 0; n < N; ++n)
        for (int c = 0; c < C; ++c)
          for (int h = 0; h < H; ++h)
            for (int ww = 0; ww < W; ++ww, ++e) CHECK(wb::dgrad_at(s, dy, w, {n, c, h, ww}, tile) == dx_bound[e]);
    }
    CHECK_THROWS_WITH(wb::forward_at(s, x, w, {0, K, 0, 0}, device::conv::WinogradTile::f4x4),
                      doctest::Contains("no output [0,5,0,0]"));
  }
}
