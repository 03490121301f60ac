// Synthetic sets: shapes, label ranges, balance, geometry and determinism.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "datasets/synthetic.hpp"

using namespace warpnet;
using namespace warpnet::data;

namespace {

constexpr uint64_t kSeed = 7;

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), static_cast<size_t>(a.nbytes())) == 0;
}

// Labels are in range and every class has n / classes (rounded) examples.
void check_labels(const Dataset& d, int64_t n, int classes) {
  REQUIRE(d.labels.shape() == Shape{n});
  CHECK(d.num_classes == classes);
  std::vector<int64_t> count(classes, 0);
  for (int64_t i = 0; i < n; ++i) {
    const auto c = static_cast<int64_t>(d.labels.item(i));
    REQUIRE(c >= 0);
    REQUIRE(c < classes);
    ++count[c];
  }
  for (int64_t k : count) CHECK(std::abs(k - n / classes) <= 1);
}

}  // namespace

TEST_CASE("spirals: (n,2) points in the unit disk, balanced, reproducible") {
  INFO("seed ", kSeed);
  const Dataset d = make_spirals(301, 3, kSeed);
  CHECK(d.inputs.shape() == Shape{301, 2});
  check_labels(d, 301, 3);
  for (int64_t i = 0; i < 301; ++i) {
    const double x = d.inputs.item(2 * i), y = d.inputs.item(2 * i + 1);
    CHECK(x * x + y * y <= 1.0 + 1e-6);
  }
  CHECK(same_bytes(d.inputs, make_spirals(301, 3, kSeed).inputs));
  CHECK_FALSE(same_bytes(d.inputs, make_spirals(301, 3, kSeed + 1).inputs));
}

TEST_CASE("blobs: each class scatters around its own centre with the given spread") {
  INFO("seed ", kSeed);
  const int classes = 4, dims = 3;
  const int64_t n = 4000;
  const double spread = 0.5;
  const Dataset d = make_blobs(n, classes, dims, kSeed, spread);
  CHECK(d.inputs.shape() == Shape{n, dims});
  check_labels(d, n, classes);
  // Each class's points, by their labels: its mean (the centre's estimate)
  // and the sample standard deviation about it, from 1000·3 values: its
  // relative standard error is about 1/sqrt(2·3000) ≈ 1.3%, held to five of them.
  auto label = [&](int64_t i) { return static_cast<int>(d.labels.item(i)); };
  auto x = [&](int64_t i, int j) { return double(d.inputs.item(i * dims + j)); };
  std::vector<double> mean(classes * dims, 0.0);
  std::vector<int64_t> count(classes, 0);
  for (int64_t i = 0; i < n; ++i) {
    ++count[label(i)];
    for (int j = 0; j < dims; ++j) mean[label(i) * dims + j] += x(i, j);
  }
  for (int c = 0; c < classes; ++c)
    for (int j = 0; j < dims; ++j) mean[c * dims + j] /= double(count[c]);
  auto distance2 = [&](int64_t i, int c) {
    double sum = 0;
    for (int j = 0; j < dims; ++j) sum += std::pow(x(i, j) - mean[c * dims + j], 2);
    return sum;
  };
  std::vector<double> sq(classes, 0.0);
  int64_t nearest_own = 0;  // points whose nearest class mean is their own class's
  for (int64_t i = 0; i < n; ++i) {
    sq[label(i)] += distance2(i, label(i));
    int nearest = 0;
    for (int c = 1; c < classes; ++c)
      if (distance2(i, c) < distance2(i, nearest)) nearest = c;
    nearest_own += nearest == label(i);
  }
  for (int c = 0; c < classes; ++c) {
    INFO("class ", c);
    const double sd = std::sqrt(sq[c] / double(dims * (count[c] - 1)));
    CHECK(sd == doctest::Approx(spread).scale(0).epsilon(5 * 0.013));
  }
  // Labels that did not follow the centres would leave about 1 in `classes` here.
  CHECK(double(nearest_own) / double(n) > 0.95);
  CHECK(same_bytes(d.inputs, make_blobs(n, classes, dims, kSeed, spread).inputs));
}

TEST_CASE("squares: the bright square lies in the class's cell") {
  INFO("seed ", kSeed);
  // 4 classes on 12x12: a 2x2 grid of 6-pixel cells, squares 3 pixels wide.
  const int classes = 4, size = 12, cell = 6, side = 3;
  const int64_t n = 40;
  const Dataset d = make_squares(n, classes, size, kSeed);
  REQUIRE(d.inputs.shape() == Shape{n, 1, size, size});
  check_labels(d, n, classes);
  const float* x = d.inputs.data<float>();
  const auto [lo, hi] = std::minmax_element(x, x + d.inputs.numel());
  CHECK(*lo >= 0.0f);
  CHECK(*hi <= 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    CAPTURE(i);
    const int c = static_cast<int>(d.labels.item(i));
    // Bright pixels (the square is >= 0.8, the noise < 0.2) and those outside cell c.
    int bright = 0, misplaced = 0;
    for (int r = 0; r < size; ++r) {
      for (int q = 0; q < size; ++q) {
        if (x[(i * size + r) * size + q] < 0.5f) continue;
        ++bright;
        misplaced += r / cell != c / 2 || q / cell != c % 2;
      }
    }
    CHECK(bright == side * side);
    CHECK(misplaced == 0);
  }
  CHECK(same_bytes(d.inputs, make_squares(n, classes, size, kSeed).inputs));
  CHECK_THROWS_WITH_AS(make_squares(4, 10, 7, kSeed),
                       "make_squares: 7x7 images are too small for 10 classes (need at least 8 pixels a side)", Error);
}
