// Errors that name what is wrong: shapes, values, files, limits.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace warpnet {

// Every failure warpnet reports is an Error whose message reads as a sentence
// a user can act on, e.g. "matmul: A is (3,4), B is (5,2): inner dimensions differ".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Concatenates any streamable values into one string (none: "").
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  ((out << parts), ...);
  return out.str();
}

template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  throw Error(cat(parts...));
}

}  // namespace warpnet

// Checks a precondition and throws warpnet::Error with the streamed message.
#define WN_CHECK(cond, ...)                          \
  do {                                               \
    if (!(cond)) ::warpnet::fail(__VA_ARGS__);       \
  } while (0)
