// Inverted dropout: each element is kept with probability 1 − p and scaled
// by 1/(1 − p), so the expected output equals the input and evaluation needs
// no rescaling. The mask is counter-based (kernels/common/counter_hash.hpp):
// one 64-bit seed per call, and element i is kept iff counter_hash(seed, i)
// >= floor(p·2^32). Each decision depends on (seed, i) alone, so the mask is
// the same for any thread count, on the CPU and in the device kernel
// (kernels/dropout/01_counter_hash.cu), bit for bit.
#include <cstring>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "cpu/checks_impl.hpp"
#include "cpu/ops.hpp"
#include "kernels/common/counter_hash.hpp"

namespace warpnet::cpu {

// x: any shape; returns y and mask, both like x
DropoutResult dropout(const Tensor& x, double p, uint64_t seed) {
  require_float_input("dropout", "x", x);
  WN_CHECK(p >= 0.0 && p < 1.0, "dropout: p is ", p, ", expected 0 <= p < 1");
  DropoutResult out;
  out.y = Tensor::empty(x.shape(), x.dtype());
  out.mask = Tensor::empty(x.shape(), x.dtype());
  dispatch_float(x.dtype(), "dropout", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* px = x.data<T>();
    T* py = out.y.data<T>();
    T* pm = out.mask.data<T>();
    const T keep_scale = static_cast<T>(1.0 / (1.0 - p));
    const uint32_t threshold = dropout_threshold(p);
    const int64_t n = x.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) {
      pm[i] = dropout_keeps(seed, uint64_t(i), threshold) ? keep_scale : T(0);
      py[i] = px[i] * pm[i];
    }
  });
  return out;
}

// One seed from the generator per call; p = 0 keeps everything and draws nothing.
DropoutResult dropout(const Tensor& x, double p, Rng& rng) { return dropout(x, p, p == 0.0 ? 0 : rng.next_u64()); }

Tensor dropout_seed_words(uint64_t seed) {
  Tensor words = Tensor::empty({2}, DType::i32);
  const uint32_t halves[2] = {uint32_t(seed), uint32_t(seed >> 32)};
  std::memcpy(words.raw(), halves, sizeof halves);
  return words;
}

uint64_t dropout_seed_of(const Tensor& words) {
  WN_CHECK(words.dtype() == DType::i32 && words.numel() == 2 && words.device() == Device::cpu,
           "dropout: a seed is an i32 (2) tensor on the CPU (low word, high word), got ", words.describe());
  uint32_t halves[2];
  std::memcpy(halves, words.contiguous().raw(), sizeof halves);
  return uint64_t(halves[1]) << 32 | halves[0];
}

// dy, mask: same shape; returns dx = dy ⊙ mask
Tensor dropout_backward(const Tensor& dy, const Tensor& mask) {
  require_float_input("dropout_backward", "dy", dy);
  require_float_input("dropout_backward", "mask", mask);
  require_same_dtype("dropout_backward", "dy", dy, "mask", mask);
  require_same_shape("dropout_backward", "dy", dy, "mask", mask);
  Tensor dx = Tensor::empty(dy.shape(), dy.dtype());
  dispatch_float(dy.dtype(), "dropout_backward", [&](auto* tag) {
    using T = elem_t<decltype(tag)>;
    const T* pdy = dy.data<T>();
    const T* pm = mask.data<T>();
    T* pdx = dx.data<T>();
    const int64_t n = dy.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) pdx[i] = pdy[i] * pm[i];
  });
  return dx;
}

}  // namespace warpnet::cpu
