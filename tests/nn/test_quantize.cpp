// Weight-only quantization (nn/quantize): stored bytes counted exactly,
// decoded values equal numeric's encode/decode, MX scales per block of 32
// along each row with a shorter tail block, worked by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "nn/models.hpp"
#include "nn/quantize.hpp"
#include "numeric/scaling.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;
using nn::WeightFormat;

namespace {

std::vector<float> random_weights(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> w(size_t(n), 0.f);
  for (float& v : w) v = float(rng.normal() * 0.1);
  return w;
}

}  // namespace

TEST_CASE("quantize_weights counts the bytes a packed store holds") {
  // 3 rows of 40: 120 values; MX has 2 blocks per row (32 + a tail of 8).
  const std::vector<float> w = random_weights(120, 7);
  struct Case {
    WeightFormat format;
    int64_t code_bytes, scale_bytes;
  };
  const Case cases[] = {{WeightFormat::fp32, 480, 0},        {WeightFormat::fp16, 240, 0},
                        {WeightFormat::bf16, 240, 0},        {WeightFormat::e4m3_tensor, 120, 4},
                        {WeightFormat::e4m3_channel, 120, 12}, {WeightFormat::e2m1_tensor, 60, 4},
                        {WeightFormat::e2m1_mx, 60, 6}};
  for (const Case& c : cases) {
    CAPTURE(nn::name(c.format));
    const nn::QuantizedTensor q = nn::quantize_weights(c.format, w, 40);
    CHECK(q.values.size() == w.size());
    CHECK(q.code_bytes == c.code_bytes);
    CHECK(q.scale_bytes == c.scale_bytes);
  }
  // An odd count of fp4 codes still takes a whole last byte.
  CHECK(nn::quantize_weights(WeightFormat::e2m1_mx, random_weights(5, 1), 5).code_bytes == 3);
  CHECK(nn::quantize_weights(WeightFormat::e2m1_tensor, random_weights(5, 1), 5).code_bytes == 3);
}

TEST_CASE("quantize_weights decodes what numeric encodes") {
  const std::vector<float> w = random_weights(6 * 50, 11);  // 6 rows of 50
  auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  };
  std::vector<float> half, brain;
  for (float v : w) {
    half.push_back(numeric::decode(numeric::kFp16, numeric::encode(numeric::kFp16, v)));
    brain.push_back(numeric::decode(numeric::kBf16, numeric::encode(numeric::kBf16, v)));
  }
  CHECK(same(nn::quantize_weights(WeightFormat::fp16, w, 50).values, half));
  CHECK(same(nn::quantize_weights(WeightFormat::bf16, w, 50).values, brain));
  CHECK(same(nn::quantize_weights(WeightFormat::e4m3_tensor, w, 50).values,
             numeric::decode(numeric::encode_per_tensor(numeric::kE4M3, w))));
  CHECK(same(nn::quantize_weights(WeightFormat::e2m1_tensor, w, 50).values,
             numeric::decode(numeric::encode_per_tensor(numeric::kE2M1, w))));
  CHECK(same(nn::quantize_weights(WeightFormat::e2m1_mx, w, 50).values,
             numeric::decode(numeric::encode_mx(numeric::kE2M1, w, 50))));
  std::vector<float> rows;
  for (int r = 0; r < 6; ++r) {
    const std::span<const float> row(w.data() + r * 50, 50);
    const std::vector<float> d = numeric::decode(numeric::encode_per_tensor(numeric::kE4M3, row));
    rows.insert(rows.end(), d.begin(), d.end());
  }
  CHECK(same(nn::quantize_weights(WeightFormat::e4m3_channel, w, 50).values, rows));
}

TEST_CASE("MX blocks of 32 along a row, the tail block with its own scale, worked by hand") {
  // One row of 40: a block of 32 with amax 3, a tail of 8 with amax 0.01.
  std::vector<float> w(40, 3.0f);
  w[1] = -1.5f;
  for (int i = 32; i < 40; ++i) w[size_t(i)] = 0.0075f;
  w[32] = 0.01f;
  const nn::QuantizedTensor mx = nn::quantize_weights(WeightFormat::e2m1_mx, w, 40);
  // Block 0: X = 2^(floor(log2 3) − emax(e2m1) = 1 − 2) = 0.5; 3/X = 6 and
  // −1.5/X = −3 are e2m1 values, so both come back exactly.
  CHECK(mx.values[0] == 3.0f);
  CHECK(mx.values[1] == -1.5f);
  // Tail: X = 2^(floor(log2 0.01) − 2) = 2^(−7 − 2) = 2^-9. 0.01/X = 5.12 lies
  // above the midpoint 5 of e2m1's 4 and 6: 6·2^-9 = 0.01171875. 0.0075/X =
  // 3.84, above the midpoint 3.5 of 3 and 4: 4·2^-9 = 0.0078125.
  CHECK(mx.values[32] == 0.01171875f);
  CHECK(mx.values[33] == 0.0078125f);
  CHECK(mx.scale_bytes == 2);
  // One scale for the row (6/3 = 2): 0.01·2 = 0.02 is below 0.25, half of
  // e2m1's smallest nonzero 0.5, so the whole tail flushes to zero. That loss
  // is what the per-block scale prevents.
  const nn::QuantizedTensor one = nn::quantize_weights(WeightFormat::e2m1_tensor, w, 40);
  CHECK(one.values[0] == 3.0f);
  for (int i = 32; i < 40; ++i) CHECK(one.values[size_t(i)] == 0.0f);
}

TEST_CASE("quantize_model stores LeNet-5's weights and counts every byte") {
  // LeNet-5's weights as (rows, input): conv1 (6, 25), conv2 (16, 150),
  // fc1 (120, 400), fc2 (84, 120), fc3 (10, 84): 61,470 values; 236 biases.
  const int64_t values = 6 * 25 + 16 * 150 + 120 * 400 + 84 * 120 + 10 * 84;
  // fp4 codes, two per byte, per tensor: 75 + 1200 + 24000 + 5040 + 420.
  const int64_t fp4_codes = 75 + 1200 + 24000 + 5040 + 420;
  // MX blocks of 32 per row: ceil(25/32) = 1, ceil(150/32) = 5, ceil(400/32) = 13,
  // ceil(120/32) = 4, ceil(84/32) = 3.
  const int64_t mx_scales = 6 * 1 + 16 * 5 + 120 * 13 + 84 * 4 + 10 * 3;
  struct Case {
    WeightFormat format;
    int64_t weight_bytes, scale_bytes;
  };
  const int64_t channels = 6 + 16 + 120 + 84 + 10;
  const Case cases[] = {{WeightFormat::fp32, 4 * values, 0},
                        {WeightFormat::fp16, 2 * values, 0},
                        {WeightFormat::bf16, 2 * values, 0},
                        {WeightFormat::e4m3_tensor, values + 5 * 4, 5 * 4},
                        {WeightFormat::e4m3_channel, values + 4 * channels, 4 * channels},
                        {WeightFormat::e2m1_tensor, fp4_codes + 5 * 4, 5 * 4},
                        {WeightFormat::e2m1_mx, fp4_codes + mx_scales, mx_scales}};
  for (const Case& c : cases) {
    CAPTURE(nn::name(c.format));
    auto reference = nn::make_lenet5(10, 3);
    auto model = nn::make_lenet5(10, 3);
    const nn::ModelQuantization q = nn::quantize_model(*model, c.format);
    CHECK(q.weight_values == values);
    CHECK(q.bias_values == 61706 - values);
    CHECK(q.weight_bytes == c.weight_bytes);
    CHECK(q.total_bytes() == c.weight_bytes + 4 * (61706 - values));
    CHECK(q.scale_bytes == c.scale_bytes);
    // Every weight holds what quantize_weights decodes; every bias is untouched.
    const auto ref_params = reference->parameters(), params = model->parameters();
    for (size_t p = 0; p < params.size(); ++p) {
      const Tensor& before = ref_params[p]->var.value();
      const Tensor& after = params[p]->var.value();
      std::vector<float> expected(before.data<float>(), before.data<float>() + before.numel());
      if (before.rank() >= 2)
        expected = nn::quantize_weights(c.format, expected, before.numel() / before.dim(0)).values;
      bool equal = true;
      for (int64_t i = 0; i < before.numel(); ++i) equal = equal && after.data<float>()[i] == expected[size_t(i)];
      CHECK_MESSAGE(equal, params[p]->name);
    }
    if (c.format == WeightFormat::fp32) CHECK((q.relative_error == 0.0 && q.zeroed == 0));
    // The weights stored as zero, counted here from the values.
    int64_t zeroed = 0;
    for (size_t p = 0; p < params.size(); ++p) {
      const Tensor& before = ref_params[p]->var.value();
      const Tensor& after = params[p]->var.value();
      for (int64_t i = 0; i < before.numel(); ++i)
        zeroed += before.rank() >= 2 && before.data<float>()[i] != 0 && after.data<float>()[i] == 0;
    }
    CHECK(q.zeroed == zeroed);
  }
  // The ratios the lessons print: exactly 2 for 16 bits; 4n/(n + 20) for fp8
  // with five fp32 scales; 4n/(n/2 + n/32) = 128/17 ≈ 7.53 for MXFP4 when
  // rows are whole blocks and even, a little less here (LeNet's rows end in
  // partial blocks that still take a whole scale byte).
  auto model = nn::make_lenet5(10, 3);
  const nn::ModelQuantization mx = nn::quantize_model(*model, WeightFormat::e2m1_mx);
  const double ratio = double(mx.fp32_weight_bytes()) / double(mx.weight_bytes);
  CHECK(ratio == doctest::Approx(4.0 * double(values) / double(fp4_codes + mx_scales)).epsilon(1e-12));
  CHECK(ratio < 128.0 / 17.0);
  CHECK(ratio > 7.4);
}

TEST_CASE("MX fp4 follows rows of different spread that one fp4 scale per tensor flushes") {
  // Rows whose spread differs by 100× (as a layer's channels do): one
  // per-tensor scale, set by the largest row, flushes most of the small
  // rows to zero; per-block scales follow each row.
  Rng rng(5);
  std::vector<float> w(8 * 64);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 64; ++c) w[size_t(r * 64 + c)] = float(rng.normal() * (r < 4 ? 1.0 : 0.01));
  // Relative error over the small rows (the last four), where they differ.
  auto error = [&](WeightFormat f) {
    const std::vector<float> q = nn::quantize_weights(f, w, 64).values;
    double e = 0, n = 0;
    for (size_t i = 4 * 64; i < w.size(); ++i) e += (q[i] - w[i]) * (q[i] - w[i]), n += w[i] * w[i];
    return std::sqrt(e / n);
  };
  // Per tensor: amax ≈ 3 sets the scale 6/amax ≈ 2, so a small row's values
  // (|x| ≲ 0.03, times 2 below 0.25) all round to zero: error 1. MX: each
  // block's largest value lands in e2m1's top binade, and e2m1's relative
  // rounding error is at most 1/3 (between 1 and 1.5, or 1.5 and 2, ...),
  // more only for the few values near zero that round to 0 or 0.5·X.
  CHECK(error(WeightFormat::e2m1_tensor) == doctest::Approx(1.0));
  CHECK(error(WeightFormat::e2m1_mx) < 0.3);
}

TEST_CASE("weight formats by name, and errors that name the fault") {
  for (WeightFormat f : nn::weight_formats()) CHECK(nn::parse_weight_format(nn::name(f)) == f);
  CHECK(test::error_of([] { nn::parse_weight_format("int8"); }).find("unknown weight format 'int8'") !=
        std::string::npos);
  CHECK(test::error_of([] { nn::quantize_weights(WeightFormat::fp16, std::vector<float>(10), 3); })
            .find("10 values are not rows of 3") != std::string::npos);
}
