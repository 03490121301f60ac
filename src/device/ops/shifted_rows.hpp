// The (N,C) input the row ops (softmax, the row reductions) are checked on:
// uniform in [-spread, spread], row i shifted by +100, -100 or 0 (i % 3), so
// row 0 already carries the large shift. Why each op wants it says beside the op.
#pragma once
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace warpnet::device {

inline Tensor shifted_rows(int64_t N, int64_t C, double spread, Rng& rng) {
  Tensor x = Tensor::empty({N, C});
  fill_uniform(x, rng, -spread, spread);
  float* p = x.data<float>();
  constexpr float kShift[3] = {100.0f, -100.0f, 0.0f};
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < C; ++j) p[i * C + j] += kShift[i % 3];
  return x;
}

}  // namespace warpnet::device
