#include "device/run.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "kernels/common/cuda_compat.hpp"

namespace warpnet::device {

std::vector<Tensor> make_inputs(const Kernel& kernel, const Sizes& sizes, Rng& rng) {
  std::vector<Tensor> inputs = op(kernel.op).make_inputs(sizes, rng);
  if (!kernel.input_format) return inputs;
  const simt::Minifloat format = *kernel.input_format;
  for (Tensor& t : inputs) {
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = simt::decode(format, simt::encode(format, p[i], false));
  }
  return inputs;
}
std::vector<uint8_t> device_bytes(const Kernel& kernel, const Tensor& input) {
  const Tensor t = input.contiguous();
  WN_CHECK(t.dtype() == DType::f32, kernel.id(), ": inputs are fp32 on the host, got ", t.describe());
  const float* p = t.data<float>();
  if (!kernel.input_format) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(p);
    return {bytes, bytes + t.nbytes()};
  }
  const simt::Minifloat format = *kernel.input_format;
  const int width = (1 + format.exponent + format.mantissa) / 8;  // bytes per element
  std::vector<uint8_t> out(size_t(t.numel()) * width);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint32_t bits = simt::encode(format, p[i], false);
    for (int b = 0; b < width; ++b) out[size_t(i) * width + b] = uint8_t(bits >> (8 * b));  // little-endian
  }
  return out;
}

namespace {

// One cudaMalloc'ed buffer, freed on every path.
class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes) {
    WN_CHECK(cudaMalloc(&data_, bytes) == cudaSuccess, "emulator: cudaMalloc of ", bytes, " bytes failed");
  }
  ~DeviceMemory() { cudaFree(data_); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

}  // namespace

void launch(const Kernel& kernel, const Sizes& sizes, Buffers buffers) {
  try {
    kernel.launch(sizes, kernel.shape(sizes), buffers);
  } catch (const Error& e) {
    fail(kernel.id(), " at ", describe_sizes(op(kernel.op), sizes), ": ", e.what());
  }
}

Tensor run_emulated(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs) {
  const Op& the_op = op(kernel.op);
  std::vector<std::unique_ptr<DeviceMemory>> memory;
  std::vector<void*> buffers;
  for (const Tensor& input : inputs) {
    const std::vector<uint8_t> bytes = device_bytes(kernel, input);
    memory.push_back(std::make_unique<DeviceMemory>(bytes.size()));
    cudaMemcpy(memory.back()->get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
    buffers.push_back(memory.back()->get());
  }
  Tensor out = Tensor::full(the_op.output_shape(sizes), std::numeric_limits<double>::quiet_NaN(), inputs.at(0).dtype());
  memory.push_back(std::make_unique<DeviceMemory>(size_t(out.nbytes())));
  cudaMemcpy(memory.back()->get(), out.raw(), size_t(out.nbytes()), cudaMemcpyHostToDevice);
  buffers.push_back(memory.back()->get());

  cudaGetLastError();  // a stale error from earlier host code is not this kernel's
  launch(kernel, sizes, buffers);
  cudaMemcpy(out.raw(), buffers.back(), size_t(out.nbytes()), cudaMemcpyDeviceToHost);
  return out;
}

Comparison compare(const Op& op, const Sizes& sizes, const std::vector<Tensor>& inputs, const Tensor& got) {
  const Tensor want = op.reference(sizes, inputs), bound = op.tolerance(sizes, inputs);
  WN_CHECK(got.shape() == want.shape(), op.name, ": output is ", got.describe(), ", the reference ", want.describe());
  Comparison c;
  c.checked = want.numel();
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double error = std::abs(got.item(i) - want.item(i)), tolerance = bound.item(i);
    c.worst_ratio = std::max(c.worst_ratio, tolerance > 0 ? error / tolerance : error);
    if (error <= tolerance) continue;  // NaN fails here too
    if (++c.mismatches <= 5)
      c.first += cat("  [", i, "] got ", got.item(i), ", want ", want.item(i), " (tolerance ", tolerance, ")\n");
  }
  return c;
}

}  // namespace warpnet::device
