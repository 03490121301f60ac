// One thread against two: every op whose arithmetic does not depend on the
// thread count must agree bit for bit; Eigen's blocked matmul, whose blocking
// does, within the rounding bound of its sums. Sizes are large enough that
// the OpenMP loops really fork (kParallelMinElements, kParallelMinMacs).
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>

#include "core/rng.hpp"
#include "cpu/ops.hpp"
#include "op_test_util.hpp"

using namespace warpnet;
using namespace warpnet::test;

namespace {

Tensor abs_of(const Tensor& t) {
  Tensor out = t.clone();
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, std::abs(out.item(i)));
  return out;
}

}  // namespace

TEST_CASE("set_num_threads sets the count; 0 means all cores") {
  ThreadCountScope scope(2);
  CHECK(cpu::num_threads() == 2);
  cpu::set_num_threads(1);
  CHECK(cpu::num_threads() == 1);
  cpu::set_num_threads(0);  // from 1: a 0 that changed nothing fails on any machine of 2 cores or more
  CHECK(cpu::num_threads() == omp_get_num_procs());
  CHECK_THROWS_WITH_AS(cpu::set_num_threads(-1),
                       "set_num_threads: -1 threads requested; use 0 for all cores or a positive count", Error);
}

TEST_CASE("conv2d gives the same result on 1 and 2 threads") {
  const uint64_t seed = 7001;
  CAPTURE(seed);
  Rng rng(seed);
  // 5 images of 7·75·221 multiply-adds: 580k, past the threshold for a team.
  const cpu::Conv2dParams p{1, 2, 1};
  const Tensor x = uniform_tensor({5, 3, 17, 13}, DType::f32, rng);
  const Tensor w = uniform_tensor({7, 3, 5, 5}, DType::f32, rng);
  const Tensor b = uniform_tensor({7}, DType::f32, rng);
  const Tensor dy = uniform_tensor({5, 7, 17, 13}, DType::f32, rng);
  Tensor y1, y2;
  cpu::Conv2dGrads g1, g2;
  {
    ThreadCountScope one(1);
    y1 = cpu::conv2d(x, w, b, p);
    g1 = cpu::conv2d_backward(x, w, dy, p, true);
  }
  {
    ThreadCountScope two(2);
    y2 = cpu::conv2d(x, w, b, p);
    g2 = cpu::conv2d_backward(x, w, dy, p, true);
  }
  // Each image is one thread's work with the same single-threaded GEMM, and
  // dw is summed in fixed groups of images whatever the thread count.
  check_equal(y2, y1, "y");
  check_equal(g2.dx, g1.dx, "dx");
  check_equal(g2.dw, g1.dw, "dw");
  check_equal(g2.db, g1.db, "db");
}

TEST_CASE("matmul gives the same result on 1 and 2 threads within its rounding bound") {
  const uint64_t seed = 7002;
  CAPTURE(seed);
  Rng rng(seed);
  // 129·127·131 ≈ 2.1e6 multiply-adds: above Eigen's threshold for splitting.
  const Tensor a = uniform_tensor({129, 131}, DType::f32, rng);
  const Tensor b = uniform_tensor({131, 127}, DType::f32, rng);
  Tensor c1, c2;
  {
    ThreadCountScope one(1);
    c1 = cpu::matmul(a, b);
  }
  {
    ThreadCountScope two(2);
    c2 = cpu::matmul(a, b);
  }
  // Eigen picks its K blocking from the thread count: another summation
  // order, each within (K + 1)·u·Σ|a·b| of the exact product.
  const Tensor abs_terms = cpu::matmul(abs_of(a), abs_of(b));
  const double u = unit_roundoff(DType::f32);
  check_close(c2, c1, [&](int64_t i) { return 2 * 132 * u * abs_terms.item(i); }, "C");
}

TEST_CASE("pooling, bias, activations and softmax are identical on 1 and 2 threads") {
  const uint64_t seed = 7003;
  CAPTURE(seed);
  Rng rng(seed);
  // 4·8·33·33 = 34848 elements: past the threshold where loops fork.
  const Tensor x = uniform_tensor({4, 8, 33, 33}, DType::f32, rng);
  const Tensor bias = uniform_tensor({8}, DType::f32, rng);
  const Tensor logits = uniform_tensor({4099, 9}, DType::f32, rng, -5.0, 5.0);
  Tensor labels = Tensor::empty({4099}, DType::i32);
  for (int64_t i = 0; i < 4099; ++i) labels.set(i, double(rng.below(9)));
  const cpu::Pool2dParams pool{3, 2, 1};

  struct Outputs {
    Tensor max_y, avg_y, max_dx, avg_dx, biased, db, gelu, probs;
    double loss = 0;
  };
  const auto run = [&](int threads) {
    ThreadCountScope scope(threads);
    Outputs o;
    const cpu::MaxPoolResult mp = cpu::max_pool2d(x, pool);
    o.max_y = mp.y;
    o.avg_y = cpu::avg_pool2d(x, pool);
    o.max_dx = cpu::max_pool2d_backward(mp.y, mp.argmax, x.shape());
    o.avg_dx = cpu::avg_pool2d_backward(o.avg_y, x.shape(), pool);
    o.biased = cpu::bias_add(x, bias);
    o.db = cpu::bias_add_backward(x);
    o.gelu = cpu::gelu(x);
    const cpu::SoftmaxCrossEntropy sce = cpu::softmax_cross_entropy(logits, labels);
    o.probs = sce.probs;
    o.loss = sce.loss;
    return o;
  };
  const Outputs one = run(1), two = run(2);
  check_equal(two.max_y, one.max_y, "max_pool2d");
  check_equal(two.avg_y, one.avg_y, "avg_pool2d");
  check_equal(two.max_dx, one.max_dx, "max_pool2d_backward");
  check_equal(two.avg_dx, one.avg_dx, "avg_pool2d_backward");
  check_equal(two.biased, one.biased, "bias_add");
  check_equal(two.db, one.db, "bias_add_backward");
  check_equal(two.gelu, one.gelu, "gelu");
  check_equal(two.probs, one.probs, "softmax probs");
  CHECK(two.loss == one.loss);
}
