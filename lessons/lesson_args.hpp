// The command line every lesson program shares: no argument runs the whole
// chapter, --quick runs smaller sizes (what the chapter's CTest test runs),
// and in the chapters with generated README tables --markdown prints only
// those (scripts/lesson-tables.sh).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>

namespace warpnet::lesson {

// --help or -h anywhere: `usage` (after the program's name) on stdout, and
// the successful exit a help flag gets; otherwise nothing.
inline void answer_help(int argc, char** argv, const char* usage) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: %s %s\n", argv[0], usage);
      std::exit(0);
    }
}

// true for --quick, false for no argument; nullopt, after printing the usage,
// for anything else.
inline std::optional<bool> parse_quick(int argc, char** argv) {
  answer_help(argc, argv, "[--quick]   (--quick: smaller sizes, what the chapter's test runs)");
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") != 0) {
      std::fprintf(stderr, "%s: unknown argument '%s'\nusage: %s [--quick]\n", argv[0], argv[i], argv[0]);
      return std::nullopt;
    }
    quick = true;
  }
  return quick;
}

// A chapter whose whole run is short, with generated tables: true for
// --markdown alone, false for no argument; nullopt, after printing the usage
// (`markdown_what`: what --markdown prints), for anything else.
inline std::optional<bool> parse_markdown(int argc, char** argv, const char* markdown_what) {
  const std::string usage = std::string("[--markdown]   (--markdown: ") + markdown_what + ")";
  answer_help(argc, argv, usage.c_str());
  if (argc <= 1) return false;
  if (argc == 2 && std::strcmp(argv[1], "--markdown") == 0) return true;
  std::fprintf(stderr, "%s: unknown argument '%s'\nusage: %s %s\n", argv[0], argv[1], argv[0], usage.c_str());
  return std::nullopt;
}

struct Mode {
  bool quick = false;
  bool markdown = false;
  std::string table;  // --markdown NAME: the README's table NAME (scripts/lesson-tables.sh --table NAME)
};

// No argument, --quick, or --markdown alone or followed by one of `tables`
// (the chapter's named tables); nullopt, after printing the usage
// (`markdown_what`: what --markdown prints), for anything else.
inline std::optional<Mode> parse_mode(int argc, char** argv, const char* markdown_what,
                                      std::initializer_list<const char*> tables = {}) {
  std::string names;
  for (const char* t : tables) names += std::string(names.empty() ? "" : "|") + t;
  const std::string usage = std::string("[--quick] | --markdown") + (names.empty() ? "" : " [" + names + "]") +
                            "   (--markdown: " + markdown_what + ")";
  answer_help(argc, argv, usage.c_str());
  if (argc == 2 && std::strcmp(argv[1], "--markdown") == 0) return Mode{false, true, ""};
  if (argc == 3 && std::strcmp(argv[1], "--markdown") == 0) {
    for (const char* t : tables)
      if (std::strcmp(argv[2], t) == 0) return Mode{false, true, t};
    std::fprintf(stderr, "%s: unknown table '%s'\nusage: %s %s\n", argv[0], argv[2], argv[0], usage.c_str());
    return std::nullopt;
  }
  const std::optional<bool> quick = parse_quick(argc, argv);
  if (!quick) {
    std::fprintf(stderr, "       %s --markdown   (%s)\n", argv[0], markdown_what);
    return std::nullopt;
  }
  return Mode{*quick, false, ""};
}

}  // namespace warpnet::lesson
