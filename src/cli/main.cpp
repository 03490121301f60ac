// warpnet: the command a learner runs. Each subcommand is in cmd_<name>.cpp.
#include <cstdio>
#include <exception>
#include <functional>
#include <string>

#include "cli/commands.hpp"
#include "cli/mpirun_guard.hpp"
#include "core/build_info.hpp"
#include "core/error.hpp"

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
    if (argc > 1 && std::string(argv[1]) != "train" && std::string(argv[1]) != "bench")
      warpnet::cli::refuse_several_processes(std::string("warpnet ") + argv[1], "run it as one process");
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const warpnet::Error& e) {
    std::fprintf(stderr, "warpnet: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warpnet: unexpected error: %s\n", e.what());
    return 2;
  }
  return 0;
}
