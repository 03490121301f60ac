// The command line every lesson program shares: no argument runs the whole
// chapter, --quick runs smaller sizes (what the chapter's CTest test runs),
// and in the chapters with generated README tables --markdown prints only
// those (scripts/lesson-tables.sh).
#pragma once
#include <cstdio>
#include <cstring>
#include <optional>

namespace warpnet::lesson {

// true for --quick, false for no argument; nullopt, after printing the usage,
// for anything else.
inline std::optional<bool> parse_quick(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") != 0) {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return std::nullopt;
    }
    quick = true;
  }
  return quick;
}

// A chapter with no options (its whole run is short): false, after printing
// the usage, for any argument.
inline bool parse_none(int argc, char** argv) {
  if (argc <= 1) return true;
  std::fprintf(stderr, "usage: %s   (this chapter takes no options)\n", argv[0]);
  return false;
}

struct Mode {
  bool quick = false;
  bool markdown = false;
};

// No argument, --quick, or --markdown alone; nullopt, after printing the
// usage (`markdown_what`: what --markdown prints), for anything else.
inline std::optional<Mode> parse_mode(int argc, char** argv, const char* markdown_what) {
  if (argc == 2 && std::strcmp(argv[1], "--markdown") == 0) return Mode{false, true};
  const std::optional<bool> quick = parse_quick(argc, argv);
  if (!quick) {
    std::fprintf(stderr, "       %s --markdown   (%s)\n", argv[0], markdown_what);
    return std::nullopt;
  }
  return Mode{*quick, false};
}

}  // namespace warpnet::lesson
