// "33,17,40" -> {33, 17, 40}: the comma-separated sizes and indices the
// warpnet subcommands and the visualizer's stepper take (--size, --block).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace warpnet {

// Throws Error naming `what` ("trace: --size") and the text when an item is
// not a whole number >= 0.
std::vector<int64_t> parse_number_list(const std::string& text, const std::string& what);

}  // namespace warpnet
