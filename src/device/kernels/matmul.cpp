// The matmul kernels (kernels/matmul/*.cu), one registration each. This file
// is compiled twice: plainly, and traced (WARPNET_TRACED_COPY=1) for `warpnet
// trace`. The kernels sit in an anonymous namespace so the two copies stay
// apart at link time (a template instance would otherwise be merged).
#include "device/registry.hpp"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/wmma.hpp"

namespace {
#include "kernels/matmul/01_naive.cu"
#include "kernels/matmul/02_smem_tiled.cu"
#include "kernels/matmul/03_wmma.cu"
}  // namespace

namespace warpnet::device {
namespace {

// sizes {M, N, K}; buffers A (M,K), B (K,N), C (M,N).
int M(const Sizes& s) { return int(s[0]); }
int N(const Sizes& s) { return int(s[1]); }
int K(const Sizes& s) { return int(s[2]); }
const float* in(Buffers b, int i) { return static_cast<const float*>(b[i]); }
float* out(Buffers b) { return static_cast<float*>(b[2]); }

double matmul_flops(const Sizes& s) { return 2.0 * double(M(s)) * N(s) * K(s); }

// Global bytes of a kernel that stages tile x tile blocks of A and B in shared
// memory: A is read once per column of C tiles, B once per row of C tiles, C
// written once. Loads past the edges are skipped, so off tile multiples this
// is an upper bound.
double tiled_bytes(const Sizes& s, int tile) {
  return 4.0 * (double(M(s)) * K(s) * ceil_div(N(s), tile) + double(K(s)) * N(s) * ceil_div(M(s), tile) +
                double(M(s)) * N(s));
}

// One thread per C element on a 16x16 block, the grid covering C.
Launch one_thread_per_output(const Sizes& s) {
  return {dim3(ceil_div(N(s), 16), ceil_div(M(s), 16)), dim3(16, 16), 0};
}

const Registration naive{Kernel{
    .op = "matmul",
    .version = 1,
    .name = "naive",
    .precision = "fp32",
    .shape_text = "block (16,16), grid (ceil(N/16), ceil(M/16)): one thread per C element",
    .shape = one_thread_per_output,
    .flops = matmul_flops,
    // Every thread reads a row of A and a column of B: 2·M·N·K floats, no reuse.
    .bytes = [](const Sizes& s) { return 4.0 * (2.0 * M(s) * N(s) * K(s) + double(M(s)) * N(s)); },
    .emulator = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(sgemm_naive, l.grid, l.block, l.dynamic_shared, M(s), N(s), K(s), in(b, 0), in(b, 1), out(b));
    },
    .traced = WARPNET_TRACED_COPY,
}};

const Registration smem_tiled{Kernel{
    .op = "matmul",
    .version = 2,
    .name = "smem_tiled",
    .precision = "fp32",
    .shape_text = "block (16,16), grid (ceil(N/16), ceil(M/16)): 16x16 tiles of A and B in shared memory",
    .shape = one_thread_per_output,
    .flops = matmul_flops,
    // 16x fewer reads than v1 (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 16); },
    .emulator = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(sgemm_smem_tiled<16>, l.grid, l.block, l.dynamic_shared, M(s), N(s), K(s), in(b, 0), in(b, 1),
                    out(b));
    },
    .traced = WARPNET_TRACED_COPY,
}};

const Registration wmma_fp16{Kernel{
    .op = "matmul",
    .version = 3,
    .name = "wmma",
    // fp32 inputs are rounded to fp16 on the way into shared memory (relative error 2^-11 each).
    .precision = "fp16 inputs, fp32 accumulation (tensor cores)",
    .shape_text = "block (128) = 4 warps, grid (ceil(N/32), ceil(M/32)): a 32x32 C tile, one wmma 16x16x16 per warp per k-step",
    .shape = [](const Sizes& s) { return Launch{dim3(ceil_div(N(s), 32), ceil_div(M(s), 32)), dim3(128), 0}; },
    .flops = matmul_flops,
    // Like v2 with 32-wide tiles (see tiled_bytes).
    .bytes = [](const Sizes& s) { return tiled_bytes(s, 32); },
    .emulator = true,
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(sgemm_wmma<__half>, l.grid, l.block, l.dynamic_shared, M(s), N(s), K(s), in(b, 0), in(b, 1),
                    out(b));
    },
    .traced = WARPNET_TRACED_COPY,
    .input_format = &simt::kHalf,
}};

}  // namespace
}  // namespace warpnet::device
