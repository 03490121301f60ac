// Softmax and the fused softmax + cross-entropy loss. Stable form: subtract
// the row maximum before exp, so the largest term is exp(0) = 1 and nothing
// overflows; the loss of a row is log Σ exp(z − m) + m − z[label], the
// log-sum-exp in double. Rows are independent and each row's loss is stored
// before the batch mean is summed in row order: the loss does not depend on
// the thread count.
#include <cmath>
#include <vector>

#include "core/memory.hpp"
#include "core/tensor.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cpu {

namespace {

// logits: (N,C)
void check_logits(const char* op, const char* name, const Tensor& logits) {
  require_float_input(op, name, logits);
  require_rank(op, name, logits, 2, "(N,C)");
  WN_CHECK(logits.dim(1) > 0, op, ": ", name, " are ", logits.shape(), ": no classes");
}

// logits: (N,C); labels: i32 (N), each in [0,C)
void check_labels(const char* op, const char* name, const Tensor& logits, const Tensor& labels) {
  require_int32_input(op, "labels", labels);
  WN_CHECK(labels.rank() == 1 && labels.dim(0) == logits.dim(0), op, ": ", name, " are ", logits.shape(),
           " but labels are ", labels.shape(), ": expected (", logits.dim(0), ")");
  const int32_t* pl = labels.data<int32_t>();
  const int64_t classes = logits.dim(1);
  for (int64_t i = 0, count = labels.numel(); i < count; ++i) {
    WN_CHECK(pl[i] >= 0 && pl[i] < classes, op, ": label ", pl[i], " at row ", i, " is out of range [0,", classes,
             ")");
  }
}

// A row's max m and log Σ exp(z − m), so that log Σ exp(z) = m + log_sum.
struct RowStats {
  double max, log_sum;
};

// z: (C) one row; writes probs (C) and returns its RowStats, computed stably.
template <class T>
RowStats softmax_row(const T* z, int64_t classes, T* probs) {
  T m = z[0];
  for (int64_t j = 1; j < classes; ++j) m = std::max(m, z[j]);
  double sum = 0;
  for (int64_t j = 0; j < classes; ++j) sum += std::exp(double(z[j]) - double(m));
  const double inv = 1.0 / sum;
  for (int64_t j = 0; j < classes; ++j) probs[j] = static_cast<T>(std::exp(double(z[j]) - double(m)) * inv);
  return {double(m), std::log(sum)};
}

}  // namespace

// logits: (N,C); labels: i32 (N). loss = mean over rows of −log softmax(z)[label]
SoftmaxCrossEntropy softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
  check_logits("softmax_cross_entropy", "logits", logits);
  check_labels("softmax_cross_entropy", "logits", logits, labels);
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  SoftmaxCrossEntropy out;
  out.probs = Tensor::empty(logits.shape(), logits.dtype());
  {
    // Workspace to the tracker: autograd drops the row losses at once (it
    // keeps the mean), so they are no activation; the registry's reference
    // returns them as the fused kernel's output.
    MemoryScope scope(MemTag::workspace);
    out.row_loss = Tensor::empty({rows}, logits.dtype());
  }
  std::vector<double> row_loss(static_cast<size_t>(rows));
  dispatch_float(logits.dtype(), "softmax_cross_entropy", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pz = logits.data<T>();
    const int32_t* pl = labels.data<int32_t>();
    T* pp = out.probs.data<T>();
#pragma omp parallel for schedule(static) if (logits.numel() >= kParallelMinElements)
    for (int64_t i = 0; i < rows; ++i) {
      const T* z = pz + i * classes;
      // −log softmax(z)[label] = log_sum − (z[label] − m): subtracting m first
      // keeps the row's small differences, which m + log_sum − z[label]
      // rounded away (two logits of 1e17 gave a loss of 0, not log 2).
      const RowStats r = softmax_row(z, classes, pp + i * classes);
      row_loss[i] = r.log_sum - (double(z[pl[i]]) - r.max);
    }
    T* pr = out.row_loss.data<T>();
    for (int64_t i = 0; i < rows; ++i) pr[i] = static_cast<T>(row_loss[i]);
  });
  double total = 0;
  for (double l : row_loss) total += l;
  out.loss = rows > 0 ? total / double(rows) : 0.0;
  return out;
}

// probs: (N,C); labels: i32 (N). dlogits (N,C) = dloss·(probs − onehot)/N
Tensor softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, double dloss) {
  check_logits("softmax_cross_entropy_backward", "probs", probs);
  check_labels("softmax_cross_entropy_backward", "probs", probs, labels);
  const int64_t rows = probs.dim(0), classes = probs.dim(1);
  Tensor dz = Tensor::empty(probs.shape(), probs.dtype());
  dispatch_float(probs.dtype(), "softmax_cross_entropy_backward", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pp = probs.data<T>();
    const int32_t* pl = labels.data<int32_t>();
    T* pdz = dz.data<T>();
    const T scale = static_cast<T>(dloss / double(rows));
#pragma omp parallel for schedule(static) if (probs.numel() >= kParallelMinElements)
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < classes; ++j) pdz[i * classes + j] = scale * pp[i * classes + j];
      pdz[i * classes + pl[i]] -= scale;
    }
  });
  return dz;
}

// logits: (N,C); returns (N,C) with rows summing to 1
Tensor softmax(const Tensor& logits) {
  check_logits("softmax", "logits", logits);
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  Tensor probs = Tensor::empty(logits.shape(), logits.dtype());
  dispatch_float(logits.dtype(), "softmax", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pz = logits.data<T>();
    T* pp = probs.data<T>();
#pragma omp parallel for schedule(static) if (logits.numel() >= kParallelMinElements)
    for (int64_t i = 0; i < rows; ++i) softmax_row(pz + i * classes, classes, pp + i * classes);
  });
  return probs;
}

}  // namespace warpnet::cpu
