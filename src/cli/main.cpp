// warpnet: the command a learner runs. Each subcommand is in cmd_<name>.cpp.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/mpirun_guard.hpp"
#include "core/build_info.hpp"
#include "core/error.hpp"

namespace {

// Edits (insert, delete, replace) between two short strings.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// For an option the command does not have ("--epoch"), the one it most
// likely meant ("--epochs"), or "" when none is close.
std::string nearest_option(const CLI::App& app, const std::string& command, const std::string& typed) {
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands(std::function<bool(const CLI::App*)>()))
    if (s->check_name(command)) sub = s;
  if (!sub || !typed.starts_with("--")) return "";
  const std::string word = typed.substr(0, typed.find('='));
  std::string best;
  size_t best_distance = 3;  // at most two edits away
  for (const CLI::Option* option : sub->get_options())
    for (const std::string& name : option->get_lnames()) {
      const size_t d = edit_distance(word, "--" + name);
      if (d == 0) return "";  // an option it has: not the one it did not expect
      if (d < best_distance) best = "--" + name, best_distance = d;
    }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"warpnet: how neural networks use a GPU, from the CPU up", "warpnet"};
  app.set_version_flag("--version", std::string("warpnet ") + warpnet::build::version);
  app.require_subcommand(1);
  warpnet::cli::add_tour_command(app);
  warpnet::cli::add_train_command(app);
  warpnet::cli::add_op_command(app);
  warpnet::cli::add_info_command(app);
  warpnet::cli::add_trace_command(app);
  warpnet::cli::add_bench_command(app);
  // No command at all: what there is, as `warpnet --help` says it (CLI11 says
  // only "A subcommand is required").
  if (argc == 1) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  // CLI11 says only "A subcommand is required" for a word that names none.
  if (argc > 1 && argv[1][0] != '-') {
    const CLI::App& commands = app;
    bool known = false;
    std::string names;
    for (const CLI::App* sub : commands.get_subcommands(std::function<bool(const CLI::App*)>())) {
      known = known || sub->check_name(argv[1]);
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "warpnet: no command '%s' (the commands: %s; `warpnet --help` says what each does)\n",
                   argv[1], names.c_str());
      return 109;  // CLI11's exit code for a missing subcommand
    }
  }
  try {
    // train and bench decide for themselves (data-parallel training, bench allreduce).
    if (argc > 1 && argv[1][0] != '-' && std::string(argv[1]) != "train" && std::string(argv[1]) != "bench")
      warpnet::cli::refuse_several_processes(std::string("warpnet ") + argv[1], "run it as one process");
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Under mpirun, before any session names the ranks: say which one.
    if (const std::string rank = warpnet::cli::mpirun_rank_prefix(); !rank.empty() && e.get_exit_code() != 0)
      std::fprintf(stderr, "warpnet: %s\n", rank.c_str());
    const int code = app.exit(e);
    if (dynamic_cast<const CLI::ExtrasError*>(&e) && argc > 1)
      for (int i = 2; i < argc; ++i)
        if (const std::string near = nearest_option(app, argv[1], argv[i]); !near.empty())
          std::fprintf(stderr, "warpnet %s: %s is not an option of it; did you mean %s?\n", argv[1], argv[i],
                       near.c_str());
    return code;
  } catch (const warpnet::Error& e) {
    std::fprintf(stderr, "warpnet: %serror: %s\n", warpnet::cli::mpirun_rank_prefix().c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warpnet: unexpected error: %s\n", e.what());
    return 2;
  }
  return 0;
}
