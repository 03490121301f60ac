// One matmul in every precision warpnet knows, on every backend it has, with
// its error against float64 and its time: the table of `warpnet bench
// precision` and of the visualizer's precision panel (issue 6, items 2 and 4).
//
// For each precision the fp32 inputs A (M,K) and B (K,N) (the matmul op's own
// input maker: uniform(-1,1)) are stored in the format, multiplied with fp32
// accumulation, and C is compared with the float64 product of the ORIGINAL
// fp32 inputs, so the error is what the format costs, input rounding and
// summation together:
//   fp32, tf32, bf16, fp16  rounded to nearest even, no scale
//   e4m3, e5m2              fp8 with one per-tensor scale each for A and B
//                           (numeric/scaling.hpp: amax lands on the max
//                           finite value); C is divided by both scales
//   e2m1                    fp4 with OCP MX block scaling: 32 consecutive
//                           elements along K share an e8m0 scale
// Backends:
//   cpu   the rounded values (exact in fp32) multiplied by Eigen's fp32 GEMM:
//         fp32 products and sums, i.e. exactly "inputs in the format, fp32
//         accumulation" (products of two narrow values are exact in fp32).
//         bf16 also through AVX512_BF16's vdpbf16ps when the CPU has it
//         (cpu/matmul_bf16.hpp), kernel "cpu_avx512_bf16".
//   emu   the registered tensor-core versions (Kernel::input_format set) and
//         the best fp32 version, on the emulator: their errors are real,
//         their times are the emulator's, NOT a GPU's.
//   cuda  every CUDA version (version 0 = cuBLAS / cuBLASLt included) whose
//         input format is asked for, when a GPU is usable, timed by
//         gpu::Problem::time (CUDA events, L2 flushed), as `warpnet bench`.
// Formats with no kernel of that input format on a backend (tf32, e5m2 and
// e2m1 everywhere but the CPU) simply have no row there.
//
// max_ulps, one definition for every row: the largest element error in units
// of the row's input format's epsilon (2^-p, p its mantissa bits) times the
// sum of the magnitudes of the products behind that element:
//     max_ij |C_ij - Cref_ij| / (2^-p * sum_k |A_ik| |B_kj|)       (float64)
// Why this and not "ulps of |Cref_ij|": an element that cancels to nearly zero
// has a tiny ulp, so any per-element relative measure explodes at the
// cancelling elements and says nothing about the format. sum_k |a||b| is the
// scale every dot-product error bound uses. In these units rounding both
// inputs to nearest costs at most (2^-p + 2^-2p-2) / 2^-p, just over 1 (each
// product is off by a relative 2u + u^2, u = 2^-p-1), and fp32 summation adds
// at most K * 2^-24 / 2^-p, so a correct kernel on inputs in the format's
// normal range stays near 1: more means subnormals, scaling or an
// accumulator narrower than fp32. The unit differs by row on purpose
// (each format measured against its own resolution); rel_frobenius is the
// figure that compares formats.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "device/registry.hpp"
#include "numeric/format.hpp"

namespace warpnet::device::precision {

// "fp32", "tf32", "bf16", "fp16", "e4m3", "e5m2", "e2m1": table order.
const std::vector<std::string>& all_precisions();
// The storage format of a precision name; throws naming the known ones.
const numeric::Format& format_of(const std::string& precision);

// A, B and the float64 facts every row is measured against.
struct Operands {
  int64_t M = 0, N = 0, K = 0;
  bool trans_b = false;  // B stored (N,K): C = A·Bᵀ
  Tensor a, b;          // (M,K), and (K,N) or (N,K) when trans_b: f32, the originals
  Tensor c_ref;         // (M,N) f64: A·B of the originals in float64
  Tensor abs_products;  // (M,N) f64: sum_k |A_ik|·|B_kj|, the error scale (see max_ulps)
};
// The matmul op's inputs for (M, N, K) from `seed`, B stored (N,K) when
// trans_b, and their references.
Operands make_operands(int64_t M, int64_t N, int64_t K, uint64_t seed, bool trans_b = false);

// A and B as a precision stores them, decoded back to fp32 (exact): C is
// (a·b) / (scale_a·scale_b).
struct Quantized {
  std::string precision, scaling;  // scaling: "none", "per-tensor", "mx32 (e8m0 per 32 along K)"
  Tensor a, b;                     // f32, every value representable in the format (times the scale)
  float scale_a = 1, scale_b = 1;  // per-tensor scales (1 otherwise)
  // Bytes of A and B stored in the format, scales included: 4 per element
  // for fp32 and tf32 (tf32 lives in a 32-bit word), 2 for bf16/fp16, 1 for
  // fp8 plus two fp32 scales, 1/2 for e2m1 (packed two per byte, as a GPU
  // stores it) plus one e8m0 byte per block of 32.
  int64_t input_bytes = 0;
};
Quantized quantize(const std::string& precision, const Operands& x);

struct Errors {
  double rel_frobenius = 0;  // ||C - Cref||_F / ||Cref||_F; NaN if C holds inf/NaN
  double max_ulps = 0;       // see the top of this file
};
// c: (M,N) f32 as a kernel returned it for the quantized inputs; the product
// is c / (scale_a·scale_b), divided in float64 here; q's format sets
// the unit of max_ulps.
Errors measure(const Tensor& c, const Quantized& q, const Operands& x);

// Whether c is the product of the STORED inputs (q.a·q.b, before the scales
// are divided out), element by element: each within the bound of fp32 sums,
// γ·Σ_k |qa_ik|·|qb_kj| with γ = nu/(1-nu), nu = w·(K+1)·2^-23 (products of
// stored values are exact in fp32; the +1 covers fp32 inputs' rounded
// products; 2^-23 allows adds that truncate, as tensor cores' may; w the
// kernel's `widening` when its sums keep fewer bits, Kernel::
// accumulation_widening), plus the result's own rounding to fp32. Where nu
// reaches 1 there is no bound, and nothing is checked (`unchecked`). The
// float64 product is taken at 4096
// elements spread over C (every element of a smaller C) and its last one,
// so a check costs 4096·K multiply-adds at any size. measure's errors are
// against the original inputs, dominated by rounding them: this is the
// check that the kernel multiplied what it was given.
struct ProductCheck {
  bool unchecked = false;  // no bound at this K for this accumulator
  int64_t checked = 0, wrong = 0;
  std::string first;  // the first wrong element: "C[i,j] = got, want w (bound b)"
};
ProductCheck check_product(const Tensor& c, const Quantized& q, const Operands& x, double widening = 1);

struct Row {
  std::string precision;  // "bf16"
  std::string scaling;    // Quantized::scaling
  std::string backend;    // "cpu" | "emu" | "cuda"
  std::string kernel;     // "cpu", "cpu_avx512_bf16", or a kernel id ("matmul/12_mma_sync")
  int64_t M = 0, N = 0, K = 0;
  double ms = 0;      // median of the timed runs (the emulator's wall time on emu)
  double tflops = 0;  // 2·M·N·K / ms
  double rel_frobenius = 0, max_ulps = 0;
  int64_t input_bytes = 0;
  std::string note;   // how it was timed, or why it failed ("" when ok)
  bool ok = true;     // false: the kernel failed; ms/tflops/errors are NaN
};

struct Options {
  std::vector<std::string> precisions;     // empty: all_precisions()
  std::vector<int64_t> cpu_size = {1024, 1024, 1024};  // M, N, K
  std::vector<int64_t> emu_size = {128, 128, 128};     // the emulator is slow
  std::vector<int64_t> gpu_size = {8192, 8192, 8192};
  bool cpu = true, emu = true, cuda = true;  // cuda: only where gpu::probe() says usable
  uint64_t seed = 1;
  // B stored (N,K), C = A·Bᵀ: a linear layer's forward (its weight is (out, in)),
  // and the one layout in which fp8 tensor cores need no repacking (both
  // operands K-major; wgmma and cuBLASLt's fp8 accept no other).
  bool trans_b = false;
  int runs = 5;           // most timed runs (CPU and GPU; the emulator runs once)
  double budget_s = 1.0;  // stop timing a row after this much timed time (at least 2 runs)
};

// Checks the options: known precision names, three positive sizes each.
// Throws Error naming what is wrong.
void validate(const Options& options);

// Every row, CPU first, then emu, then cuda; `on_row` sees each as it is
// made (a live table). Throws Error on bad options; a GPU kernel that fails
// gives a row with ok = false and the failure in `note`.
std::vector<Row> run(const Options& options, const std::function<void(const Row&)>& on_row = {});

// {"precision": "bf16", "backend": "cpu", "kernel": "cpu", "M":.., "N":.., "K":..,
//  "ms":.., "tflops":.., "rel_frobenius":.., "max_ulps":.., "input_bytes":..,
//  "scaling": "none", "ok": true, "note": ""}; NaN figures are null.
nlohmann::json to_json(const Row& row);
// Throughput ratios from the cuda rows, for the targets: the best
// fp8 (e4m3) TFLOP/s over the best bf16, and the best bf16 over the best
// fp32 (CUDA cores), each with the two kernels; null when a side is missing.
// {"fp8_over_bf16": {"ratio": 1.9, "kernels": [fp8 id, bf16 id], "tflops": [fp8, bf16]},
//  "bf16_over_fp32": {...}}
nlohmann::json ratios(const std::vector<Row>& rows);

}  // namespace warpnet::device::precision
