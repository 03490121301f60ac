// Rounding fp32 values to a narrower format by table lookup, with the
// answers of src/numeric's bit-exact quantize (the one implementation of
// rounding), at a few nanoseconds a value instead of numeric's ~70 ns: an
// emulated bf16 LeNet-5 epoch rounds tens of millions of values.
//
// Why a table can hold every answer: numeric rounds to nearest even at some
// bit position c of the fp32 word (c = 23 − the format's mantissa bits for
// its normal numbers, more for its subnormals and its overflow). Every format
// here has at most 10 mantissa bits, so c ≥ 13, and a float's result depends
// only on its top 19 bits (sign, exponent, top 10 mantissa bits) and on
// which of four classes its low 13 bits fall in: zero, below half (0x1000),
// exactly half, above half. For c = 13 those are the classes nearest-even
// tells apart; for c > 13 the comparison with half is decided by the top
// bits and the low 13 bits matter only as zero or not. The table holds
// numeric::quantize of one member of each class for each of the 2^19 tops:
// 2^21 floats (8 MiB), built once per format on first use.
//
// fp32 subnormals (|x| < 2^-126) are flushed to zero by the CPU threads that
// train (cpu/parallel.cpp), so the table's answer for them is whatever
// numeric gives in the thread that builds it; tests compare normal values.
#pragma once
#include <bit>
#include <cstdint>
#include <vector>

#include "numeric/convert.hpp"

namespace warpnet::ag {

class RoundingTable {
 public:
  // `format` must have at most 10 mantissa bits (tf32, fp16, bf16, fp8).
  RoundingTable(const numeric::Format& format, numeric::Saturation saturation);
  float operator()(float x) const {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    const uint32_t low = bits & 0x1FFFu;
    const uint32_t cls = low == 0 ? 0 : low < 0x1000u ? 1 : low == 0x1000u ? 2 : 3;
    return table_[(bits >> 13) << 2 | cls];
  }

 private:
  std::vector<float> table_;
};

// The table of a format, built on first use (thread-safe). Saturation as
// numeric's: finite for the fp8 formats, none (overflow to inf) otherwise.
const RoundingTable& rounding_table(const numeric::Format& format);

}  // namespace warpnet::ag
