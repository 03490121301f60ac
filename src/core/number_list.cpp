#include "core/number_list.hpp"

#include <sstream>
#include <stdexcept>

#include "core/error.hpp"

namespace warpnet {

std::vector<int64_t> parse_number_list(const std::string& text, const std::string& what) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  // getline drops an empty last item: "4,4," ran as "4,4" with K the default.
  WN_CHECK(text.empty() || text.back() != ',', what, " '", text, "' must be comma-separated whole numbers");
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    long long v = -1;
    bool too_long = false;
    try {
      v = std::stoll(item, &used);
    } catch (const std::out_of_range&) {
      too_long = true;
    } catch (const std::exception&) {
    }
    // A whole number past 64 bits was called "not comma-separated whole numbers".
    WN_CHECK(!too_long || item.find('-') != std::string::npos, what, " '", text, "': ", item,
             " is past the largest size, 2^63 - 1");
    WN_CHECK(used == item.size() && v >= 0, what, " '", text, "' must be comma-separated whole numbers");
    out.push_back(v);
  }
  return out;
}

}  // namespace warpnet
