// The kernel registry: every kernel version registers itself once (op,
// version, name, precision, launch shape, FLOP and byte formulas, how to
// launch it), and every op its inputs, CPU reference and error bound. Tests,
// `warpnet trace`, benchmarks and lessons enumerate it, so a new kernel is
// tested and traced without touching a switch anywhere (see docs: DESIGN,
// "Kernels"); only the generated tables of lessons 04 and 05, which list
// every matmul and conv version, are regenerated (src/device/README.md).
#pragma once
#include <span>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "simt/minifloat.hpp"
#if defined(__CUDACC__)
#include <vector_types.h>  // dim3; the registration files of the GPU copy are compiled by nvcc
#else
#include "simt/cuda_types.hpp"
#endif

namespace warpnet::device {

// An op's problem sizes, in the order Op::size_names gives ({M, N, K, trans_a,
// trans_b} for matmul: the layout is part of the problem).
using Sizes = std::vector<int64_t>;

// Which compilation of the kernel sources a registration launches. Each
// registration file is compiled three times: for the emulator, for the
// emulator with the tracer's instrumentation, and by nvcc for a real GPU.
enum class Copy { emulator, traced, cuda };
const char* to_string(Copy copy);

// What a kernel computes, independent of how: the CPU side of every check.
struct Op {
  std::string name;                     // "matmul"
  std::vector<std::string> size_names;  // {"M", "N", "K"}
  std::vector<Sizes> test_sizes;        // every kernel of the op is checked at each
  Sizes defaults;                       // fills sizes a user leaves out (complete_sizes)
  // The inputs for `sizes`, in the order the kernels take them: f32 tensors,
  // or i32 ones for indices (class labels), which are uploaded as they are.
  std::vector<Tensor> (*make_inputs)(const Sizes&, Rng&);
  // The shape of each output, in order; every output is fp32. Most ops have
  // one; the fused ones more (softmax + cross-entropy: the loss and the
  // probabilities; an optimizer: every tensor it updates).
  std::vector<Shape> (*output_shapes)(const Sizes&);
  // One tensor per output: the expected values (in double) and
  std::vector<Tensor> (*reference)(const Sizes&, const std::vector<Tensor>& inputs);
  // the largest error allowed for each element, from the precision and the
  // reduction length (the reasoning sits beside each op's definition).
  std::vector<Tensor> (*tolerance)(const Sizes&, const std::vector<Tensor>& inputs);
  // For `warpnet bench`: the sizes it times when given none, and the length
  // of the sums behind each output element (K for matmul), from which it
  // derives the bound on the relative error of a whole output (bench.hpp).
  std::vector<Sizes> bench_sizes = {};
  int64_t (*reduction_length)(const Sizes&) = nullptr;
  // warpnet's own CPU path in fp32 (the op's CPU version 0, Eigen for
  // matmul): what the bench times on the CPU and sets the GPU against.
  std::vector<Tensor> (*cpu_fp32)(const Sizes&, const std::vector<Tensor>& inputs) = nullptr;
  // Throws, naming the size, where the op's kernels cannot take `sizes` (a
  // zero extent, an empty output, a flag out of range); null where every
  // size is fine. complete_sizes calls it, so sizes a user types (trace,
  // bench, the visualizer) get that error before anything launches.
  void (*check_sizes)(const Op&, const Sizes&) = nullptr;
};

// For check_sizes: throws naming the first size below its minimum
// ("conv2d: stride = 0 at N=1 ...: it must be at least 1").
void require_at_least(const Op& op, const Sizes& sizes, const Sizes& minimum);
// Kernels index in int, and a last block's threads form indices up to a
// block (at most 1024 threads) past the end before they test them: every
// array a kernel indexes stays that far under 2^31 elements.
inline constexpr int64_t kMaxIndexedElements = (int64_t(1) << 31) - 1024;
// For check_sizes: throws naming the array (`what`, of `shape`) when it has
// more than kMaxIndexedElements elements.
void require_indexable(const Op& op, const Sizes& sizes, const Shape& shape, const char* what);
// The check_sizes of ops whose every size is an extent (rows, classes,
// channels): none may be 0 (an empty row has no maximum, no softmax), and
// their product, the op's tensor, stays within the kernels' int indices
// (a softmax's row index blockIdx.x·BLOCK + threadIdx.x, say).
void every_size_at_least_1(const Op& op, const Sizes& sizes);

struct Launch {
  dim3 grid, block;
  size_t dynamic_shared = 0;  // bytes
};

// Device pointers: the op's inputs in order, then its outputs in order.
using Buffers = std::span<void* const>;

struct Kernel {
  std::string op;          // an Op's name
  int version = 0;         // teaching order: the number in its file's name (see id())
  std::string name;        // "smem_tiled"
  std::string precision;   // "fp32"
  std::string shape_text;  // the launch shape in words, for listings
  Launch (*shape)(const Sizes&);
  double (*flops)(const Sizes&);
  // Global-memory bytes the kernel's instructions ask for (loads + stores),
  // before any cache: what the tracer counts, and what tiling reduces.
  double (*bytes)(const Sizes&);
  bool emulator = true;  // false for kernels only a GPU runs (wgmma, TMA)
  // The oldest GPU the kernel runs on, as 10·major + minor: 89 for fp8
  // mma.sync (Ada), 90 for wgmma and TMA (Hopper); 0 for any the build
  // targets. `arch_specific`: built for sm_90a, whose code runs on that
  // architecture alone, not on a newer one. On another GPU it would trap or
  // find no code: the GPU runners refuse it first (cannot_run_on).
  int min_sm = 0;
  bool arch_specific = false;
  // Launches the kernel with `launch` on `buffers`; throws Error with the
  // CUDA error's name and detail when the launch fails (check_launch in
  // device/kernels/copy.hpp). On a GPU the launch is asynchronous: a fault
  // during execution surfaces at the next synchronizing call.
  void (*launch)(const Sizes&, const Launch&, Buffers);
  Copy copy = Copy::emulator;  // set from WARPNET_KERNEL_COPY (device/kernels/copy.hpp)
  // The format the kernel's inputs are stored in on the device (fp16 or bf16
  // for the tensor-core versions), or fp32 when null. Checks round the op's
  // fp32 inputs to it, so the reference sees the values the kernel
  // multiplies, and the runners upload them encoded (device_bytes, run.hpp).
  const simt::Minifloat* input_format = nullptr;
  // The tensor-core instruction the kernel multiplies with, none for the
  // others (and for the vendors' libraries, whose instructions we do not
  // see). wmma and mma.sync hold A, B and C in the lanes' registers, in the
  // layouts of simt/tensor_cores.hpp, which the visualizer draws; wgmma reads
  // A and B from shared memory through descriptors, so no lane holds them.
  enum class TensorOp { none, wmma, mma_sync, wgmma };
  TensorOp tensor_op = TensorOp::none;
  // The format the kernel stores its outputs in on the device, or fp32 when
  // null: bf16 for the bf16 convolutions (conv2d_nhwc v13 and cuDNN's bf16
  // version 0, whose configuration writes y in bf16, as a bf16 network
  // keeps its activations). The runners decode them to fp32 (run.hpp), and
  // every check widens its bound by the rounding (output_rounding).
  const simt::Minifloat* output_format = nullptr;
  // Significand bits the kernel's sums keep on a GPU, fp32's 24 unless the
  // hardware keeps fewer. The op's tolerances assume fp32 sums; checks of
  // the CUDA copy of a kernel with fewer bits widen them by
  // 2^(24 - accumulator_bits) (accumulation_widening); the emulator's copies
  // add in fp32 and keep the fp32 bound. Set by the fp8 wgmma kernels
  // (cuBLASLt's fp8 on Hopper, matmul v15 and v18; src/device/cuda/
  // matmul_cublas.cu says why).
  int accumulator_bits = 24;
  // On a GPU, before a harness checks and times the kernel at `sizes`:
  // chooses what its launch runs for those sizes (matmul/10 times its tile
  // shapes; cuDNN's version 0 runs cudnnFind) and says what it chose, for
  // the record. Null for most kernels, and in the emulator's copies.
  std::string (*tune)(const Sizes&) = nullptr;
  // Multi-tensor optimizer updates only (sgd_momentum/03, adam/03): one
  // update of many tensors in as few launches as the version allows.
  // `buffers` holds each tensor's buffers in the op's order ({w, v, g,
  // hyper, w', v'} for sgd_momentum), one tensor after another, the same
  // hyper for all; counts[i] is tensor i's element count.
  void (*launch_many)(std::span<const int64_t> counts, Buffers buffers) = nullptr;
  // A version that picks one of its candidates per size (matmul/10, the
  // autotuned conv versions): the one it runs at `sizes`, by name ("128x64",
  // "few_channels ..."), for the list of kernels a run launched. Null for
  // the versions that are one kernel.
  const char* (*candidate)(const Sizes&) = nullptr;
  // The largest error allowed for each element of each output, as
  // Op::tolerance, where this kernel's arithmetic is not the sums the op's
  // bound assumes: the Winograd candidates of conv2d v10-11 and
  // conv2d_dgrad v6-7 round in their transforms too (kernels/conv/
  // winograd_bound.hpp). Null: the op's. Every check takes it through
  // tolerance_of (run.hpp).
  std::vector<Tensor> (*tolerance)(const Sizes&, const std::vector<Tensor>& inputs) = nullptr;

  // "op/NN_name": "matmul/03_smem_tiled", kernels/matmul/03_smem_tiled.cu; the
  // backward convolutions' files carry the pass first (conv2d_dgrad/01_dgrad_direct
  // is kernels/conv/dgrad_01_direct.cu).
  std::string id() const;
  double accumulation_widening() const;  // 2^(24 - accumulator_bits) for the CUDA copy, else 1
  // The relative error of storing an output in output_format: half its unit
  // in the last place, 2^-(mantissa + 1) (2^-8 for bf16); 0 for fp32 outputs.
  double output_rounding() const;
};

// The file a Registration is written in, for the errors that name it: the
// compiler's __builtin_FILE() at the call site where it has one (g++, clang;
// nvcc's front end may not), else null ("a file not known").
#if defined(__has_builtin)
#if __has_builtin(__builtin_FILE)
#define WARPNET_REGISTERING_FILE __builtin_FILE()
#endif
#endif
#ifndef WARPNET_REGISTERING_FILE
#define WARPNET_REGISTERING_FILE nullptr
#endif

// Registers at static-initialization time: `const Registration r{kernel};`.
// A kernel whose id, or whose op and version (but version 0, the vendor
// library, which has one per precision), is already registered in its copy,
// or an op registered twice, is not: the registry records the clash, naming
// both files, and every lookup below (kernels, op, find_kernel) then throws
// it, so a copied registration whose number was not changed stops the first
// test or command that uses the registry instead of making lookups ambiguous.
struct Registration {
  explicit Registration(Kernel kernel, const char* file = WARPNET_REGISTERING_FILE);
  explicit Registration(Op op, const char* file = WARPNET_REGISTERING_FILE);
};

// Why `b`, registered in `b_file`, cannot join a registry holding `a`
// (registered in `a_file`), or "" when they can: the check Registration
// makes against every kernel of its copy, here for the tests.
std::string registration_clash(const Kernel& a, const std::string& a_file, const Kernel& b,
                               const std::string& b_file);

// Every registered kernel of one copy, by op then version.
std::vector<const Kernel*> kernels(Copy copy = Copy::emulator);
const Op& op(const std::string& name);
// By id ("matmul/03_smem_tiled"), by "op/version" ("matmul/03" or "matmul/3") or by unique name ("smem_tiled").
const Kernel& find_kernel(const std::string& key, Copy copy = Copy::emulator);

// `given` followed by the op's defaults for the sizes it leaves out
// ({256, 256, 256} -> {256, 256, 256, 0, 0} for matmul). Throws naming the op's
// sizes when there are too many or too few, or when the op cannot take them
// (require_launchable).
Sizes complete_sizes(const Op& op, const Sizes& given);
// Throws naming the size when the op's kernels cannot take `sizes`: one past
// int, or one Op::check_sizes refuses. Every launch (run.hpp) calls it, so
// the layers' ops meet the limits that sizes a user types meet.
void require_launchable(const Op& op, const Sizes& sizes);

// Why `kernel` cannot run on a GPU of compute capability major.minor ("needs
// sm_89 or newer ...", "runs on sm_90 only ..."), or "" when it can.
std::string cannot_run_on(const Kernel& kernel, int major, int minor);

// "M=127 N=129 K=65 trans_a=0 trans_b=1".
std::string describe_sizes(const Op& op, const Sizes& sizes);

}  // namespace warpnet::device

// Set to 1 by CMake for the traced copy of the kernel registrations.
#ifndef WARPNET_TRACED_COPY
#define WARPNET_TRACED_COPY 0
#endif
