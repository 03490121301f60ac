#include <optional>

#include "core/error.hpp"
#include "device/kernels/matmul/gemm_registration.hpp"
#include "device/kernels/workspace.hpp"

namespace {
#include "kernels/matmul/13_wgmma_tma.cu"  // its descriptor, accumulator map and encoder
#include "kernels/matmul/15_wgmma_fp8.cu"
}  // namespace

namespace warpnet::device::gemm {
namespace {


// How a problem reaches the kernel, which takes both operands K-major with a
// row pitch TMA accepts: which operands are packed K-major first
// (pack_k_major), and the row pitch of both K-major operands then.
struct Route {
  bool pack_a, pack_b;
  int pitch;  // K rounded up to 16: equal to K whenever an operand is used where it is stored
};
// A is read where it is stored when it is stored (M,K) and TMA can describe
// it (wgmma_fp8_v15::tma_describable: K % 16 == 0, 16-byte aligned); B when
// stored (N,K). Otherwise the operand is packed. A null pointer stands for
// the start of an allocation (aligned), for the formulas that have no buffers.
Route route(const Sizes& s, const void* A = nullptr, const void* B = nullptr) {
  using wgmma_fp8_v15::tma_describable;
  return Route{s[3] != 0 || !tma_describable(A, K(s)), s[4] == 0 || !tma_describable(B, K(s)),
               (K(s) + 15) / 16 * 16};
}
// A packed copy's bytes, rounded to 256 so that the second one starts aligned as the first.
size_t packed_bytes(int rows, int pitch) { return (size_t(rows) * pitch + 255) / 256 * 256; }

// dst (rows, pitch) K-major from src, stored (rows, K), or (K, rows) when transposed.
void pack(bool transposed, int rows, int K, int pitch, const uint8_t* src, uint8_t* dst) {
  const dim3 grid(ceil_div(pitch, 32), ceil_div(rows, 32)), block(32, 8);
  launch_kernel(transposed ? pack_k_major<true> : pack_k_major<false>, grid, block, 0, rows, K, rows, pitch, src,
                dst);  // rows unpadded: TMA zero-fills past them
  check_launch();
}

void launch_v15(const Sizes& s, const Launch& l, Buffers b) {
  const auto* A = static_cast<const uint8_t*>(b[0]);  // e4m3 bit patterns, moved as bytes
  const auto* B = static_cast<const uint8_t*>(b[1]);
  const Route r = route(s, A, B);
  const size_t a_bytes = r.pack_a ? packed_bytes(M(s), r.pitch) : 0;
  const size_t b_bytes = r.pack_b ? packed_bytes(N(s), r.pitch) : 0;
  // One workspace for both copies: on a GPU a registration file's workspaces share one buffer.
  std::optional<Workspace> work;
  if (a_bytes + b_bytes > 0) work.emplace(a_bytes + b_bytes);
  uint8_t* packed = work ? reinterpret_cast<uint8_t*>(work->floats()) : nullptr;
  const uint8_t* a = A;
  const uint8_t* bk = B;  // B, K-major
  if (r.pack_a) {
    pack(s[3] != 0, M(s), K(s), r.pitch, A, packed);
    a = packed;
  }
  if (r.pack_b) {
    pack(s[4] == 0, N(s), K(s), r.pitch, B, packed + a_bytes);
    bk = packed + a_bytes;
  }
  // Same stream: the kernel runs after the copies are written.
  WN_CHECK(wgmma_v13::encode_tiled(), "matmul/15_wgmma_fp8: the driver has no cuTensorMapEncodeTiled");
  WN_CHECK(wgmma_fp8_v15::launch(l.grid, M(s), N(s), K(s), r.pitch, a, bk, static_cast<float*>(b[2])),
           "matmul/15_wgmma_fp8: cuTensorMapEncodeTiled refused a map at M=", M(s), " N=", N(s), " K=", K(s),
           " pitch=", r.pitch, tensor_map_refusal());
  check_launch();
}

const Registration wgmma_fp8{Kernel{
    .op = "matmul",
    .version = 15,
    .name = "wgmma_fp8",
    // Inputs stored as fp8 e4m3 (relative error 2^-4 each against fp32); products exact.
    .precision = "fp8 e4m3 inputs, fp32 accumulators, ~14 bits inside a wgmma (sm_90a)",
    .shape_text = "block (384) = TMA producer + 2 consumer warpgroups, grid (ceil(N/128), ceil(M/128)): a 128x128 C "
                  "tile, wgmma m64n128k32 e4m3 per consumer, 7-stage mbarrier ring of 128-wide k-steps, 128B "
                  "swizzle, K-major operands; A when trans_a, B when not trans_b, and any operand TMA cannot read "
                  "in place (K off 16, or not 16-byte aligned) are first packed K-major (K padded to 16) by "
                  "pack_k_major, block (32, 8), inside the timed region; no fallback",
    .shape = [](const Sizes& s) {
      return Launch{tile_grid(s, 128, 128), dim3(wgmma_fp8_v15::THREADS), wgmma_fp8_v15::kSharedBytes};
    },
    .flops = flops,
    // 128x128 tiles of the 1-byte K-major operands (K padded to the pitch)
    // fetched once each by TMA (see tiled_bytes), plus each packing pass:
    // the operand read once, its copy written once.
    .bytes = [](const Sizes& s) {
      const Route r = route(s);
      Sizes padded = s;
      padded[2] = r.pitch;
      return tiled_bytes(padded, 128, 128, 1) + (r.pack_a ? double(M(s)) * (K(s) + r.pitch) : 0.0) +
             (r.pack_b ? double(N(s)) * (K(s) + r.pitch) : 0.0);
    },
    .launch = launch_v15,
    .copy = kThisCopy,
    .input_format = &simt::kE4M3,
    // Same instruction as cuBLASLt's fp8 on Hopper, which kept ~14 significand
    // bits inside one wgmma on an H200 (src/device/cuda/matmul_cublas.cu):
    // this kernel adds every wgmma into the one accumulator, never promoting
    // partial sums to a separate fp32 one (see the kernel's header).
    .accumulator_bits = 14,
}};

}  // namespace
}  // namespace warpnet::device::gemm
