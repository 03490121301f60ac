#include "autograd/rounding_table.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "core/error.hpp"

namespace warpnet::ag {

RoundingTable::RoundingTable(const numeric::Format& format, numeric::Saturation saturation)
    : table_(size_t(1) << 21) {
  WN_CHECK(format.mantissa <= 10, "rounding table: ", format.name, " has ", format.mantissa,
           " mantissa bits; the table's 13 low bits hold the rounding of at most 10");
  constexpr uint32_t kMembers[4] = {0, 1, 0x1000, 0x1001};  // zero, below half, half, above half
  for (uint32_t top = 0; top < (1u << 19); ++top)
    for (uint32_t cls = 0; cls < 4; ++cls) {
      const float x = std::bit_cast<float>(top << 13 | kMembers[cls]);
      table_[top << 2 | cls] = numeric::quantize(format, x, {}, saturation);
    }
}

const RoundingTable& rounding_table(const numeric::Format& format) {
  static std::mutex mutex;
  static std::map<const numeric::Format*, std::unique_ptr<RoundingTable>> tables;
  std::lock_guard lock(mutex);
  std::unique_ptr<RoundingTable>& t = tables[&format];
  if (!t) {
    const bool fp8 = &format == &numeric::kE4M3 || &format == &numeric::kE5M2;
    t = std::make_unique<RoundingTable>(format, fp8 ? numeric::Saturation::finite : numeric::Saturation::none);
  }
  return *t;
}

}  // namespace warpnet::ag
