#include "cli/number_list.hpp"

#include <sstream>

#include "core/error.hpp"

namespace warpnet::cli {

std::vector<int64_t> parse_number_list(const std::string& text, const std::string& what) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
    }
    WN_CHECK(used == item.size() && v >= 0, what, " '", text, "' must be comma-separated whole numbers");
    out.push_back(v);
  }
  return out;
}

}  // namespace warpnet::cli
