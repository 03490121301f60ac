// Running the warpnet binary from the CLI suite, and what it says of the
// build and the machine. A test that takes one branch with a GPU and another
// without learns which from here (`warpnet info`), never from the output it
// is checking: a run that lost the message it should print must fail, not
// read as the other branch.
#pragma once
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace warpnet::test {

struct Run {
  int status;
  std::string output;  // stdout and stderr together
};

// Runs `program` with `args` (a shell command line's rest).
inline Run run_program(const std::filesystem::path& program, const std::string& args) {
  const std::string command = program.string() + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  REQUIRE(pipe);
  Run run{0, {}};
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe.get())) run.output.append(buf.data(), n);
  run.status = ::pclose(pipe.release());
  return run;
}

// The warpnet binary CTest points us at ($WARPNET_BIN); the build's other
// programs (lessons, warpnet-viz) sit beside it.
inline std::filesystem::path warpnet_binary() {
  const char* bin = std::getenv("WARPNET_BIN");
  REQUIRE_MESSAGE(bin, "WARPNET_BIN must name the warpnet binary (CTest sets it)");
  return bin;
}

// Runs the warpnet binary with `args`.
inline Run warpnet_cli(const std::string& args) { return run_program(warpnet_binary(), args); }

// `warpnet info`'s lines, asked once.
inline const std::string& info_output() {
  static const std::string output = [] {
    const Run run = warpnet_cli("info");
    REQUIRE_MESSAGE(run.status == 0, run.output);
    return run.output;
  }();
  return output;
}

// Whether the binary was built with the CUDA toolkit (its GPU kernels compiled).
inline bool built_with_toolkit() { return info_output().find("cuda toolkit: not found") == std::string::npos; }

// Whether the binary sees a GPU (`info` lists one rather than "gpu: none (why)").
inline bool gpu_present() { return info_output().find("\ngpu: none (") == std::string::npos; }

// Whether Fashion-MNIST's four IDX files (gzipped or not) are in the folder
// `info` names, where `tour` and `train --data fashion-mnist` read them.
inline bool fashion_mnist_installed() {
  const std::string& info = info_output();
  const std::string key = "\nfashion-mnist: ";
  const size_t at = info.find(key);
  REQUIRE_MESSAGE(at != std::string::npos, "warpnet info names no Fashion-MNIST folder:\n", info);
  const size_t from = at + key.size();
  const std::filesystem::path dir = info.substr(from, info.find('\n', from) - from);
  for (const char* file : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"})
    if (!std::filesystem::exists(dir / (std::string(file) + ".gz")) && !std::filesystem::exists(dir / file))
      return false;
  return true;
}

}  // namespace warpnet::test
