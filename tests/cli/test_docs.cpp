// The commands the docs give a learner still run as written: the Markdown
// files, and the comments of the sources (a kernel's header, its `Run:`
// line). Every `build/bin/<program> ... --flag` (in a code block, an inline
// code span, which may wrap over lines, or a `Run:` line), and every
// `warpnet ...` as installed, names a program this build makes and flags that
// program's --help lists (a usage line's too: `[--json FILE]`); every
// `warpnet trace` command there traces its kernel and matches the CPU
// reference; every test filter (`-tc="registry*"`) selects a test case;
// every file an inline code span or a comment names (`src/cpu/ops.hpp`)
// exists. A flag, a test or a file renamed in the code and not in the prose
// fails here, naming file and line.
#include <doctest/doctest.h>

#include <array>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/build_info.hpp"
#include "core/error.hpp"
#include "tests/cli/cli_run.hpp"

using namespace warpnet;
namespace fs = std::filesystem;

namespace {

// One `build/bin/...` command as a document writes it.
struct DocCommand {
  std::string where;                // "lessons/04-matmul-ladder/README.md:1136"
  std::string program;              // "warpnet"
  std::vector<std::string> words;   // before the first option: "trace", "matmul/05"
  std::vector<std::string> tokens;  // everything after the program, up to a shell separator
  bool pattern = false;             // `<op>/<NN>`, `--json <file>`: options to check, not a command to run
};

const std::string kBinPrefix = "build/bin/";

bool is_separator(const std::string& token) {
  return token == "|" || token == "||" || token == "&&" || token == ";" || token.starts_with(">") ||
         token.starts_with("2>") || token.starts_with("&>");
}

// Punctuation a sentence or a shell line puts after a word: "lenet5`", "--quick,", "warpnet}".
std::string trim_trailing(std::string word) {
  while (!word.empty() && std::string_view(",.;:)]`}\"'").find(word.back()) != std::string_view::npos)
    word.pop_back();
  return word;
}

bool is_program_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

// A usage line's alternatives, optional parts and placeholders:
// `--device emu\|cuda`, `[--json FILE]`, `<op>/<NN>`, `--size M,N,K`, `--size ...`.
bool has_pattern(const std::string& text) {
  if (text.find_first_of("<[") != std::string::npos || text.find("\\|") != std::string::npos ||
      text.find("...") != std::string::npos || text.find("…") != std::string::npos)
    return true;
  // A word, or a comma-separated part of one, in capitals: TA, FILE, N.
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    std::istringstream parts(word);
    for (std::string part; std::getline(parts, part, ',');)
      if (!part.empty() && part.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == std::string::npos) return true;
  }
  return false;
}

// `text` split at spaces as a shell does, a double-quoted part kept whole
// with its quotes: -tc="mma_sync autotune*" is one word.
std::vector<std::string> shell_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false;
  for (char ch : text) {
    if (ch == '"') quoted = !quoted;
    if (!quoted && (ch == ' ' || ch == '\t')) {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

// The command `piece` holds from its program's name on, found at `where`.
void command_at(const std::string& whole_piece, const std::string& where, std::vector<DocCommand>& out) {
  std::string piece = whole_piece.substr(0, whole_piece.find(kBinPrefix));  // the next command, if any, is its own
  piece = piece.substr(0, piece.find(" #"));                                  // a shell comment
  const std::vector<std::string> words = shell_words(piece);
  if (words.empty()) return;
  DocCommand c;
  c.where = where;
  c.program = trim_trailing(words.front());
  if (!is_program_name(c.program)) return;  // `build/bin/lessonNN`: a pattern of names
  std::string written = words.front();      // the command as the text has it, up to where it ends
  // A word opening with '(' starts an aside: "lesson07 (part 7)", "(a GPU)".
  for (size_t i = 1; i < words.size() && !is_separator(words[i]) && !words[i].starts_with("("); ++i) {
    std::string token = words[i];
    written += " " + token;
    const bool last = token.ends_with(';');  // "cmd; next"
    while (token.starts_with("[")) token.erase(0, 1);
    c.tokens.push_back(trim_trailing(token));
    if (last) break;
  }
  c.pattern = has_pattern(written);
  for (const std::string& t : c.tokens) {
    if (t.starts_with("-") || has_pattern(t)) break;  // a pattern word is no subcommand
    c.words.push_back(t);
  }
  out.push_back(c);
}

// The commands in `text` (one code-block line, or one inline code span),
// found at `where`: each `build/bin/<program> ...`, and a text that starts
// with `warpnet ` (or `$ warpnet `), the command as installed.
void commands_in(const std::string& text, const std::string& where, std::vector<DocCommand>& out) {
  for (size_t at = text.find(kBinPrefix); at != std::string::npos; at = text.find(kBinPrefix, at + 1))
    command_at(text.substr(at + kBinPrefix.size()), where, out);
  std::string_view start(text);
  start.remove_prefix(std::min(start.size(), start.find_first_not_of(' ')));
  if (start.starts_with("$ ")) start.remove_prefix(2);
  if (start.starts_with("warpnet ")) command_at(std::string(start), where, out);
}

// A piece of code in a Markdown file: a line of a fenced code block (a line
// ending in '\' continued by the next), or an inline code span of the prose,
// where a paragraph's lines are joined first because a span may wrap; in a
// source's comments, also each word outside a span that is a file's path.
struct CodePiece {
  enum class Kind { code_line, inline_span, path_word };
  std::string where;  // file:line
  std::string text;
  Kind kind;
};

// The files an inline code span (or a comment's word) names: `src/cpu/ops.hpp`,
// `conv_cudnn.cu:457`, `dist/cost_model.hpp/.cpp` (both); none for a span that
// is not one path of a source, script, record or text file (a command, a
// pattern, a folder).
std::vector<std::string> paths_named(const std::string& span) {
  std::string path = trim_trailing(span);
  if (const size_t colon = path.rfind(':');
      colon != std::string::npos && colon + 1 < path.size() &&
      path.find_first_not_of("0123456789-", colon + 1) == std::string::npos)
    path.resize(colon);  // a line number, or a range of lines
  if (path.find('/') == std::string::npos || path.find_first_of(" <*") != std::string::npos ||
      path.find("...") != std::string::npos || path.find("…") != std::string::npos || path.starts_with("build") ||
      path.starts_with("/") || path.find("://") != std::string::npos)
    return {};
  static const char* kExtensions[] = {".cpp", ".hpp", ".cu", ".cuh", ".md", ".json", ".txt", ".sh", ".py", ".cmake", ".in"};
  const auto extension_at = [&](const std::string& p) -> size_t {
    for (const char* e : kExtensions)
      if (p.ends_with(e)) return p.size() - std::strlen(e);
    return std::string::npos;
  };
  // "name.hpp/.cpp": the header and its source.
  if (const size_t pair = path.rfind("/."); pair != std::string::npos && pair > 0) {
    const std::string first = path.substr(0, pair), second_extension = path.substr(pair + 1);
    const size_t stem_end = extension_at(first);
    if (stem_end == std::string::npos || extension_at(second_extension) != 0) return {};
    return {first, first.substr(0, stem_end) + second_extension};
  }
  if (extension_at(path) == std::string::npos) return {};
  return {path};
}

// The words of a comment's line outside its code spans, each without the
// punctuation a sentence puts before it: "(kernels/common/hopper.hpp)".
std::vector<std::string> words_outside_spans(const std::string& line) {
  std::string prose;
  bool in_span = false;
  for (char ch : line) {
    if (ch == '`') in_span = !in_span;
    else if (!in_span) prose += ch;
  }
  std::vector<std::string> words;
  std::istringstream in(prose);
  for (std::string word; in >> word;) {
    while (!word.empty() && std::string_view("([\"'").find(word.front()) != std::string_view::npos) word.erase(0, 1);
    words.push_back(word);
  }
  return words;
}

// The inline code spans of a paragraph (`text`, its lines joined by spaces;
// `lines` holds the offset in `text` where each line starts and its number),
// each named by the line its opening backquote is on.
void spans_in(const std::string& text, const std::vector<std::pair<size_t, int>>& lines, const std::string& name,
              std::vector<CodePiece>& out) {
  for (size_t open = text.find('`'); open != std::string::npos;) {
    const size_t close = text.find('`', open + 1);
    if (close == std::string::npos) break;
    int at_line = lines.front().second;
    for (const auto& [offset, n] : lines)
      if (offset <= open) at_line = n;
    out.push_back({cat(name, ":", at_line), text.substr(open + 1, close - open - 1), CodePiece::Kind::inline_span});
    open = text.find('`', close + 1);
  }
}

// A Markdown file's code: its fenced lines and its paragraphs' inline spans.
std::vector<CodePiece> code_in_markdown(const fs::path& file, const std::string& name) {
  std::ifstream in(file);
  REQUIRE_MESSAGE(in, "cannot read ", file.string());
  std::vector<CodePiece> out;
  std::string line, paragraph, continued;
  std::vector<std::pair<size_t, int>> paragraph_lines;  // offset in `paragraph` where each line starts, its number
  bool fenced = false;
  int number = 0, continued_from = 0;
  const auto flush_paragraph = [&] {
    if (!paragraph.empty()) spans_in(paragraph, paragraph_lines, name, out);
    paragraph.clear();
    paragraph_lines.clear();
  };
  while (std::getline(in, line)) {
    ++number;
    const bool fence = line.find_first_not_of(' ') != std::string::npos &&
                       line.compare(line.find_first_not_of(' '), 3, "```") == 0;
    if (fence) {
      flush_paragraph();
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      if (continued.empty()) continued_from = number;
      if (line.ends_with('\\')) {
        continued += line.substr(0, line.size() - 1) + " ";
        continue;
      }
      out.push_back({cat(name, ":", continued_from), continued + line, CodePiece::Kind::code_line});
      continued.clear();
    } else if (line.find_first_not_of(" \t") == std::string::npos) {
      flush_paragraph();
    } else {
      paragraph_lines.emplace_back(paragraph.size(), number);
      paragraph += line + " ";
    }
  }
  flush_paragraph();
  return out;
}

// A C++ or CUDA file's code in its `//` comments, as a kernel's header gives
// it: the inline spans of each run of comment lines (a span may wrap), and
// each `Run:` line, unquoted, with the more deeply indented comment lines
// that continue it.
std::vector<CodePiece> code_in_comments(const fs::path& file, const std::string& name) {
  std::ifstream in(file);
  REQUIRE_MESSAGE(in, "cannot read ", file.string());
  std::vector<CodePiece> out;
  std::string line, comments, run_line;
  std::vector<std::pair<size_t, int>> comment_lines;
  int number = 0, run_from = 0;
  size_t run_indent = 0;
  const auto flush_run = [&] {
    if (!run_line.empty()) out.push_back({cat(name, ":", run_from), run_line, CodePiece::Kind::code_line});
    run_line.clear();
  };
  const auto flush_comments = [&] {
    flush_run();
    if (!comments.empty()) spans_in(comments, comment_lines, name, out);
    comments.clear();
    comment_lines.clear();
  };
  while (std::getline(in, line)) {
    ++number;
    const size_t slashes = line.find_first_not_of(" \t");
    if (slashes == std::string::npos || line.compare(slashes, 2, "//") != 0) {
      flush_comments();
      continue;
    }
    const std::string text = line.substr(slashes + 2);
    const size_t indent = std::min(text.size(), text.find_first_not_of(' '));
    if (!run_line.empty() && indent > run_indent && indent < text.size()) {
      run_line += " " + text.substr(indent);
    } else {
      flush_run();
      if (text.compare(indent, 4, "Run:") == 0) {
        run_line = text.substr(indent + 4);
        run_from = number;
        run_indent = indent;
      }
    }
    comment_lines.emplace_back(comments.size(), number);
    comments += text + " ";
    for (const std::string& word : words_outside_spans(text))
      if (!paths_named(word).empty()) out.push_back({cat(name, ":", number), word, CodePiece::Kind::path_word});
  }
  flush_comments();
  return out;
}

// Every code piece of the source tree's Markdown files and of its sources'
// comments, build folders and hidden ones left out.
const std::vector<CodePiece>& documented_code() {
  static const std::vector<CodePiece> all = [] {
    const fs::path root = build::source_dir;
    std::vector<CodePiece> found;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
      const std::string leaf = it->path().filename().string();
      if (it->is_directory() && (leaf.starts_with(".") || leaf.starts_with("build"))) {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file()) continue;
      const std::string extension = it->path().extension().string(), name = fs::relative(it->path(), root).string();
      const bool source = extension == ".cpp" || extension == ".hpp" || extension == ".cu";
      if (extension != ".md" && !source) continue;
      const auto in_file = source ? code_in_comments(it->path(), name) : code_in_markdown(it->path(), name);
      found.insert(found.end(), in_file.begin(), in_file.end());
    }
    return found;
  }();
  return all;
}

// Every `build/bin/...` command in the docs.
const std::vector<DocCommand>& documented_commands() {
  static const std::vector<DocCommand> all = [] {
    std::vector<DocCommand> found;
    for (const CodePiece& piece : documented_code())
      if (piece.kind != CodePiece::Kind::path_word) commands_in(piece.text, piece.where, found);
    return found;
  }();
  return all;
}

// Programs the docs may name that this build leaves out where their
// dependencies are missing: the visualizer (Dear ImGui, GLFW, stb) and the
// benchmarks under bench/ (WARPNET_BUILD_BENCH=OFF).
bool optional_and_not_built(const std::string& program) {
  if (program == "warpnet-viz") return !WARPNET_TEST_HAS_VIZ;
  if (program.starts_with("bench_")) return !WARPNET_TEST_HAS_BENCH;
  return false;
}

// Whether `help` lists `flag` as a whole word ("--size" and not "--sizes").
bool lists_flag(const std::string& help, const std::string& flag) {
  for (size_t at = help.find(flag); at != std::string::npos; at = help.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    const bool starts_word = at == 0 || help[at - 1] == ' ' || help[at - 1] == ',' || help[at - 1] == '[' ||
                             help[at - 1] == '\n' || help[at - 1] == '|';
    const bool ends_word = end == help.size() || !(std::isalnum(static_cast<unsigned char>(help[end])) ||
                                                   help[end] == '-' || help[end] == '_');
    if (starts_word && ends_word) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("the docs' commands name programs this build makes and options their --help lists") {
  const fs::path bin_dir = test::warpnet_binary().parent_path();
  std::map<std::string, std::string> helps;  // the --help command run, its output
  int commands = 0, flags = 0, skipped = 0;
  for (const DocCommand& c : documented_commands()) {
    ++commands;
    const fs::path program = bin_dir / c.program;
    if (!fs::exists(program)) {
      if (optional_and_not_built(c.program)) {
        ++skipped;
        continue;
      }
      FAIL_CHECK(c.where, " runs build/bin/", c.program, ", which this build does not make");
      continue;
    }
    std::string asked;
    for (const std::string& w : c.words) asked += w + " ";
    asked += "--help";
    auto help = helps.find(c.program + " " + asked);
    for (const std::string& token : c.tokens) {
      if (!token.starts_with("--") || token.size() == 2) continue;
      const std::string flag = token.substr(0, token.find('='));
      if (help == helps.end())
        help = helps.emplace(c.program + " " + asked, test::run_program(program, asked).output).first;
      ++flags;
      CHECK_MESSAGE(lists_flag(help->second, flag), c.where, ": ", flag, " is not among the options of `", c.program,
                    " ", asked, "`:\n", help->second);
    }
  }
  MESSAGE(commands, " commands in the docs, ", flags, " options checked against ", helps.size(),
          " --help pages; ", skipped, " commands of programs this build leaves out");
  // The docs hold a few hundred such commands (2026-12-07: 620, with 550
  // options): far fewer found means the reader above went wrong, not the docs.
  CHECK(commands >= 400);
  CHECK(flags >= 400);
}

TEST_CASE("the docs' warpnet trace commands trace their kernel and match the CPU reference") {
  std::set<std::string> done;
  for (const DocCommand& c : documented_commands()) {
    if (c.pattern || c.program != "warpnet" || c.words.size() < 2 || c.words.front() != "trace") continue;
    std::string args;
    for (const std::string& t : c.tokens) args += t + " ";
    if (!done.insert(args).second) continue;
    const test::Run run = test::warpnet_cli(args);
    INFO(c.where, ": warpnet ", args, "\n", run.output);
    CHECK(run.status == 0);
    CHECK(run.output.find("result: matches the CPU reference") != std::string::npos);
  }
  MESSAGE(done.size(), " distinct trace commands run");
  CHECK(done.size() >= 60);  // 2026-12-07: 98, 26 of them in the lessons and READMEs
}

TEST_CASE("the docs' test filters select test cases") {
  const fs::path bin_dir = test::warpnet_binary().parent_path();
  std::set<std::string> done;
  for (const DocCommand& c : documented_commands()) {
    if (c.pattern || !c.program.starts_with("test_") || !fs::exists(bin_dir / c.program)) continue;
    // doctest's own options (-tc=, -tce=, -ts=, -sf=...), their values
    // quoted again: the reader above keeps a quote only where it opens.
    std::string filters;
    for (const std::string& t : c.tokens) {
      if (!t.starts_with("-") || t.starts_with("--")) continue;
      std::string unquoted;
      for (char ch : t)
        if (ch != '"' && ch != '\'') unquoted += ch;
      const size_t equals = unquoted.find('=');
      if (equals == std::string::npos) filters += unquoted + " ";
      else filters += cat(unquoted.substr(0, equals + 1), "'", unquoted.substr(equals + 1), "' ");
    }
    if (filters.empty() || !done.insert(c.program + " " + filters).second) continue;
    const test::Run run = test::run_program(bin_dir / c.program, filters + "--list-test-cases");
    INFO(c.where, ": ", c.program, " ", filters, "\n", run.output);
    REQUIRE(run.status == 0);
    const std::string key = "passing the current filters: ";
    const size_t at = run.output.find(key);
    REQUIRE(at != std::string::npos);
    CHECK(std::stoi(run.output.substr(at + key.size())) > 0);
  }
  MESSAGE(done.size(), " distinct test filters listed");
  CHECK(done.size() >= 20);  // 2026-12-07: 25
}

TEST_CASE("the files the docs name exist") {
  const fs::path root = build::source_dir;
  int named = 0, in_comments = 0;
  for (const CodePiece& piece : documented_code()) {
    if (piece.kind == CodePiece::Kind::code_line) continue;
    // As the docs write them: from the top of the tree, from the document's
    // folder or the one above it, or as sources include them (from src/);
    // never from outside the tree, which a fresh clone lacks.
    const fs::path doc_dir = (root / piece.where.substr(0, piece.where.rfind(':'))).parent_path();
    const std::array<fs::path, 4> bases{root, doc_dir, doc_dir.parent_path(), root / "src"};
    const auto in_tree = [&](const std::string& path, auto exists) {
      for (const fs::path& base : bases) {
        const fs::path at = (base / path).lexically_normal();
        if (!at.lexically_relative(root).string().starts_with("..") && exists(at)) return true;
      }
      return false;
    };
    for (const std::string& path : paths_named(piece.text)) {
      // A comment's bare path whose first folder is none of ours names
      // another project's file: NumPy's numpy/lib/format.py.
      const bool ours = piece.kind == CodePiece::Kind::inline_span ||
                        in_tree(path.substr(0, path.find('/')), [](const fs::path& p) { return fs::is_directory(p); });
      if (!ours) continue;
      ++(piece.kind == CodePiece::Kind::path_word ? in_comments : named);
      CHECK_MESSAGE(in_tree(path, [](const fs::path& p) { return fs::exists(p); }), piece.where, ": `", piece.text,
                    "` names ", path, ", which is not in the tree");
    }
  }
  MESSAGE(named, " files named in code spans, ", in_comments, " in the sources' comments");
  CHECK(named >= 200);        // 2026-12-07: over 300; far fewer means the reader above went wrong
  CHECK(in_comments >= 300);  // 2026-12-07: over 400
}
