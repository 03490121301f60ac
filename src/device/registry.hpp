// The kernel registry: every kernel version registers itself once (op,
// version, name, precision, launch shape, FLOP and byte formulas, how to
// launch it), and every op its inputs, CPU reference and error bound. Tests,
// `warpnet trace`, benchmarks and lessons enumerate it, so a new kernel is
// tested and traced without touching a switch anywhere (see docs: DESIGN, "Kernels").
#pragma once
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "simt/cuda_types.hpp"
#include "simt/minifloat.hpp"

namespace warpnet::device {

// An op's problem sizes, in the order Op::size_names gives ({M, N, K} for matmul).
using Sizes = std::vector<int64_t>;

// What a kernel computes, independent of how: the CPU side of every check.
struct Op {
  std::string name;                     // "matmul"
  std::vector<std::string> size_names;  // {"M", "N", "K"}
  std::vector<Sizes> test_sizes;        // every kernel of the op is checked at each
  std::vector<Tensor> (*make_inputs)(const Sizes&, Rng&);
  Shape (*output_shape)(const Sizes&);
  Tensor (*reference)(const std::vector<Tensor>& inputs);
  // The largest error allowed for each output element, from the precision and
  // the reduction length (the reasoning sits beside each op's definition).
  Tensor (*tolerance)(const std::vector<Tensor>& inputs);
};

struct Launch {
  dim3 grid, block;
  size_t dynamic_shared = 0;  // bytes
};

// Device pointers: the op's inputs in order, then its output.
using Buffers = std::span<void* const>;

struct Kernel {
  std::string op;          // an Op's name
  int version = 0;         // teaching order: kernels/<op>/<version>_<name>.cu
  std::string name;        // "smem_tiled"
  std::string precision;   // "fp32"
  std::string shape_text;  // the launch shape in words, for listings
  Launch (*shape)(const Sizes&);
  double (*flops)(const Sizes&);
  // Global-memory bytes the kernel's instructions ask for (loads + stores),
  // before any cache: what the tracer counts, and what tiling reduces.
  double (*bytes)(const Sizes&);
  bool emulator = true;  // false for kernels only a GPU runs (wgmma, TMA)
  // Launches the kernel with `launch` on `buffers`; errors are left for
  // cudaGetLastError(), as after <<<>>>.
  void (*launch)(const Sizes&, const Launch&, Buffers);
  bool traced = false;  // compiled with the tracer's instrumentation (a second copy)
  // The narrower format the kernel converts its fp32 inputs to (fp16 for the
  // tensor-core versions), or none. Checks round the inputs to it first, so
  // the reference sees the values the kernel multiplies.
  const simt::Minifloat* input_format = nullptr;

  std::string id() const;  // "matmul/02_smem_tiled", the kernel's file name
};

// Registers at static-initialization time: `const Registration r{kernel};`.
struct Registration {
  explicit Registration(Kernel kernel);
  explicit Registration(Op op);
};

// Every registered kernel of one build (plain or traced copy), by op then version.
std::vector<const Kernel*> kernels(bool traced = false);
const Op& op(const std::string& name);
// By id ("matmul/02_smem_tiled"), by "op/version" ("matmul/2") or by unique name ("smem_tiled").
const Kernel& find_kernel(const std::string& key, bool traced = false);

// "M=127 N=129 K=65".
std::string describe_sizes(const Op& op, const Sizes& sizes);

}  // namespace warpnet::device

// Set to 1 by CMake for the traced copy of the kernel registrations.
#ifndef WARPNET_TRACED_COPY
#define WARPNET_TRACED_COPY 0
#endif
