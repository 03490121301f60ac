// lenet5_step/01's block sizes, the candidates its tune times on a GPU
// (256, 512 and 1024 threads an image): each gives the same bits as the
// 512 threads the registry test checks against the CPU at the op's test
// sizes. Every sum of the step is taken in an order the block size does not
// change (a warp per dense output, a thread per strip, bands and images
// added in order), which is what lets the tune check its candidates by
// comparing bits.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/traced/candidate_check.hpp"

namespace {
#include "kernels/lenet5/01_image_per_block.cu"
}  // namespace

namespace {

constexpr int kParams[10] = {150, 6, 2400, 16, 48000, 120, 10080, 84, 0, 0};  // w5, b5 depend on C

// One step of N images of C classes with BLOCK threads an image: every
// output (probs, row loss, the ten gradients) in one vector.
template <int BLOCK>
std::vector<float> step(int N, int C, const std::vector<float>& x, const std::vector<int>& labels,
                        const std::vector<std::vector<float>>& params) {
  // Outputs poisoned with NaN: one a block size leaves unwritten cannot pass.
  const auto nans = [](size_t n) { return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()); };
  DeviceBuffer<float> X(x), probs(nans(size_t(N) * C)), row_loss(nans(size_t(N))), saved(size_t(N) * lenet5::kSaved);
  DeviceBuffer<int> L(labels);
  std::vector<std::unique_ptr<DeviceBuffer<float>>> p, g;  // the parameters and their gradients
  for (const auto& values : params) {
    p.push_back(std::make_unique<DeviceBuffer<float>>(values));
    g.push_back(std::make_unique<DeviceBuffer<float>>(nans(values.size())));
  }
  const Lenet5Weights w{p[0]->get(), p[1]->get(), p[2]->get(), p[3]->get(), p[4]->get(),
                        p[5]->get(), p[6]->get(), p[7]->get(), p[8]->get(), p[9]->get()};
  const Lenet5Grads d{g[0]->get(), g[1]->get(), g[2]->get(), g[3]->get(), g[4]->get(),
                      g[5]->get(), g[6]->get(), g[7]->get(), g[8]->get(), g[9]->get()};
  const size_t shared = size_t(lenet5::kSmFloats) * sizeof(float);
  REQUIRE(warpnet::opt_in_dynamic_shared(lenet5_image_per_block<BLOCK>, shared));
  warpnet::simt::launch(lenet5_image_per_block<BLOCK>, dim3(N), dim3(BLOCK), shared, N, C, X.get(), L.get(), w,
                        probs.get(), row_loss.get(), saved.get());
  warpnet::simt::launch(lenet5_sum_gradients<256>, dim3(64), dim3(256), 0, N, C,
                        static_cast<const float*>(saved.get()), d);
  std::vector<float> all = probs.download();
  for (const float v : row_loss.download()) all.push_back(v);
  for (const auto& b : g)
    for (const float v : b->download()) all.push_back(v);
  return all;
}

}  // namespace

TEST_CASE("lenet5_step/01: 256 and 1024 threads an image give the bits 512 give") {
  for (const auto& [N, C] : {std::pair{3, 10}, std::pair{2, 32}}) {
    INFO("N = " << N << ", C = " << C);
    uint64_t state = candidate_check::kSeed;
    const std::vector<float> x = candidate_check::uniform(size_t(N) * 784, state);
    std::vector<int> labels;
    for (int n = 0; n < N; ++n) labels.push_back((n * 7 + 3) % C);
    std::vector<std::vector<float>> params;
    for (int k = 0; k < 10; ++k) {
      const int count = k == 8 ? 84 * C : k == 9 ? C : kParams[k];
      params.push_back(candidate_check::uniform(size_t(count), state));
    }
    const std::vector<float> want = step<512>(N, C, x, labels, params);
    for (const float v : want) REQUIRE(v == v);  // every output written, none NaN
    for (int n = 0; n < N; ++n) {  // and a softmax's probabilities: each row sums to 1
      double sum = 0;
      for (int c = 0; c < C; ++c) sum += want[size_t(n) * C + c];
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
    const std::vector<float> wide = step<1024>(N, C, x, labels, params);
    const std::vector<float> narrow = step<256>(N, C, x, labels, params);
    REQUIRE(wide.size() == want.size());
    REQUIRE(narrow.size() == want.size());
    CHECK(std::memcmp(wide.data(), want.data(), want.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(narrow.data(), want.data(), want.size() * sizeof(float)) == 0);
  }
}

// A NaN pixel makes its image's outputs NaN, as on the CPU (ReLU passes a
// NaN, max-pooling picks it), instead of vanishing at the first ReLU: a
// diverged input or weight shows. The other image is untouched.
TEST_CASE("lenet5_step/01: a NaN pixel makes its image's probabilities and loss NaN, as on the CPU") {
  const int N = 2, C = 10;
  uint64_t state = candidate_check::kSeed;
  std::vector<float> x = candidate_check::uniform(size_t(N) * 784, state);
  x[784 + 14 * 28 + 14] = std::numeric_limits<float>::quiet_NaN();  // image 1's centre
  std::vector<std::vector<float>> params;
  for (int k = 0; k < 10; ++k) {
    const int count = k == 8 ? 84 * C : k == 9 ? C : kParams[k];
    params.push_back(candidate_check::uniform(size_t(count), state));
  }
  const std::vector<float> out = step<512>(N, C, x, {3, 5}, params);
  for (int c = 0; c < C; ++c) {
    CHECK(out[size_t(c)] == out[size_t(c)]);
    CHECK(out[size_t(C + c)] != out[size_t(C + c)]);
  }
  CHECK(out[size_t(N) * C] == out[size_t(N) * C]);          // image 0's loss
  CHECK(out[size_t(N) * C + 1] != out[size_t(N) * C + 1]);  // image 1's
}
