// matmul version 0 on the GPU: the vendor library, the yardstick every other
// version is measured against ("% of cuBLAS", taken in the same run).
//
//   00_cublas       fp32 SGEMM (cublasSgemm, CUDA cores; the default math
//                   mode, so no TF32 unless NVIDIA_TF32_OVERRIDE=1 is set)
//   00_cublas_fp16  fp16 inputs, fp32 output and accumulation (cublasGemmEx,
//                   CUBLAS_COMPUTE_32F: tensor cores)
//   00_cublas_bf16  the same with bf16 inputs
//
// A version with a Kernel::input_format is compared with the version 0 of the
// same input format (`warpnet bench` matches them by format). Registered only
// in the CUDA copy: this file is compiled by nvcc alone, never for the emulator.
//
// FP8 (e4m3 inputs, cuBLASLt) is not here yet: it arrives with the FP8 kernel
// (issue 4, version 14). Its registration goes in this file as a fourth
// Kernel with .input_format = &simt::kE4M3 and a launch through
// cublasLtMatmul (CUDA_R_8F_E4M3 A/B, CUDA_R_32F C, per-tensor scale pointers
// of 1.0, the "TN" layout cuBLASLt requires for fp8: transpose A or B on the
// device first where the problem's layout differs). Until then an fp8 version
// is benchmarked without a vendor ratio, and the bench says so.
//
// Row-major through the operand swap: cuBLAS is column-major, and a row-major
// (R x C) matrix is the column-major (C x R) matrix, its transpose. So
// C = op(A)·op(B) in row-major is C^T = op(B)^T·op(A)^T in column-major:
// call cuBLAS with B first, A second, sizes (N, M, K), ldc = N.
//   B stored (K,N): column-major (N,K) = B^T, no transpose, ldb = N
//   B stored (N,K) (trans_b): column-major (K,N), transpose it, ldb = K
//   A stored (M,K): column-major (K,M) = A^T, no transpose, lda = K
//   A stored (K,M) (trans_a): column-major (M,K), transpose it, lda = M
#include <cublas_v2.h>
#include <library_types.h>

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

}  // namespace
}  // namespace warpnet::device::gemm
