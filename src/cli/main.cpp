// warpnet: the command a learner runs. Each subcommand is in cmd_<name>.cpp.
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"
#include "core/build_info.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"warpnet: how neural networks use a GPU, from the CPU up"};
  app.set_version_flag("--version", std::string("warpnet ") + warpnet::build::version);
  app.require_subcommand(1);
  warpnet::cli::add_tour_command(app);
  warpnet::cli::add_train_command(app);
  warpnet::cli::add_op_command(app);
  warpnet::cli::add_info_command(app);
  warpnet::cli::add_trace_command(app);
  warpnet::cli::add_bench_command(app);
  try {
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
