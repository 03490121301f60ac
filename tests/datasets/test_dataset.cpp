// Batches and head: coverage, determinism from the seed, batch shapes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "datasets/dataset.hpp"

using namespace warpnet;
using namespace warpnet::data;

namespace {

constexpr uint64_t kSeed = 42;

// n examples whose label is their index and whose input row (3 values) is
// index + {0, 0.25, 0.5}: a batch shows which rows it gathered.
Dataset indexed(int64_t n) {
  Dataset d;
  d.name = "indexed";
  d.num_classes = static_cast<int>(n);
  d.inputs = Tensor::empty({n, 3});
  d.labels = Tensor::empty({n}, DType::i32);
  for (int64_t i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j) d.inputs.set(i * 3 + j, double(i) + 0.25 * j);
    d.labels.set(i, double(i));
  }
  return d;
}

// One epoch's example order, checking each batch's rows against its labels.
std::vector<int64_t> epoch_order(Batches& batches, std::vector<int64_t>* sizes = nullptr) {
  std::vector<int64_t> order;
  Batch b;
  while (batches.next(b)) {
    REQUIRE(b.inputs.dim(0) == b.labels.dim(0));
    REQUIRE(b.inputs.dim(1) == 3);
    if (sizes) sizes->push_back(b.labels.dim(0));
    for (int64_t i = 0; i < b.labels.dim(0); ++i) {
      const auto index = static_cast<int64_t>(b.labels.item(i));
      for (int j = 0; j < 3; ++j) CHECK(b.inputs.item(i * 3 + j) == double(index) + 0.25 * j);
      order.push_back(index);
    }
  }
  return order;
}

}  // namespace

TEST_CASE("batches cover every example once per epoch; the last batch is smaller") {
  INFO("seed ", kSeed);
  const Dataset d = indexed(10);
  Batches batches(d, 4, true, kSeed);
  CHECK(batches.count() == 3);
  for (int epoch = 0; epoch < 3; ++epoch) {
    if (epoch) batches.start_epoch();
    std::vector<int64_t> sizes;
    std::vector<int64_t> order = epoch_order(batches, &sizes);
    CHECK(sizes == std::vector<int64_t>{4, 4, 2});
    std::sort(order.begin(), order.end());
    for (int64_t i = 0; i < 10; ++i) CHECK(order[i] == i);
  }
}

TEST_CASE("batches: same seed same order, epochs and seeds differ, no shuffle keeps order") {
  INFO("seed ", kSeed);
  const Dataset d = indexed(50);
  Batches a(d, 8, true, kSeed), b(d, 8, true, kSeed), other(d, 8, true, kSeed + 1);
  const std::vector<int64_t> a1 = epoch_order(a);
  CHECK(a1 == epoch_order(b));
  CHECK(a1 != epoch_order(other));
  a.start_epoch();
  b.start_epoch();
  const std::vector<int64_t> a2 = epoch_order(a);
  CHECK(a2 == epoch_order(b));
  CHECK(a1 != a2);

  Batches plain(d, 7, false, kSeed);
  std::vector<int64_t> sizes;
  const std::vector<int64_t> order = epoch_order(plain, &sizes);
  for (int64_t i = 0; i < 50; ++i) CHECK(order[i] == i);
  CHECK(sizes.back() == 1);
  Batch unused;
  CHECK_FALSE(plain.next(unused));
}

TEST_CASE("batches reject a bad batch size or mismatched tensors") {
  const Dataset d = indexed(5);
  CHECK_THROWS_WITH_AS(Batches(d, 0, true, kSeed), "batches: batch size must be positive, got 0", Error);
  Dataset bad = d;
  bad.inputs = Tensor::empty({4, 3});
  CHECK_THROWS_WITH_AS(Batches(bad, 2, true, kSeed), "batches: 'indexed' has inputs (4,3) but 5 labels", Error);
}

TEST_CASE("head copies the first examples, or shares all of them") {
  const Dataset d = indexed(6);
  const Dataset h = head(d, 2);
  CHECK(h.size() == 2);
  CHECK(h.name == "indexed[:2]");
  CHECK(h.inputs.shape() == Shape{2, 3});
  CHECK(h.inputs.item(5) == 1.5);
  CHECK(h.labels.item(1) == 1);
  CHECK(h.inputs.storage() != d.inputs.storage());
  CHECK(head(d, -1).size() == 6);
  CHECK(head(d, 100).inputs.storage() == d.inputs.storage());
  CHECK(head(d, 0).inputs.shape() == Shape{0, 3});
}

TEST_CASE("standardization uses the given statistics and leaves the source untouched") {
  data::Dataset d{"four", Tensor::from<float>({4, 1}, {0.f, 1.f, 2.f, 3.f}), Tensor::from<int32_t>({4}, {0, 1, 0, 1}),
                  2, {}, {}};
  const data::Standardization s = data::input_statistics(d);
  CHECK(s.mean == doctest::Approx(1.5));
  CHECK(s.stddev == doctest::Approx(std::sqrt(1.25)));  // population variance of 0..3
  const data::Dataset z = data::standardized(d, s);
  CHECK(z.inputs.item(0) == doctest::Approx(-1.5 / std::sqrt(1.25)));
  CHECK(z.inputs.item(3) == doctest::Approx(1.5 / std::sqrt(1.25)));
  CHECK(d.inputs.item(0) == 0.0);
  data::Dataset flat{"flat", Tensor::full({3, 1}, 0.5), Tensor::zeros({3}, DType::i32), 1, {}, {}};
  CHECK_THROWS_WITH_AS(data::input_statistics(flat), "input_statistics: every input of 'flat' is 0.5: nothing to scale",
                       Error);
}
