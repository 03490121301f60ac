// Running a registered kernel on the emulator and checking it against its op's
// CPU reference: what the registry test and `warpnet trace` do with each kernel.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/registry.hpp"

namespace warpnet::device {

// The op's inputs for `sizes`, the f32 ones rounded to the kernel's input
// format if it has one.
std::vector<Tensor> make_inputs(const Kernel& kernel, const Sizes& sizes, Rng& rng);

// An input as the kernel reads it from device memory: the fp32 (or i32)
// bytes, or each fp32 element encoded in the kernel's input format (2 bytes
// for fp16/bf16, 1 for fp8).
std::vector<uint8_t> device_bytes(const Kernel& kernel, const Tensor& input);

// Bytes per output element on the device: 4 (fp32), or the width of the
// kernel's Kernel::output_format.
size_t output_element_bytes(const Kernel& kernel);
// An output of `shape` as the kernel left it in device memory (`bytes`, in
// its output format), decoded to fp32.
Tensor decode_output(const Kernel& kernel, const Shape& shape, const void* bytes);

// The elements of several outputs together: what compare() checks.
int64_t total_elements(const std::vector<Shape>& shapes);

// kernel.launch with its registered shape, or with `shape` where one is
// given; a failure is rethrown as
// "matmul/03_smem_tiled at M=.. N=..: cudaErrorInvalidConfiguration: ...".
void launch(const Kernel& kernel, const Sizes& sizes, Buffers buffers, const std::optional<Launch>& shape = {});

// Uploads `inputs` to emulated device memory, poisons the outputs with NaN
// (so an element the kernel never writes cannot pass), launches the kernel
// with its registered shape and returns the outputs. Throws Error naming the
// kernel with the emulator's message when the launch fails. `shape`, where
// given, is launched instead: a persistent version handed fewer blocks than
// it has tiles, so that each block walks several (the tests).
std::vector<Tensor> run_emulated(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs,
                                 const std::optional<Launch>& shape = {});

// What a traced run (the checker and the tracer on every access, the blocks
// one after another) takes at most, checked before it starts by `warpnet
// trace` and the visualizer's stepper: past it, a run would take hours, or
// its race check would outgrow the machine's memory and the process die.
// The work: a 1024^3 matmul's 2^31 floating-point operations, minutes.
inline constexpr double kMostTracedWork = 2.0 * 1024 * 1024 * 1024;
// Throws, naming `who` ("trace"), the kernel, its sizes and the limit, when
// the kernel's operations (or 4-byte accesses, for an op with few) are past
// kMostTracedWork, or when the race check's shadow of the outputs alone
// would not fit in memory (check_traced_memory's, less the inputs). Before
// the inputs are made: at a size that big, making them takes seconds.
void check_traced_work(const Kernel& kernel, const Sizes& sizes, std::string_view who);
// Throws the same way when the race check's shadow of the buffers (12 bytes
// a byte, simt/grid_shadow.hpp) and the outputs, with their CPU reference's,
// would not fit in the memory available. With the inputs made.
void check_traced_memory(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs,
                         std::string_view who);

struct Comparison {
  int64_t checked = 0, mismatches = 0;
  double worst_ratio = 0;  // max |got - want| / tolerance
  std::string first;       // the first few mismatches, one per line
};

// Bounds on ‖out − ref‖_F / ‖ref‖_F, what `warpnet bench` checks at sizes
// where no element-wise check runs. relative_bound: an output whose elements
// are fp32 sums of op.reduction_length(sizes) products. relative_bound_of:
// `kernel`'s output, its sums perhaps keeping fewer bits and its output
// perhaps stored in a narrow format (run.cpp says how each is derived).
double relative_bound(const Op& op, const Sizes& sizes);
double relative_bound_of(const Kernel& kernel, const Sizes& sizes);

// The bound every check of `kernel` allows each output element: its own
// Kernel::tolerance where it has one (Winograd's), else its op's.
std::vector<Tensor> tolerance_of(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs);

// Element-wise |got - reference| <= tolerance_of(kernel, sizes, inputs), times
// kernel.accumulation_widening(), over every output of the kernel's op, plus
// the rounding of a result stored in the kernel's output format
// (output_rounding x (|reference| + that bound)); `checked` counts the
// elements of all outputs together.
Comparison compare(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& got);

}  // namespace warpnet::device
