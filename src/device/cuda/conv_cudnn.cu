// Version 0 of the convolution ops on the GPU: cuDNN, the yardstick the conv
// ladder is measured against ("% of cuDNN", taken in the same run).
//
//   conv2d/00_cudnn        cudnnConvolutionForward         x, w -> y     NCHW
//   conv2d/00_cudnn_implicit_gemm   the same, cuDNN's implicit GEMMs only (not the yardstick)
//   conv2d_dgrad/00_cudnn  cudnnConvolutionBackwardData    dy, w -> dx   NCHW
//   conv2d_wgrad/00_cudnn  cudnnConvolutionBackwardFilter  x, dy -> dw   NCHW
//   conv2d_nhwc/00_cudnn   cudnnConvolutionForward         x, w -> y     NHWC (w as KRSC)
//   conv2d_nhwc/00_cudnn_bf16   the same in bf16 on tensor cores (conv v13's yardstick)
//
// All fp32 in, fp32 out, fp32 compute (CUDNN_DATA_FLOAT), cross-correlation
// (what every framework calls convolution; CUDNN_CONVOLUTION would flip the
// filter), square stride, padding and dilation from the op's sizes; but
// 00_cudnn_bf16: x, w and y bf16, fp32 compute (cuDNN's
// PSEUDO_BFLOAT16_CONFIG, the one bf16 configuration: y is bf16 too, so
// warpnet's bf16 convolution writes bf16 as well, Kernel::output_format),
// CUDNN_TENSOR_OP_MATH, the fastest algorithm of any math type.
//
// No TF32: the math type is CUDNN_FMA_MATH. Unlike cuBLAS, whose default math
// mode keeps SGEMM on CUDA cores, cuDNN's CUDNN_DEFAULT_MATH permits TF32
// tensor-core kernels for fp32 data on sm_80 and later (frameworks switch to
// CUDNN_FMA_MATH when TF32 is turned off: Paddle's conv does exactly that);
// TF32 rounds the inputs to 10 mantissa bits, which the fp32 ladder's error
// bound would not cover. The algorithms cudnnFind* returns with a tensor-op
// math type are skipped as well. A TF32 baseline is issue 6's business.
//
// The algorithm: cudnnFind*Algorithm — cuDNN times every algorithm on
// buffers of its own — once per problem size; of those that succeeded and
// use no tensor-op math, deterministic or not (cuDNN's fastest wgrad
// algorithms may add with atomics; warpnet's wgrad v2 is deterministic by
// design, see kernels/conv/wgrad_02_implicit_gemm.cu), the fastest when
// timed again as warpnet's autotuners time (timed_again: cudnnFind's own
// single cold runs are noisy at small sizes). Its workspace is a
// process-lifetime buffer grown to the largest plan. Both happen at a size's
// first launch, which the bench runs untimed (a version is checked before it
// is timed); a later launch is the cuDNN call alone. Kernel::tune makes the
// plan before the check and returns every algorithm cudnnFind timed, with
// the one taken, for the record's `tuned`: the yardstick's kind (Winograd,
// FFT, implicit GEMM) and cuDNN's implicit GEMM's time in the same run.
//
// Compiled only when CMake finds cuDNN (src/device/cuda/CMakeLists.txt);
// without it the conv ops have no version 0 and the bench's "% vendor" stays
// empty for them. Registered in the CUDA copy only, like matmul_cublas.cu.
// Ran on an H200 on 2026-11-30 and 2026-12-04 (the records' conv rows);
// timed_again is newer (2026-12-06) and has not run on a GPU yet.
#include <cudnn.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "device/cuda/check.cuh"
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/gpu_timing.hpp"

// WN_CUDNN(call, where): like WN_CUBLAS. An execution failure (cuDNN 9's
// 5000 series) may or may not have cost the context: a launch cuDNN's kernel
// could not make (EXECUTION_FAILED_CUDART on a configuration) leaves it
// whole, a fault does not, so the device is asked (gpu::context_lost), as
// after a failed launch of warpnet's own.
#define WN_CUDNN(call, where)                                                                              \
  do {                                                                                                     \
    const cudnnStatus_t wn_cudnn_status_ = (call);                                                         \
    if (wn_cudnn_status_ != CUDNN_STATUS_SUCCESS)                                                          \
      throw ::warpnet::device::gpu::Failure(                                                               \
          ::warpnet::cat(std::string(where).empty() ? "" : std::string(where) + ": ", #call, " failed: ", \
                         cudnnGetErrorString(wn_cudnn_status_)),                                           \
          wn_cudnn_status_ / 1000 == CUDNN_STATUS_EXECUTION_FAILED / 1000 &&                               \
              ::warpnet::device::gpu::context_lost());                                                     \
  } while (0)

namespace warpnet::device::conv {
namespace {

enum class Pass { forward, dgrad, wgrad };
// Which of cudnnFind's algorithms a plan takes: the fastest of all, or
// (forward only) the fastest of cuDNN's implicit GEMMs, IMPLICIT_GEMM and
// IMPLICIT_PRECOMP_GEMM: the yardstick of the same kind as warpnet's
// implicit-GEMM rungs (conv2d/00_cudnn_implicit_gemm).
enum class Choice { fastest, implicit_gemm };
// The data type of x, w and y: fp32 on CUDA cores, or bf16 on tensor cores.
enum class Data { fp32, bf16 };

const char* op_name(Pass pass, cudnnTensorFormat_t format) {
  if (format == CUDNN_TENSOR_NHWC) return "conv2d_nhwc";
  return pass == Pass::forward ? "conv2d" : pass == Pass::dgrad ? "conv2d_dgrad" : "conv2d_wgrad";
}

std::string where(Pass pass, cudnnTensorFormat_t format, const Sizes& s, Choice choice = Choice::fastest,
                  Data data = Data::fp32) {
  const ConvShape g = shape_of(s);
  const char* name = data == Data::bf16 ? "/00_cudnn_bf16"
                     : choice == Choice::fastest ? "/00_cudnn"
                                                 : "/00_cudnn_implicit_gemm";
  return cat(op_name(pass, format), name, " at N=", g.N, " C=", g.C, " H=", g.H, " W=", g.W, " K=", g.K,
             " R=", g.R, " S=", g.S, " stride=", g.stride, " pad=", g.pad, " dilation=", g.dil);
}

// The process's cuDNN handle, never destroyed (as cublas_handle()), bound at
// each call to the thread's launch stream, as every warpnet launch (a
// captured training step's stream while it is captured).
cudnnHandle_t cudnn_handle() {
  static cudnnHandle_t handle = [] {
    cudnnHandle_t h = nullptr;
    WN_CUDNN(cudnnCreate(&h), "creating the cuDNN handle");
    return h;
  }();
  WN_CUDNN(cudnnSetStream(handle, launch_stream()), "binding the cuDNN handle to the launch stream");
  return handle;
}

// Everything about one problem that needs no data, made once per (pass,
// layout, sizes): the descriptors, the chosen algorithm and its workspace.
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;  // x or dx; y or dy
  cudnnFilterDescriptor_t w = nullptr;                // w or dw
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;  // a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
  size_t workspace = 0;
  std::string found;  // what cudnnFind measured and timed_again timed, in words
  std::string at;     // the pass, format and sizes, for an error's message (where)
};

// The algorithms' names, indexed by their enum values (cudnn_ops.h).
constexpr const char* kForwardAlgos[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                         "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
constexpr const char* kDgradAlgos[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
constexpr const char* kWgradAlgos[] = {"ALGO_0",   "ALGO_1", "FFT",       "ALGO_3",
                                       "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
static_assert(std::size(kForwardAlgos) == CUDNN_CONVOLUTION_FWD_ALGO_COUNT &&
                  std::size(kDgradAlgos) == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT &&
                  std::size(kWgradAlgos) == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
              "one name per cuDNN algorithm");

// An algorithm's name in one of the tables above ("algorithm 9" past its end).
std::string algorithm_name(int algo, const char* const* names, size_t count) {
  return size_t(algo) < count ? std::string(names[algo]) : "algorithm " + std::to_string(algo);
}

const char* math_name(cudnnMathType_t math) {
  switch (math) {
    case CUDNN_DEFAULT_MATH: return "default math";
    case CUDNN_TENSOR_OP_MATH: return "tensor-op math";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor-op math with conversion";
    case CUDNN_FMA_MATH: return "FMA math";
  }
  return "another math type";
}

// One of cudnnFind's results a plan may take: the algorithm, its workspace
// and the math type cudnnFind ran it in.
struct Candidate {
  int algo = 0;
  size_t workspace = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;
};

// cudnnFind's results that ran, use no tensor-op math unless `tensor_ops`
// (bf16 data) and are an algorithm `accepted` (every one when null), in
// cudnnFind's order (fastest first).
template <class Perf>
std::vector<Candidate> candidates(const Perf* perf, int count, bool tensor_ops, bool (*accepted)(int algo) = nullptr) {
  std::vector<Candidate> out;
  for (int i = 0; i < count; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS &&
        (tensor_ops || (perf[i].mathType != CUDNN_TENSOR_OP_MATH &&
                        perf[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)) &&
        (!accepted || accepted(int(perf[i].algo))))
      out.push_back({int(perf[i].algo), perf[i].memory, perf[i].mathType});
  return out;
}

bool implicit_gemm(int algo) {
  return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
}

// "cuDNN 9.1.0, cudnnFind: WINOGRAD_NONFUSED 0.201 ms, IMPLICIT_PRECOMP_GEMM 0.310 ms, FFT tensor-op
// math (skipped), GEMM failed, ...": the library's version (the record's GPU section names cuBLAS's,
// not cuDNN's) and every result in cudnnFind's order (fastest first), so the record says which kind
// of algorithm the yardstick is and what cuDNN's implicit GEMM took in the same run.
template <class Perf, size_t N>
std::string algorithms_found(const Perf* perf, int count, bool tensor_ops, const char* const (&names)[N]) {
  const size_t version = cudnnGetVersion();  // 90100 for 9.1.0; 8907 for 8.9.7 (cuDNN 8's encoding)
  const size_t major_unit = version >= 10000 ? 10000 : 1000;
  std::string text = cat("cuDNN ", version / major_unit, ".", version % major_unit / 100, ".", version % 100,
                         ", cudnnFind:");
  for (int i = 0; i < count; ++i) {
    const Perf& r = perf[i];
    text += cat(i ? ", " : " ", algorithm_name(int(r.algo), names, N));
    if (r.status != CUDNN_STATUS_SUCCESS)
      text += " failed";
    else if (!tensor_ops && (r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
      text += cat(" ", r.time, " ms tensor-op math (skipped)");
    else
      text += cat(" ", r.time, " ms");
  }
  return text;
}

// One cuDNN call of the pass with `algo` on buffers as the ops order them:
// conv2d {x, w, y}, conv2d_dgrad {dy, w, dx}, conv2d_wgrad {x, dy, dw}.
// alpha = 1, beta = 0: the output is only written.
void call(Pass pass, const Plan& p, int algo, void* ws, size_t ws_bytes, Buffers b) {
  const float one = 1.0f, zero = 0.0f;
  const cudnnHandle_t h = cudnn_handle();
  if (pass == Pass::forward) {
    // The plain loop this stands for: kernels/conv/01_direct.cu.
    WN_CUDNN(cudnnConvolutionForward(h, &one, p.x, b[0], p.w, b[1], p.conv, cudnnConvolutionFwdAlgo_t(algo), ws,
                                     ws_bytes, &zero, p.y, b[2]),
             p.at);
  } else if (pass == Pass::dgrad) {
    WN_CUDNN(cudnnConvolutionBackwardData(h, &one, p.w, b[1], p.y, b[0], p.conv,
                                          cudnnConvolutionBwdDataAlgo_t(algo), ws, ws_bytes, &zero, p.x, b[2]),
             p.at);
  } else {
    WN_CUDNN(cudnnConvolutionBackwardFilter(h, &one, p.x, b[0], p.y, b[1], p.conv,
                                            cudnnConvolutionBwdFilterAlgo_t(algo), ws, ws_bytes, &zero, p.w, b[2]),
             p.at);
  }
}

// cudnnFind times each algorithm once, cold, on buffers of its own: at small
// sizes its figures are mostly launch overhead (0.075 ms for a LeNet layer
// the bench times at 0.028 on an H200, 2026-12-04) and its order changed
// from one run to the next (FFT_TILING in one record, WINOGRAD_NONFUSED in
// another, at the same 56x56 layer). So every candidate is timed again as
// warpnet's autotuners time theirs (gpu_timing.hpp: a warm-up call, then the
// mean over about 20 ms of calls), on zeroed buffers of the plan's sizes;
// one cuDNN refuses here (a workspace that no longer fits) is left out. The
// index of the fastest; the times are added to p.found. Falls back on
// cudnnFind's order (index 0) where the timing itself fails, unless the
// failure lost the GPU's context, which is thrown.
template <class Name>
size_t timed_again(Pass pass, Plan& p, const ConvShape& g, bool bf16, const std::vector<Candidate>& qualified,
                   Name name) {
  if (qualified.size() == 1) return 0;
  using namespace gpu_timing;
  const size_t element = bf16 ? 2 : 4;
  const size_t x = size_t(g.N) * g.C * g.H * g.W * element, w = size_t(g.K) * g.crs() * element,
               y = size_t(outputs(g)) * element;
  const size_t in0 = pass == Pass::dgrad ? y : x, in1 = pass == Pass::wgrad ? y : w;
  const size_t out = pass == Pass::forward ? y : pass == Pass::dgrad ? x : w;
  const char* who = p.at.c_str();
  try {
    const ProfilerPaused paused;  // as the tuners: a profiler's run collects the workload, not this
    const DeviceArray<uint8_t> a(in0, who), b(in1, who), c(out, who);
    check_cuda(cudaMemset(a.p, 0, in0), who, ": cudaMemset");
    check_cuda(cudaMemset(b.p, 0, in1), who, ": cudaMemset");
    void* const buffers[3] = {a.p, b.p, c.p};
    // Each candidate with a workspace of its own, made before any is timed;
    // one that cannot be made, or that cuDNN refuses once, is not timed.
    std::vector<std::unique_ptr<DeviceArray<uint8_t>>> workspaces(qualified.size());
    std::vector<bool> runs(qualified.size(), false);
    for (size_t i = 0; i < qualified.size(); ++i) {
      const Candidate& candidate = qualified[i];
      try {
        workspaces[i] = std::make_unique<DeviceArray<uint8_t>>(std::max<size_t>(candidate.workspace, 1), who);
        if (bf16) WN_CUDNN(cudnnSetConvolutionMathType(p.conv, candidate.math), p.at);
        call(pass, p, candidate.algo, workspaces[i]->p, candidate.workspace, buffers);
        wait_for_launches(who, "an algorithm's first call");
        runs[i] = true;
      } catch (const gpu::Failure& f) {
        if (f.context_lost) throw;
      } catch (const Error&) {
        if (gpu::context_lost()) throw;
      }
      if (!runs[i]) workspaces[i].reset();
      (void)cudaGetLastError();  // a refused candidate's error is not the next one's
    }
    const EventPair ev(who);
    int best = -1;
    const std::vector<double> ms = time_candidates(
        int(qualified.size()), ev,
        [&](int i) {
          const Candidate& candidate = qualified[size_t(i)];
          if (bf16) WN_CUDNN(cudnnSetConvolutionMathType(p.conv, candidate.math), p.at);
          call(pass, p, candidate.algo, workspaces[size_t(i)]->p, candidate.workspace, buffers);
        },
        best, [&](int i) { return bool(runs[size_t(i)]); });
    // Refused at its first call (runs[i] false): "refused", not "not a candidate here".
    std::vector<double> shown = ms;
    for (size_t i = 0; i < shown.size(); ++i)
      if (!runs[i]) shown[i] = std::numeric_limits<double>::quiet_NaN();
    p.found += "; timed again: " + describe_times(shown, [&](int i) { return name(qualified[size_t(i)]); });
    if (best >= 0) return size_t(best);
    p.found += "; none ran, cudnnFind's order taken";
  } catch (const gpu::Failure& f) {
    if (f.context_lost) throw;
    p.found += cat("; timing them again failed (", f.what(), "): cudnnFind's order taken");
  } catch (const Error& e) {
    // gpu_timing's checks throw Error: whether the context survived, the device says.
    if (gpu::context_lost()) throw gpu::Failure(cat(p.at, ": timing cuDNN's algorithms: ", e.what()), true);
    p.found += cat("; timing them again failed (", e.what(), "): cudnnFind's order taken");
  }
  (void)cudaGetLastError();  // a failed call's error is not the next launch's
  return 0;
}

const Plan& plan_of(Pass pass, cudnnTensorFormat_t format, const Sizes& s, Choice choice = Choice::fastest,
                    Data data = Data::fp32) {
  static std::map<std::tuple<Pass, cudnnTensorFormat_t, Sizes, Choice, Data>, Plan> plans;  // kept for the process
  const auto key = std::make_tuple(pass, format, s, choice, data);
  if (const auto it = plans.find(key); it != plans.end()) return it->second;
  const std::string at = where(pass, format, s, choice, data);
  // cudnnFind runs and times kernels, and a plan allocates: neither can be
  // recorded into a graph. A captured step's sizes are planned by an eager one first.
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  WN_CUDA(cudaStreamIsCapturing(launch_stream(), &capturing), at);
  if (capturing != cudaStreamCaptureStatusNone)
    throw gpu::Failure(at + ": no cuDNN plan for these sizes yet, and one cannot be made while the stream is "
                            "captured (run the sizes once before capturing)",
                       false);
  const bool bf16 = data == Data::bf16;
  const cudnnDataType_t type = bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  const ConvShape g = shape_of(s);
  Plan p;
  // The descriptors are the kept plan's; a plan that fails on the way destroys its own.
  struct Unkept {
    Plan& p;
    bool kept = false;
    ~Unkept() {
      if (kept) return;
      if (p.x) cudnnDestroyTensorDescriptor(p.x);
      if (p.y) cudnnDestroyTensorDescriptor(p.y);
      if (p.w) cudnnDestroyFilterDescriptor(p.w);
      if (p.conv) cudnnDestroyConvolutionDescriptor(p.conv);
    }
  } unkept{p};
  WN_CUDNN(cudnnCreateTensorDescriptor(&p.x), at);
  WN_CUDNN(cudnnCreateTensorDescriptor(&p.y), at);
  WN_CUDNN(cudnnCreateFilterDescriptor(&p.w), at);
  WN_CUDNN(cudnnCreateConvolutionDescriptor(&p.conv), at);
  // Sizes are given in NCHW order whatever the format; the format says how
  // they are stored (NHWC: x (N,H,W,C), y (N,P,Q,K), w (K,R,S,C)).
  WN_CUDNN(cudnnSetTensor4dDescriptor(p.x, format, type, g.N, g.C, g.H, g.W), at);
  WN_CUDNN(cudnnSetTensor4dDescriptor(p.y, format, type, g.N, g.K, g.P, g.Q), at);
  WN_CUDNN(cudnnSetFilter4dDescriptor(p.w, type, format, g.K, g.C, g.R, g.S), at);
  WN_CUDNN(cudnnSetConvolution2dDescriptor(p.conv, g.pad, g.pad, g.stride, g.stride, g.dil, g.dil,
                                           CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
           at);
  // fp32: no TF32 (header); bf16: tensor cores.
  WN_CUDNN(cudnnSetConvolutionMathType(p.conv, bf16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), at);
  const cudnnHandle_t h = cudnn_handle();
  int found = 0;
  std::vector<Candidate> qualified;
  const char* const* names = nullptr;
  size_t name_count = 0;
  if (pass == Pass::forward) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    WN_CUDNN(cudnnFindConvolutionForwardAlgorithm(h, p.x, p.w, p.conv, p.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                                                  perf),
             at);
    qualified = candidates(perf, found, bf16, choice == Choice::implicit_gemm ? implicit_gemm : nullptr);
    p.found = algorithms_found(perf, found, bf16, kForwardAlgos);
    names = kForwardAlgos, name_count = std::size(kForwardAlgos);
  } else if (pass == Pass::dgrad) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    WN_CUDNN(cudnnFindConvolutionBackwardDataAlgorithm(h, p.w, p.y, p.conv, p.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                       &found, perf),
             at);
    qualified = candidates(perf, found, bf16);
    p.found = algorithms_found(perf, found, bf16, kDgradAlgos);
    names = kDgradAlgos, name_count = std::size(kDgradAlgos);
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    WN_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithm(h, p.x, p.y, p.conv, p.w,
                                                         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf),
             at);
    qualified = candidates(perf, found, bf16);
    p.found = algorithms_found(perf, found, bf16, kWgradAlgos);
    names = kWgradAlgos, name_count = std::size(kWgradAlgos);
  }
  if (qualified.empty())
    throw gpu::Failure(at + ": cudnnFind found no " + (bf16 ? "bf16 " : "fp32 (non-tensor-op) ") +
                           (choice == Choice::fastest ? "algorithm" : "implicit-GEMM algorithm") + " that runs",
                       false);
  p.at = at;
  // bf16: cudnnFind may list an algorithm in two math types, so those name theirs.
  const auto name = [&](const Candidate& c) {
    return algorithm_name(c.algo, names, name_count) + (bf16 ? cat(" (", math_name(c.math), ")") : "");
  };
  const size_t best = timed_again(pass, p, g, bf16, qualified, name);
  p.algo = qualified[best].algo, p.workspace = qualified[best].workspace;
  p.found += "; chosen: " + name(qualified[best]);
  // bf16: run the algorithm in the math variant Find timed it in (the
  // descriptor still says tensor-op math, which Find may have run otherwise).
  // fp32 keeps FMA math whatever Find reports: default math permits TF32.
  if (bf16) WN_CUDNN(cudnnSetConvolutionMathType(p.conv, qualified[best].math), at);
  const Plan& kept = plans.emplace(key, p).first->second;
  unkept.kept = true;
  return kept;
}

// The workspace: device memory kept for the process, grown when a plan needs
// more. A buffer outgrown is kept, not freed (as device/kernels/workspace.hpp
// keeps its own): a captured training step holds its address, and replays
// after a partial batch's new plan grew it would write into freed memory.
void* workspace_for(size_t needed, const std::string& at) {
  static void* data = nullptr;
  static size_t bytes = 0;
  if (needed > bytes) {
    data = nullptr, bytes = 0;
    WN_CUDA(cudaMalloc(&data, needed), cat(at, ": cuDNN workspace of ", needed, " bytes"));
    bytes = needed;
  }
  return data;
}

// The plan's algorithm on buffers as call() takes them.
template <Pass pass, cudnnTensorFormat_t format, Choice choice = Choice::fastest, Data data = Data::fp32>
void run(const Sizes& s, const Launch&, Buffers b) {
  const Plan& p = plan_of(pass, format, s, choice, data);
  call(pass, p, p.algo, p.workspace ? workspace_for(p.workspace, p.at) : nullptr, p.workspace, b);
}

// Kernel::tune for version 0: no tuning of ours, but the plan made (cudnnFind
// run) before the check, and what it found written into the record.
template <Pass pass, cudnnTensorFormat_t format, Choice choice = Choice::fastest, Data data = Data::fp32>
std::string algorithms(const Sizes& s) {
  return plan_of(pass, format, s, choice, data).found;
}

// What any convolution pass must move at least: its two inputs read once,
// its output written once — x, w and y in every pass. What cuDNN's kernels
// really ask for is theirs to know.
double compulsory_bytes(const Sizes& s) {
  const ConvShape g = shape_of(s);
  return 4.0 * (double(g.N) * g.C * g.H * g.W + double(g.K) * g.crs() + outputs(g));
}

// No launch shape of ours: cuDNN picks its kernels and grids.
Launch library_shape(const Sizes&) { return Launch{dim3(1), dim3(1), 0}; }

// One cuDNN version 0: what differs between the four is the op, the call
// in words and the pass and layout it launches.
Kernel cudnn_kernel(std::string op, std::string shape_text, void (*launch)(const Sizes&, const Launch&, Buffers),
                    std::string (*found)(const Sizes&), std::string name = "cudnn") {
  return Kernel{.op = std::move(op),
                .version = 0,
                .name = std::move(name),
                .precision = "fp32 (CUDA cores: CUDNN_FMA_MATH, no TF32)",
                .shape_text = "cuDNN chooses: " + shape_text + " (once per size)",
                .shape = library_shape,
                .flops = flops,
                .bytes = compulsory_bytes,
                .emulator = false,
                .launch = launch,
                .copy = Copy::cuda,
                .tune = found};
}

const Registration cudnn_forward{cudnn_kernel(
    "conv2d",
    "cudnnConvolutionForward, NCHW fp32, cross-correlation, the fastest FMA-math algorithm of "
    "cudnnFindConvolutionForwardAlgorithm's, timed again",
    run<Pass::forward, CUDNN_TENSOR_NCHW>, algorithms<Pass::forward, CUDNN_TENSOR_NCHW>)};

// Not the yardstick (conv2d/00_cudnn is, the first version 0 of its format:
// the registry orders a version's kernels by name): cuDNN's own implicit
// GEMM, timed in the same run, for the rungs of that kind to be set against.
const Registration cudnn_forward_implicit_gemm{cudnn_kernel(
    "conv2d",
    "cudnnConvolutionForward, NCHW fp32, cross-correlation, the faster of IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM "
    "of cudnnFindConvolutionForwardAlgorithm's, timed again",
    run<Pass::forward, CUDNN_TENSOR_NCHW, Choice::implicit_gemm>,
    algorithms<Pass::forward, CUDNN_TENSOR_NCHW, Choice::implicit_gemm>, "cudnn_implicit_gemm")};

const Registration cudnn_dgrad{cudnn_kernel(
    "conv2d_dgrad",
    "cudnnConvolutionBackwardData, NCHW fp32, the fastest FMA-math algorithm of "
    "cudnnFindConvolutionBackwardDataAlgorithm's, timed again",
    run<Pass::dgrad, CUDNN_TENSOR_NCHW>, algorithms<Pass::dgrad, CUDNN_TENSOR_NCHW>)};

const Registration cudnn_wgrad{cudnn_kernel(
    "conv2d_wgrad",
    "cudnnConvolutionBackwardFilter, NCHW fp32, the fastest FMA-math algorithm of "
    "cudnnFindConvolutionBackwardFilterAlgorithm's, timed again (it may be non-deterministic)",
    run<Pass::wgrad, CUDNN_TENSOR_NCHW>, algorithms<Pass::wgrad, CUDNN_TENSOR_NCHW>)};

const Registration cudnn_nhwc{cudnn_kernel(
    "conv2d_nhwc",
    "cudnnConvolutionForward, NHWC x and y, KRSC w (CUDNN_TENSOR_NHWC) fp32, the fastest FMA-math algorithm of "
    "cudnnFindConvolutionForwardAlgorithm's, timed again",
    run<Pass::forward, CUDNN_TENSOR_NHWC>, algorithms<Pass::forward, CUDNN_TENSOR_NHWC>)};

// bf16 on tensor cores, y in bf16 (header): conv2d_nhwc/13's yardstick.
Kernel cudnn_bf16_kernel() {
  Kernel k = cudnn_kernel("conv2d_nhwc",
                          "cudnnConvolutionForward, NHWC x and y, KRSC w (CUDNN_TENSOR_NHWC), bf16 x, w and y with "
                          "fp32 compute, CUDNN_TENSOR_OP_MATH, the fastest algorithm of "
                          "cudnnFindConvolutionForwardAlgorithm's, timed again",
                          run<Pass::forward, CUDNN_TENSOR_NHWC, Choice::fastest, Data::bf16>,
                          algorithms<Pass::forward, CUDNN_TENSOR_NHWC, Choice::fastest, Data::bf16>, "cudnn_bf16");
  k.precision = "bf16 inputs and output, fp32 accumulation (tensor cores: CUDNN_TENSOR_OP_MATH)";
  k.bytes = [](const Sizes& s) { return compulsory_bytes(s) / 2; };  // every tensor in 2-byte elements
  k.input_format = &simt::kBfloat16;
  k.output_format = &simt::kBfloat16;
  return k;
}
const Registration cudnn_nhwc_bf16{cudnn_bf16_kernel()};

}  // namespace
}  // namespace warpnet::device::conv
