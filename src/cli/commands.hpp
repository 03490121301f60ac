// Each `warpnet` subcommand lives in its own cmd_<name>.cpp and registers
// itself on the CLI11 app through one of these functions.
#pragma once
#include <CLI/CLI.hpp>

namespace warpnet::cli {

void add_tour_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_op_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_trace_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace warpnet::cli
