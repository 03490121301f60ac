#include "device/run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "core/memory.hpp"
#include "kernels/common/cuda_compat.hpp"
#include "simt/grid_shadow.hpp"
#include "simt/launch.hpp"

namespace warpnet::device {

std::vector<Tensor> make_inputs(const Kernel& kernel, const Sizes& sizes, Rng& rng) {
  std::vector<Tensor> inputs = op(kernel.op).make_inputs(sizes, rng);
  if (!kernel.input_format) return inputs;
  const simt::Minifloat format = *kernel.input_format;
  for (Tensor& t : inputs) {
    if (t.dtype() != DType::f32) continue;  // indices keep their values
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = simt::decode(format, simt::encode(format, p[i], false));
  }
  return inputs;
}
std::vector<uint8_t> device_bytes(const Kernel& kernel, const Tensor& input) {
  const Tensor t = input.contiguous();
  WN_CHECK(t.dtype() == DType::f32 || t.dtype() == DType::i32, kernel.id(),
           ": inputs are fp32 or i32 on the host, got ", t.describe());
  if (!kernel.input_format || t.dtype() == DType::i32) {
    const auto* bytes = static_cast<const uint8_t*>(t.raw());
    return {bytes, bytes + t.nbytes()};
  }
  const float* p = t.data<float>();
  const simt::Minifloat format = *kernel.input_format;
  const int width = (1 + format.exponent + format.mantissa) / 8;  // bytes per element
  std::vector<uint8_t> out(size_t(t.numel()) * width);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint32_t bits = simt::encode(format, p[i], false);
    for (int b = 0; b < width; ++b) out[size_t(i) * width + b] = uint8_t(bits >> (8 * b));  // little-endian
  }
  return out;
}

size_t output_element_bytes(const Kernel& kernel) {
  if (!kernel.output_format) return sizeof(float);
  return size_t(1 + kernel.output_format->exponent + kernel.output_format->mantissa) / 8;
}

Tensor decode_output(const Kernel& kernel, const Shape& shape, const void* bytes) {
  Tensor out = Tensor::empty(shape);
  if (!kernel.output_format) {
    std::memcpy(out.raw(), bytes, size_t(out.nbytes()));
    return out;
  }
  const size_t width = output_element_bytes(kernel);
  const auto* in = static_cast<const uint8_t*>(bytes);
  float* p = out.data<float>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    uint32_t code = 0;
    for (size_t b = 0; b < width; ++b) code |= uint32_t(in[size_t(i) * width + b]) << (8 * b);  // little-endian
    p[i] = simt::decode(*kernel.output_format, code);
  }
  return out;
}

namespace {

// One cudaMalloc'ed buffer, freed on every path.
class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes) {
    WN_CHECK(cudaMalloc(&data_, bytes) == cudaSuccess, "emulator: cudaMalloc of ", bytes, " bytes failed: ",
             simt::last_error_message());
  }
  ~DeviceMemory() { cudaFree(data_); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

// The terms each output element sums (Op::reduction_length), 1 where the op names none.
double reduction_length(const Op& op, const Sizes& sizes) {
  return op.reduction_length ? double(op.reduction_length(sizes)) : 1.0;
}

// "[3,17]": element `flat` of a row-major tensor of `shape`, an index per axis
// (a wrong result at the last row or column of a tile says more than [3105]).
std::string element_index(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(size_t(shape.rank()));
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    index[size_t(axis)] = flat % shape[axis];
    flat /= shape[axis];
  }
  std::string text = "[";
  for (size_t a = 0; a < index.size(); ++a) text += cat(a ? "," : "", index[a]);
  return text + "]";
}

}  // namespace

// Every output element is an fp32 sum of R products. The inputs are rounded
// to the kernel's format before the reference sees them, so the products are
// exact and only the summation errs. Its classic worst case per element is
// R·2^-24·Σ|a·b|; rounding errors of random sign grow like sqrt(R) instead,
// about 2^-24·sqrt(R) of the norm (4e-6 at R=4096), and tensor cores that
// truncate while accumulating stay within R·2^-24. We allow R·2^-23: twice
// the worst-case coefficient, taken on the norm. A real bug costs far more:
// one product left out of each sum is already 1/sqrt(R) (0.016 at R=4096),
// thirty times this bound. (A kernel whose sums keep fewer bits than fp32,
// cuBLASLt's fp8 on Hopper, gets it widened: relative_bound_of.)
double relative_bound(const Op& op, const Sizes& sizes) {
  return std::max(reduction_length(op, sizes), 4.0) * std::ldexp(1.0, -23);
}

// The op's fp32 bound, widened for sums that keep fewer bits, plus the
// rounding of an output stored in a narrow format (relative to the result's
// norm, at most 1 + the first part times the reference's).
//
// Widened, the worst case says nothing at a bench size: fp8's 14-bit sums
// over R = 4096 terms give R·2^-13 = 0.5, which an all-zero result (relative
// error 1 against a reference with the same bound) meets. Such sums get the
// random-sign growth instead, four times over: 4·sqrt(R)·2^-bits (0.016 at
// R = 4096, 14 bits). It describes the bench's inputs — independent and
// zero-mean (Op::make_inputs), so partial sums grow like sqrt(k) — and an
// accumulator that rounds to nearest. The H200 records of 2026-12-04 show
// 1.2e-3 at R = 4096 and 1.9e-3 at 8192 (v15 and v18 against cuBLASLt): what
// 14-bit sums rounded to nearest give (tests/simt/test_registry.cpp
// simulates them: 1.1e-3 and 1.8e-3), a thirteenth of the bound. Sums that
// truncated would be off by 0.09 and 0.18 and fail it, as they should: that
// would be another accumulator than the one the bound describes. An
// all-zero result (relative error 1) fails by far.
double relative_bound_of(const Kernel& kernel, const Sizes& sizes) {
  const Op& the_op = op(kernel.op);
  double sums = relative_bound(the_op, sizes) * kernel.accumulation_widening();
  if (kernel.accumulation_widening() > 1)
    sums = std::min(sums, 4 * std::sqrt(reduction_length(the_op, sizes)) * std::ldexp(1.0, -kernel.accumulator_bits));
  return sums + kernel.output_rounding() * (1 + sums);
}

int64_t total_elements(const std::vector<Shape>& shapes) {
  int64_t n = 0;
  for (const Shape& s : shapes) n += s.numel();
  return n;
}

void launch(const Kernel& kernel, const Sizes& sizes, Buffers buffers, const std::optional<Launch>& shape) {
  require_launchable(op(kernel.op), sizes);
  try {
    kernel.launch(sizes, shape ? *shape : kernel.shape(sizes), buffers);
  } catch (const Error& e) {
    fail(kernel.id(), " at ", describe_sizes(op(kernel.op), sizes), ": ", e.what());
  }
}

std::vector<Tensor> run_emulated(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs,
                                 const std::optional<Launch>& shape) {
  const Op& the_op = op(kernel.op);
  std::vector<std::unique_ptr<DeviceMemory>> memory;
  std::vector<void*> buffers;
  auto upload = [&](const void* data, size_t bytes) {
    memory.push_back(std::make_unique<DeviceMemory>(bytes));
    cudaMemcpy(memory.back()->get(), data, bytes, cudaMemcpyHostToDevice);
    buffers.push_back(memory.back()->get());
  };
  for (const Tensor& input : inputs) {
    const std::vector<uint8_t> bytes = device_bytes(kernel, input);
    upload(bytes.data(), bytes.size());
  }
  // 0xFF bytes are a NaN in fp32, bf16, fp16 and fp8 alike: an element the
  // kernel never writes fails every check.
  const std::vector<Shape> shapes = the_op.output_shapes(sizes);
  for (const Shape& shape : shapes) {
    const std::vector<uint8_t> poison(size_t(shape.numel()) * output_element_bytes(kernel), 0xFF);
    upload(poison.data(), poison.size());
  }

  cudaGetLastError();  // a stale error from earlier host code is not this kernel's
  launch(kernel, sizes, buffers, shape);
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<uint8_t> bytes(size_t(shapes[i].numel()) * output_element_bytes(kernel));
    cudaMemcpy(bytes.data(), buffers[inputs.size() + i], bytes.size(), cudaMemcpyDeviceToHost);
    outputs.push_back(decode_output(kernel, shapes[i], bytes.data()));
  }
  return outputs;
}

std::vector<Tensor> tolerance_of(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs) {
  return kernel.tolerance ? kernel.tolerance(sizes, inputs) : op(kernel.op).tolerance(sizes, inputs);
}

Comparison compare(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& got) {
  const Op& op = device::op(kernel.op);
  const std::vector<Tensor> want = op.reference(sizes, inputs), bound = tolerance_of(kernel, sizes, inputs);
  const double widening = kernel.accumulation_widening(), rounding = kernel.output_rounding();
  WN_CHECK(got.size() == want.size() && bound.size() == want.size(), op.name, ": ", got.size(), " outputs, the reference has ",
           want.size(), " and the tolerance ", bound.size());
  Comparison c;
  for (size_t o = 0; o < want.size(); ++o) {
    WN_CHECK(got[o].shape() == want[o].shape(), op.name, ": output ", o, " is ", got[o].describe(), ", the reference ",
             want[o].describe());
    // Name the output only when there are several.
    const std::string which = want.size() > 1 ? cat("output ", o, " ") : "";
    c.checked += want[o].numel();
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const double sums = widening * bound[o].item(i);
      const double error = std::abs(got[o].item(i) - want[o].item(i)),
                   tolerance = sums + rounding * (std::abs(want[o].item(i)) + sums);
      c.worst_ratio = std::max(c.worst_ratio, tolerance > 0 ? error / tolerance : error);
      if (error <= tolerance) continue;  // NaN fails here too
      if (++c.mismatches <= 5)
        c.first += cat("  ", which, element_index(want[o].shape(), i), " got ", got[o].item(i), ", want ", want[o].item(i), " (tolerance ",
                       tolerance, ")\n");
    }
  }
  return c;
}

namespace {

// Bytes of the outputs: fp32, or 4-byte indices.
int64_t output_bytes(const Op& o, const Sizes& sizes) {
  int64_t bytes = 0;
  for (const Shape& s : o.output_shapes(sizes)) bytes += s.numel() * 4;
  return bytes;
}

// The race check between blocks keeps a shadow of every byte a launch
// touches, 12 times its bytes: an elementwise op within the work limit
// could still ask for more memory than the machine has. Besides the
// shadow: the outputs and the CPU reference's. `buffers`: the bytes of the
// inputs and outputs, or, not `with_inputs`, of the outputs alone, before
// the inputs are made (a lower bound: a refusal then is certain).
void check_shadow_fits(const Kernel& kernel, const Sizes& sizes, int64_t buffers, bool with_inputs,
                       std::string_view who) {
  const Op& o = op(kernel.op);
  const double needed =
      double(buffers) * double(simt::GridShadow::kBytesPerByte) + 2.0 * double(output_bytes(o, sizes));
  const int64_t available = available_memory_bytes();
  WN_CHECK(available < 0 || needed <= double(available), who, ": ", kernel.id(), " at ", describe_sizes(o, sizes),
           " needs ", with_inputs ? "about " : "at least ",
           format_bytes(int64_t(std::min(needed, 9e18))), " for the emulator's race check (",
           simt::GridShadow::kBytesPerByte, " bytes for each byte of its ", format_bytes(buffers),
           with_inputs ? " of buffers" : " of outputs, its inputs besides", "); this machine has ", format_bytes(available),
           " available; the per-warp figures are the same at smaller sizes");
}

}  // namespace

void check_traced_work(const Kernel& kernel, const Sizes& sizes, std::string_view who) {
  // Traced on one worker, the emulator does about 10 to 50 million
  // multiply-adds a second (matmul/01 and /09 at 256^3 on the 2-core VM):
  // 4096^3 would run for hours, its bar the only sign of life. The work: the
  // kernel's floating-point operations, or its 4-byte accesses for an op
  // that does few (relu). A trace's per-warp figures are the same at a small size.
  const double flops = kernel.flops ? kernel.flops(sizes) : 0.0, accesses = kernel.bytes ? kernel.bytes(sizes) / 4 : 0.0;
  WN_CHECK(std::max(flops, accesses) <= kMostTracedWork, who, ": ", kernel.id(), " at ",
           describe_sizes(op(kernel.op), sizes), " is ",
           flops >= accesses ? cat(flops, " floating-point operations") : cat(accesses, " 4-byte accesses"),
           ", past the ", kMostTracedWork, " (a 1024^3 matmul's operations) a traced run takes: it would run for "
           "hours on the emulator; the per-warp figures are the same at smaller sizes");
  // Making the inputs of a problem this big takes seconds and gigabytes:
  // where the outputs' shadow alone is too big, say so first.
  check_shadow_fits(kernel, sizes, output_bytes(op(kernel.op), sizes), false, who);
}

void check_traced_memory(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs,
                         std::string_view who) {
  int64_t buffers = output_bytes(op(kernel.op), sizes);
  for (const Tensor& t : inputs) buffers += t.nbytes();
  check_shadow_fits(kernel, sizes, buffers, true, who);
}

}  // namespace warpnet::device
