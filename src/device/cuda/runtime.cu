// The GPU runtime behind gpu.hpp: device properties, device buffers, one
// checked run of a registered kernel, and event timing with an L2 flush.
// Compiled by nvcc (it calls the real CUDA runtime, whose API is extern "C";
// the emulator's same-named C++ functions live in g++ code elsewhere).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>

#include "device/cuda/check.cuh"
#include "device/cuda/profiler_pauses.cuh"
#include "device/run.hpp"
#include "kernels/common/cuda_compat.hpp"

namespace warpnet::device::gpu {

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED (no usable GPU or driver?)";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE (a size or leading dimension)";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH (not on this GPU)";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED (this type or layout)";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "an unknown cuBLAS status";
}

cublasHandle_t cublas_handle() {
  // Never destroyed: at exit the driver may already be gone (or the context
  // lost after a faulty kernel), and cublasDestroy would then fail or wait.
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    WN_CUBLAS(cublasCreate(&h), "creating the cuBLAS handle");
    WN_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cuBLAS math mode");
    return h;
  }();
  // On the calling thread's launch stream, as every warpnet kernel: while a
  // training step is captured, the capture's stream (work on the legacy
  // stream would end the capture with cudaErrorStreamCaptureImplicit).
  WN_CUBLAS(cublasSetStream(handle, launch_stream()), "binding the cuBLAS handle to the launch stream");
  return handle;
}

namespace {

std::string version_text(int v) { return cat(v / 1000, ".", (v % 1000) / 10); }

struct DeviceBuffer {
  void* data = nullptr;
  size_t bytes = 0;
  DeviceBuffer(size_t n, const std::string& where) : bytes(n) {
    WN_CUDA(cudaMalloc(&data, std::max<size_t>(n, 1)), cat(where, " (", n, " bytes)"));
  }
  ~DeviceBuffer() {
    if (data) cudaFree(data);  // after a sticky error this fails too; nothing more to do then
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Event {
  cudaEvent_t e = nullptr;
  explicit Event(const std::string& where) { WN_CUDA(cudaEventCreate(&e), where); }
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// A buffer twice the L2 (at least 64 MiB): writing it before a timed run
// evicts the previous run's A, B and C, so each run reads them from DRAM.
DeviceBuffer& l2_flush_buffer() {
  static DeviceBuffer buffer = [] {
    int device = 0, l2 = 0;
    WN_CUDA(cudaGetDevice(&device), "L2 flush buffer");
    WN_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 flush buffer");
    return DeviceBuffer(std::max<size_t>(size_t(2) * size_t(l2), size_t(64) << 20), "L2 flush buffer");
  }();
  return buffer;
}

}  // namespace

Info probe() {
  Info info;
  try {
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
      // cudaErrorInsufficientDriver (CI: toolkit, no driver), cudaErrorNoDevice.
      info.why_not = "no usable GPU: " + cuda_failure(e, "");
      return info;
    }
    if (count == 0) {
      info.why_not = "no usable GPU: the CUDA runtime reports no device";
      return info;
    }
    // The current device (0 unless a rank chose its own): setting 0 here
    // would make a context there for every rank of a data-parallel job.
    int dev = 0;
    WN_CUDA(cudaGetDevice(&dev), "the current device");
    const std::string device = cat("device ", dev);
    WN_CUDA(cudaSetDevice(dev), device);
    WN_CUDA(cudaFree(nullptr), "creating a context on " + device);  // fails now rather than mid-benchmark
    // Profiling starts at the process's first probe when a profiler waits
    // to be told (ncu --profile-from-start off, as scripts/gpu-check.sh
    // runs it), so that pauses can take the tuners' and checks' launches
    // out (profiler_pauses.cuh): with profiling on from the start, Nsight
    // Compute counted them (2026-12-04). Once: a later probe (a launch's
    // first) may come inside a pause. With no profiler this does nothing.
    static std::once_flag profiling_started;
    std::call_once(profiling_started, start_profiler);
    cudaDeviceProp p{};
    WN_CUDA(cudaGetDeviceProperties(&p, dev), device);
    int clock_khz = 0, mem_khz = 0, bus_bits = 0, driver = 0, runtime = 0;
    WN_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev), device);
    // Memory clock and bus width may be unreported (0) on some platforms; only a lead anyway.
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) mem_khz = 0;
    if (cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) bus_bits = 0;
    WN_CUDA(cudaDriverGetVersion(&driver), "driver version");
    WN_CUDA(cudaRuntimeGetVersion(&runtime), "runtime version");
    int cb_major = 0, cb_minor = 0, cb_patch = 0;
    WN_CUBLAS(cublasGetProperty(MAJOR_VERSION, &cb_major), "cuBLAS version");
    WN_CUBLAS(cublasGetProperty(MINOR_VERSION, &cb_minor), "cuBLAS version");
    WN_CUBLAS(cublasGetProperty(PATCH_LEVEL, &cb_patch), "cuBLAS version");

    info.name = p.name;
    info.cc_major = p.major;
    info.cc_minor = p.minor;
    info.multiprocessors = p.multiProcessorCount;
    info.clock_ghz = clock_khz * 1e-6;
    info.l2_bytes = p.l2CacheSize;
    info.memory_gib = double(p.totalGlobalMem) / double(1ull << 30);
    size_t free_bytes = 0, total_bytes = 0;
    WN_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes), device + " free memory");
    info.memory_free_gib = double(free_bytes) / double(1ull << 30);
    info.memory_bus_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) * 1e-9;  // double data rate
    info.driver = version_text(driver);
    info.runtime = version_text(runtime);
    info.cublas = cat(cb_major, ".", cb_minor, ".", cb_patch);
    info.usable = true;
  } catch (const std::exception& e) {
    info.usable = false;
    info.why_not = cat("no usable GPU: ", e.what());
  }
  return info;
}

Listing list() {
  Listing listing;
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    listing.why_none = "no usable GPU: " + cuda_failure(e, "");
    return listing;
  }
  for (int dev = 0; dev < count; ++dev) {
    cudaDeviceProp p{};
    if (const cudaError_t e = cudaGetDeviceProperties(&p, dev); e != cudaSuccess) {
      listing.why_none = cat("device ", dev, ": ", cuda_failure(e, ""));
      continue;
    }
    Info& info = listing.gpus.emplace_back();
    info.usable = true;
    info.name = p.name;
    info.cc_major = p.major;
    info.cc_minor = p.minor;
    info.multiprocessors = p.multiProcessorCount;
    info.l2_bytes = p.l2CacheSize;
    info.memory_gib = double(p.totalGlobalMem) / double(1ull << 30);
  }
  if (listing.gpus.empty() && listing.why_none.empty())
    listing.why_none = "no usable GPU: the CUDA runtime reports no device";
  return listing;
}

struct Problem::Impl {
  const Op* op = nullptr;
  const Kernel* owner = nullptr;  // fixes the op and input format
  Sizes sizes;
  std::vector<Shape> out_shapes;
  size_t first_output = 0;                            // index of the first output in memory
  std::vector<std::unique_ptr<DeviceBuffer>> memory;  // inputs, then the outputs
  std::vector<void*> buffers;

  std::string where(const Kernel& k) const { return cat(k.id(), " at ", describe_sizes(*op, sizes)); }

  void check_compatible(const Kernel& k) const {
    WN_CHECK(k.copy == Copy::cuda, k.id(), ": only the CUDA copy of a kernel runs on the GPU, this is the ",
             to_string(k.copy), " copy");
    WN_CHECK(k.op == owner->op && k.input_format == owner->input_format && k.output_format == owner->output_format,
             k.id(), " cannot run on a problem uploaded for ", owner->id(), " (another op, input or output format)");
  }

  // Launches once; the caller waits. A registration's launch throws Error
  // when the launch fails (check_launch, device/kernels/copy.hpp; cuBLAS
  // throws Failure): rethrown as Failure, sticky when the context is gone.
  void launch(const Kernel& k) {
    const std::string at = where(k);
    // An fp8 or wgmma kernel on an older GPU would trap (and lose the context) or find no code.
    static const Info device = probe();
    if (const std::string why = cannot_run_on(k, device.cc_major, device.cc_minor); !why.empty())
      throw Failure(cat(at, ": ", why), false);
    cudaGetLastError();  // a stale, non-sticky error is not this kernel's
    try {
      k.launch(sizes, k.shape(sizes), buffers);
    } catch (const Failure&) {
      throw;
    } catch (const std::exception& e) {
      throw Failure(cat(at, " (launch): ", e.what()), context_lost());
    }
    WN_CUDA(cudaGetLastError(), at + " (launch)");
  }
};

Problem::Problem(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs)
    : impl_(std::make_unique<Impl>()) {
  impl_->op = &op(kernel.op);
  impl_->owner = &kernel;
  impl_->sizes = sizes;
  impl_->out_shapes = impl_->op->output_shapes(sizes);
  impl_->check_compatible(kernel);
  const std::string at = impl_->where(kernel);
  for (const Tensor& input : inputs) {
    const std::vector<uint8_t> bytes = device_bytes(kernel, input);
    impl_->memory.push_back(std::make_unique<DeviceBuffer>(bytes.size(), at + ": cudaMalloc for an input"));
    WN_CUDA(cudaMemcpy(impl_->memory.back()->data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
            at + ": uploading an input");
    impl_->buffers.push_back(impl_->memory.back()->data);
  }
  impl_->first_output = impl_->memory.size();
  for (const Shape& shape : impl_->out_shapes) {
    const size_t bytes = size_t(shape.numel()) * output_element_bytes(kernel);
    impl_->memory.push_back(std::make_unique<DeviceBuffer>(bytes, at + ": cudaMalloc for an output"));
    impl_->buffers.push_back(impl_->memory.back()->data);
  }
}

Problem::~Problem() = default;

double Problem::run(const Kernel& kernel, double timeout_s) {
  impl_->check_compatible(kernel);
  const std::string at = impl_->where(kernel);
  // 0xFF bytes are a NaN in fp32, bf16, fp16 and fp8 alike: an element the kernel never writes fails every check.
  for (size_t i = impl_->first_output; i < impl_->memory.size(); ++i)
    WN_CUDA(cudaMemset(impl_->memory[i]->data, 0xFF, impl_->memory[i]->bytes), at + ": poisoning an output");
  Event done(at);
  const auto start = std::chrono::steady_clock::now();
  impl_->launch(kernel);
  WN_CUDA(cudaEventRecord(done.e), at);
  wait_for(done.e, timeout_s, at);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<Tensor> Problem::outputs() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < impl_->out_shapes.size(); ++i) {
    const DeviceBuffer& buffer = *impl_->memory[impl_->first_output + i];
    std::vector<uint8_t> bytes(buffer.bytes);
    WN_CUDA(cudaMemcpy(bytes.data(), buffer.data, buffer.bytes, cudaMemcpyDeviceToHost),
            impl_->where(*impl_->owner) + ": downloading an output");
    out.push_back(decode_output(*impl_->owner, impl_->out_shapes[i], bytes.data()));
  }
  return out;
}

std::vector<double> Problem::time(const Kernel& kernel, int warmup, int runs, int min_runs, double budget_s,
                                  double timeout_s) {
  impl_->check_compatible(kernel);
  const std::string at = impl_->where(kernel);
  Event start(at), stop(at);
  for (int i = 0; i < warmup; ++i) {
    impl_->launch(kernel);
    WN_CUDA(cudaEventRecord(stop.e), at);
    wait_for(stop.e, timeout_s, at + " (warm-up)");
  }
  DeviceBuffer& flush = l2_flush_buffer();
  std::vector<double> ms;
  double spent = 0;
  for (int i = 0; i < runs; ++i) {
    WN_CUDA(cudaMemsetAsync(flush.data, i & 0xFF, flush.bytes), at + ": flushing L2");
    WN_CUDA(cudaEventRecord(start.e), at);
    impl_->launch(kernel);
    WN_CUDA(cudaEventRecord(stop.e), at);
    wait_for(stop.e, timeout_s, at + " (timed run)");
    float t = 0;
    WN_CUDA(cudaEventElapsedTime(&t, start.e, stop.e), at);
    ms.push_back(t);
    spent += t * 1e-3;
    if (int(ms.size()) >= min_runs && spent >= budget_s) break;
  }
  return ms;
}

ProfilerPause::ProfilerPause() { pause_profiler(); }
ProfilerPause::~ProfilerPause() { resume_profiler(); }

double copy_bandwidth_gbps(size_t bytes, int runs) {
  const std::string at = cat("copy bandwidth (", bytes, " bytes)");
  DeviceBuffer from(bytes, at), to(bytes, at);
  WN_CUDA(cudaMemset(from.data, 1, bytes), at);
  Event start(at), stop(at);
  std::vector<float> ms;
  for (int i = 0; i <= runs; ++i) {  // the first is a warm-up
    WN_CUDA(cudaEventRecord(start.e), at);
    WN_CUDA(cudaMemcpyAsync(to.data, from.data, bytes, cudaMemcpyDeviceToDevice), at);
    WN_CUDA(cudaEventRecord(stop.e), at);
    wait_for(stop.e, 60, at);
    float t = 0;
    WN_CUDA(cudaEventElapsedTime(&t, start.e, stop.e), at);
    if (i > 0) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return 2.0 * double(bytes) / (double(ms[ms.size() / 2]) * 1e-3) * 1e-9;
}

std::vector<Tensor> run(const Kernel& kernel, const Sizes& sizes, const std::vector<Tensor>& inputs,
                        double timeout_s) {
  Problem problem(kernel, sizes, inputs);
  problem.run(kernel, timeout_s);
  return problem.outputs();
}

}  // namespace warpnet::device::gpu
