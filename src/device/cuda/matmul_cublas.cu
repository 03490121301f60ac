// matmul version 0 on the GPU: the vendor library, the yardstick every other
// version is measured against ("% of cuBLAS", taken in the same run).
//
//   00_cublas       fp32 SGEMM (cublasSgemm, CUDA cores; the default math
//                   mode, so no TF32 unless NVIDIA_TF32_OVERRIDE=1 is set)
//   00_cublas_fp16  fp16 inputs, fp32 output and accumulation (cublasGemmEx,
//                   CUBLAS_COMPUTE_32F: tensor cores)
//   00_cublas_bf16  the same with bf16 inputs
//   00_cublaslt_fp8 fp8 e4m3 inputs, fp32 output; ~14-bit tensor-core sums, fast
//                   accumulation as warpnet's fp8 kernels sum (cublasLtMatmul: FP8
//                   tensor cores, sm_89+; see below)
//
// A version with a Kernel::input_format is compared with the version 0 of the
// same input format (`warpnet bench` matches them by format). Registered only
// in the CUDA copy: this file is compiled by nvcc alone, never for the emulator.
//
// Row-major through the operand swap: cuBLAS is column-major, and a row-major
// (R x C) matrix is the column-major (C x R) matrix, its transpose. So
// C = op(A)·op(B) in row-major is C^T = op(B)^T·op(A)^T in column-major:
// call cuBLAS with B first, A second, sizes (N, M, K), ldc = N.
//   B stored (K,N): column-major (N,K) = B^T, no transpose, ldb = N
//   B stored (N,K) (trans_b): column-major (K,N), transpose it, ldb = K
//   A stored (M,K): column-major (K,M) = A^T, no transpose, lda = K
//   A stored (K,M) (trans_a): column-major (M,K), transpose it, lda = M
#include <cublasLt.h>
#include <cublas_v2.h>
#include <library_types.h>

#include <cstdint>
#include <map>

#include "device/cuda/check.cuh"
#include "device/kernels/matmul/gemm_registration.hpp"

namespace warpnet::device::gemm {
namespace {

struct ColumnMajorCall {
  cublasOperation_t op_b, op_a;
  int ldb, lda, ldc;
};

ColumnMajorCall column_major(const Sizes& s) {
  const bool ta = s[3] != 0, tb = s[4] != 0;
  return {tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? K(s) : N(s), ta ? M(s) : K(s), N(s)};
}

std::string where(const char* name, const Sizes& s) {
  return cat("matmul/00_", name, " at M=", M(s), " N=", N(s), " K=", K(s), " trans_a=", s[3], " trans_b=", s[4]);
}

void sgemm(const Sizes& s, const Launch&, Buffers b) {
  const ColumnMajorCall c = column_major(s);
  const float one = 1.0f, zero = 0.0f;
  // The plain loop this stands for: C[i][j] = sum_k op(A)[i][k] * op(B)[k][j].
  WN_CUBLAS(cublasSgemm(gpu::cublas_handle(), c.op_b, c.op_a, N(s), M(s), K(s), &one,
                        static_cast<const float*>(b[1]), c.ldb, static_cast<const float*>(b[0]), c.lda, &zero,
                        static_cast<float*>(b[2]), c.ldc),
            where("cublas", s));
}

// 16-bit inputs, fp32 C, fp32 accumulation: what the tensor-core versions
// compute, so their "% of cuBLAS" compares like with like.
template <cudaDataType_t In>
void gemm_ex(const Sizes& s, const Launch&, Buffers b) {
  const ColumnMajorCall c = column_major(s);
  const float one = 1.0f, zero = 0.0f;
  WN_CUBLAS(cublasGemmEx(gpu::cublas_handle(), c.op_b, c.op_a, N(s), M(s), K(s), &one, b[1], In, c.ldb, b[0], In,
                         c.lda, &zero, b[2], CUDA_R_32F, c.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            where(In == CUDA_R_16F ? "cublas_fp16" : "cublas_bf16", s));
}

// ---- fp8 e4m3 through cuBLASLt ------------------------------------------------
//
// cublasGemmEx takes no fp8; cublasLtMatmul does, on sm_89 and sm_90 under
// these conditions (cuBLAS documentation, cublasLtMatmul, "To use FP8
// kernels"): compute type CUBLAS_COMPUTE_32F, scale type CUDA_R_32F, A
// transposed and B not (the "TN" form), pointers and matrix dimensions 16-byte
// aligned. E4M3 A and B with fp32 C and D is one of its listed type
// combinations. The A/B scale pointers stay unset, which means 1.0 (the e4m3
// values are taken as they are). Fast accumulation is on: warpnet's fp8
// kernels (v15, v18, v22) leave their sums in the tensor cores' accumulator
// for the whole k loop, which is what CUBLASLT_MATMUL_DESC_FAST_ACCUM asks
// of cuBLASLt; with it off (the default) cuBLASLt also promotes partial sums
// to fp32 as the k loop goes, work the kernels skip, and a ratio against it
// would flatter them (the records up to 2026-12-04 were measured so).
//
// Hopper's fp8 tensor cores sum into their accumulator keeping about 14
// significand bits (the DeepSeek-V3 technical report, section 3.3.2,
// measured it on H800s); promoting partial sums to fp32 is software's part,
// which cuBLASLt does "periodically" unless fast accumulation
// (CUBLASLT_MATMUL_DESC_FAST_ACCUM) is on. On an H200 (2026-11-30, tests/gpu,
// fast accumulation off) its results missed the fp32-sum bound by up to about 90 times, already at K = 7,
// inside any promotion interval (-0.401855 for -0.401871: a relative error
// of 4e-5, about 2^-14.6). So the registration says accumulator_bits = 14,
// and checks allow it 2^10 times the fp32 bound — a 14-bit accumulator's
// bound over all K terms, promoted or not; v14 (mma.sync) met the fp32 bound
// on the same run.
//
// "TN" is column-major speech for: both operands K-major (K contiguous), A
// stored (k x m), B (k x n). Through the operand swap above (cuBLAS's A is our
// B, its B our A, m = N, n = M) that is
//   our B stored (N,K), trans_b = 1: column-major (K,N), op T, lda = K
//   our A stored (M,K), trans_a = 0: column-major (K,M), op N, ldb = K
// so only the layout {trans_a, trans_b} = {0, 1} (C = A·B^T) goes in as it
// is, and only with M, N and K multiples of 16 (16 one-byte elements;
// cuBLASLt's log refuses others: "M must be divisible by 16"). Otherwise every
// operand stored the other way (A when trans_a, B when not trans_b) or sized
// off 16 is first copied by pack_k_major into a K-major scratch copy,
// zero-padded to multiples of 16, and when a size is off 16 the product goes
// to a padded scratch D whose (M, N) corner is then copied to C. The zeros add
// nothing to any dot product.
//
// Those copies are INSIDE the timed region. A registration has only its
// launch (the harness has no hook to prepare operands when a Problem is
// created), and a prepared copy keyed on a buffer's address would go stale
// when a later Problem gets the same address. So at any layout but {0, 1}, or
// at sizes off 16, 00_cublaslt_fp8's time includes one pass over each copied
// operand (and over C); at {0, 1} with multiples of 16 it is cublasLtMatmul
// alone (`warpnet bench matmul --size 4096,4096,4096,0,1`). v14 pays for the
// layout as well: it transposes such an operand on its way into shared memory.

// pack_k_major: kernels/common/pack_k_major.hpp (matmul/15 packs its operands with it too).

// The error texts below are made only on failure (inside WN_CUDA/WN_CUBLAS):
// on the timed path, host work between the events counts too.
std::string where_fp8(const Sizes& s) { return where("cublaslt_fp8", s); }

void pack(bool transposed, int rows, int K, int rows16, int k16, const void* src, uint8_t* dst, const Sizes& s) {
  const dim3 grid(ceil_div(k16, 32), ceil_div(rows16, 32)), block(32, 8);
  const auto* in = static_cast<const uint8_t*>(src);
  if (transposed)
    pack_k_major<true><<<grid, block, 0, launch_stream()>>>(rows, K, rows16, k16, in, dst);
  else
    pack_k_major<false><<<grid, block, 0, launch_stream()>>>(rows, K, rows16, k16, in, dst);
  WN_CUDA(cudaGetLastError(), where_fp8(s) + ": pack_k_major");
}

constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

// The process's cuBLASLt handle, never destroyed (as cublas_handle()).
cublasLtHandle_t lt_handle() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    WN_CUBLAS(cublasLtCreate(&h), "creating the cuBLASLt handle");
    return h;
  }();
  return handle;
}

// Device memory kept for the process, grown when a larger problem needs more.
// It grows at a size's first launch, which the harness runs untimed (a
// version is checked before it is timed). A buffer outgrown is kept, not
// freed: a captured graph may still hold its address (conv_cudnn.cu's
// workspace says more).
void* grown(void*& data, size_t& bytes, size_t needed, const Sizes& s) {
  if (needed > bytes) {
    data = nullptr, bytes = 0;
    WN_CUDA(cudaMalloc(&data, needed), cat(where_fp8(s), ": scratch of ", needed, " bytes"));
    bytes = needed;
  }
  return data;
}

// Everything about one problem size that needs no data, made once per size:
// the padded sizes, which copies are needed, the descriptors, and the
// heuristic's first algorithm for them within the workspace.
struct LtPlan {
  int m16 = 0, n16 = 0, k16 = 0;  // M, N, K rounded up to 16
  bool pad = false, pack_a = false, pack_b = false;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;  // cuBLAS's A (our B), B (our A), C = D
  cublasLtMatmulAlgo_t algo{};
};

const LtPlan& lt_plan(const Sizes& s) {
  static std::map<Sizes, LtPlan> plans;  // kept for the process, as the handle
  if (const auto it = plans.find(s); it != plans.end()) return it->second;
  const std::string at = where_fp8(s);  // made once per size, not on the timed path
  const auto up16 = [](int n) { return (n + 15) / 16 * 16; };
  LtPlan p;
  p.m16 = up16(M(s)), p.n16 = up16(N(s)), p.k16 = up16(K(s));
  p.pad = p.m16 != M(s) || p.n16 != N(s) || p.k16 != K(s);
  p.pack_a = p.pad || s[3] != 0;  // A must be (M,K): K-major
  p.pack_b = p.pad || s[4] == 0;  // B must be (N,K): K-major
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  WN_CUBLAS(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), at);
  WN_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t), at);
  WN_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n), at);
  const int8_t fast_accumulation = 1;  // as the kernels sum: see above
  WN_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accumulation,
                                           sizeof fast_accumulation),
            at);
  // Column-major (rows, cols, ld): our B (N,K) is (K,N); our A (M,K) is (K,M); C (M,N) is (N,M).
  WN_CUBLAS(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, p.k16, p.n16, p.k16), at);
  WN_CUBLAS(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, p.k16, p.m16, p.k16), at);
  WN_CUBLAS(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_32F, p.n16, p.m16, p.n16), at);
  static const cublasLtMatmulPreference_t preference = [&] {
    cublasLtMatmulPreference_t pref = nullptr;
    WN_CUBLAS(cublasLtMatmulPreferenceCreate(&pref), at);
    WN_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &kLtWorkspaceBytes, sizeof kLtWorkspaceBytes),
              at);
    return pref;
  }();
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  WN_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt_handle(), p.desc, p.a, p.b, p.d, p.d, preference, 1, &best, &found),
            at + " (FP8 needs compute capability 8.9 or later)");
  if (found == 0) throw gpu::Failure(at + ": cublasLtMatmulAlgoGetHeuristic found no algorithm", false);
  p.algo = best.algo;
  return plans.emplace(s, p).first->second;
}

void lt_fp8(const Sizes& s, const Launch&, Buffers b) {
  const LtPlan& p = lt_plan(s);
  // Scratch: packed A (m16, k16) bytes, packed B (n16, k16) bytes, padded D
  // (m16, n16) fp32, each starting 256-byte aligned (cudaMalloc's alignment).
  const auto aligned = [](size_t n) { return (n + 255) / 256 * 256; };
  const size_t a_bytes = p.pack_a ? aligned(size_t(p.m16) * p.k16) : 0;
  const size_t b_bytes = p.pack_b ? aligned(size_t(p.n16) * p.k16) : 0;
  const size_t d_bytes = p.pad ? size_t(p.m16) * p.n16 * sizeof(float) : 0;
  static void *copies = nullptr, *workspace = nullptr;
  static size_t copies_bytes = 0, workspace_bytes = 0;
  auto* scratch = static_cast<uint8_t*>(grown(copies, copies_bytes, a_bytes + b_bytes + d_bytes, s));
  grown(workspace, workspace_bytes, kLtWorkspaceBytes, s);

  const void* a = b[0];  // our A, (M,K) K-major as cuBLASLt takes it
  const void* bk = b[1];  // our B, (N,K) K-major
  if (p.pack_a) {
    pack(s[3] != 0, M(s), K(s), p.m16, p.k16, b[0], scratch, s);
    a = scratch;
  }
  if (p.pack_b) {
    pack(s[4] == 0, N(s), K(s), p.n16, p.k16, b[1], scratch + a_bytes, s);
    bk = scratch + a_bytes;
  }
  void* d = p.pad ? scratch + a_bytes + b_bytes : b[2];
  const float one = 1.0f, zero = 0.0f;
  // Column-major D (N x M), which is row-major C (M, N): op T of our B seen as
  // (K x N), times our A seen as (K x M). beta = 0: C is only written.
  WN_CUBLAS(cublasLtMatmul(lt_handle(), p.desc, &one, bk, p.a, a, p.b, &zero, d, p.d, d, p.d, &p.algo, workspace,
                           kLtWorkspaceBytes, launch_stream()),
            where_fp8(s));
  if (p.pad)
    WN_CUDA(cudaMemcpy2DAsync(b[2], N(s) * sizeof(float), d, p.n16 * sizeof(float), N(s) * sizeof(float), M(s),
                              cudaMemcpyDeviceToDevice, launch_stream()),
            where_fp8(s) + ": the (M, N) corner of the padded D");
}

// What any GEMM must move at least: A and B read once, C written once. What
// cuBLAS's kernels really ask for is theirs to know.
double compulsory_bytes(const Sizes& s, int in_bytes) {
  return in_bytes * (double(M(s)) * K(s) + double(K(s)) * N(s)) + 4.0 * M(s) * N(s);
}

// No launch shape of ours: cuBLAS picks its kernel and grid.
Launch library_shape(const Sizes&) { return Launch{dim3(1), dim3(1), 0}; }

const Registration cublas_fp32{Kernel{
    .op = "matmul",
    .version = 0,
    .name = "cublas",
    .precision = "fp32 (CUDA cores, cuBLAS default math: no TF32)",
    .shape_text = "cuBLAS chooses: cublasSgemm, row-major through the operand swap (C^T = B^T A^T)",
    .shape = library_shape,
    .flops = flops,
    .bytes = [](const Sizes& s) { return compulsory_bytes(s, 4); },
    .emulator = false,
    .launch = sgemm,
    .copy = Copy::cuda,
}};

const Registration cublas_fp16{Kernel{
    .op = "matmul",
    .version = 0,
    .name = "cublas_fp16",
    .precision = "fp16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "cuBLAS chooses: cublasGemmEx CUDA_R_16F inputs, CUDA_R_32F C, CUBLAS_COMPUTE_32F",
    .shape = library_shape,
    .flops = flops,
    .bytes = [](const Sizes& s) { return compulsory_bytes(s, 2); },
    .emulator = false,
    .launch = gemm_ex<CUDA_R_16F>,
    .copy = Copy::cuda,
    .input_format = &simt::kHalf,
}};

const Registration cublas_bf16{Kernel{
    .op = "matmul",
    .version = 0,
    .name = "cublas_bf16",
    .precision = "bf16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "cuBLAS chooses: cublasGemmEx CUDA_R_16BF inputs, CUDA_R_32F C, CUBLAS_COMPUTE_32F",
    .shape = library_shape,
    .flops = flops,
    .bytes = [](const Sizes& s) { return compulsory_bytes(s, 2); },
    .emulator = false,
    .launch = gemm_ex<CUDA_R_16BF>,
    .copy = Copy::cuda,
    .input_format = &simt::kBfloat16,
}};

const Registration cublaslt_fp8{Kernel{
    .op = "matmul",
    .version = 0,
    .name = "cublaslt_fp8",
    .precision = "fp8 e4m3 inputs, ~14-bit tensor-core sums, cuBLASLt's fast accumulation (sm_89+)",
    .shape_text = "cuBLASLt chooses (first heuristic algorithm, 32 MiB workspace): cublasLtMatmul CUDA_R_8F_E4M3 A "
                  "and B, CUDA_R_32F D, CUBLAS_COMPUTE_32F, TN; layouts but {0,1} and sizes off 16 are packed "
                  "K-major first, inside the timed region",
    .shape = library_shape,
    .flops = flops,
    // The compulsory bytes; the packing copies, where needed, move more.
    .bytes = [](const Sizes& s) { return compulsory_bytes(s, 1); },
    .emulator = false,
    .min_sm = 89,
    .launch = lt_fp8,
    .copy = Copy::cuda,
    .input_format = &simt::kE4M3,
    .accumulator_bits = 14,  // measured on an H200: see "Hopper's fp8 tensor cores sum" above
}};

}  // namespace
}  // namespace warpnet::device::gemm
