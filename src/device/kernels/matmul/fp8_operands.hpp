// How a problem reaches the fp8 wgmma versions (15, 18), whose kernels take
// both operands K-major (8-bit wgmma has no transpose) with a row pitch TMA
// accepts: which operands are first packed K-major (pack_k_major) into a
// device workspace, and the row pitch of both K-major operands then.
// Included by their registrations after kernels/matmul/15_wgmma_fp8.cu.
#pragma once
#include <optional>

#include "device/kernels/matmul/gemm_registration.hpp"
#include "device/kernels/workspace.hpp"

namespace warpnet::device::gemm {
namespace {

struct Fp8Route {
  bool pack_a, pack_b;
  int pitch;  // K rounded up to 16: equal to K whenever an operand is used where it is stored
};
// A is read where it is stored when it is stored (M,K) and TMA can describe
// it (wgmma_fp8_v15::tma_describable: K % 16 == 0, 16-byte aligned); B when
// stored (N,K). Otherwise the operand is packed. A null pointer stands for
// the start of an allocation (aligned), for the formulas that have no buffers.
inline Fp8Route fp8_route(const Sizes& s, const void* A = nullptr, const void* B = nullptr) {
  using wgmma_fp8_v15::tma_describable;
  return Fp8Route{s[3] != 0 || !tma_describable(A, K(s)), s[4] == 0 || !tma_describable(B, K(s)),
                  (K(s) + 15) / 16 * 16};
}

// A packed copy's bytes, rounded to 256 so that the second one starts aligned as the first.
inline size_t fp8_packed_bytes(int rows, int pitch) { return (size_t(rows) * pitch + 255) / 256 * 256; }

// Global bytes of a version with BM x BN tiles: the tiles of the K-major
// operands (K padded to the pitch) fetched once each by TMA (see
// tiled_bytes), plus each packing pass: the operand read once, its copy
// written once.
inline double fp8_bytes(const Sizes& s, int bm, int bn) {
  const Fp8Route r = fp8_route(s);
  Sizes padded = s;
  padded[2] = r.pitch;
  return tiled_bytes(padded, bm, bn, 1) + (r.pack_a ? double(M(s)) * (K(s) + r.pitch) : 0.0) +
         (r.pack_b ? double(N(s)) * (K(s) + r.pitch) : 0.0);
}

// dst (rows, pitch) K-major from src, stored (rows, K), or (K, rows) when transposed.
inline void fp8_pack(bool transposed, int rows, int K, int pitch, const uint8_t* src, uint8_t* dst) {
  const dim3 grid(ceil_div(pitch, 32), ceil_div(rows, 32)), block(32, 8);
  launch_kernel(transposed ? pack_k_major<true> : pack_k_major<false>, grid, block, 0, rows, K, rows, pitch, src,
                dst);  // rows unpadded: TMA zero-fills past them
  check_launch();
}

// Packs what the route says and calls run(a, b, pitch) with both operands
// K-major (e4m3 bit patterns, moved as bytes), on the same stream, so the
// kernel runs after the copies are written.
template <class Run>
void with_k_major_operands(const Sizes& s, Buffers b, Run run) {
  const auto* A = static_cast<const uint8_t*>(b[0]);
  const auto* B = static_cast<const uint8_t*>(b[1]);
  const Fp8Route r = fp8_route(s, A, B);
  const size_t a_bytes = r.pack_a ? fp8_packed_bytes(M(s), r.pitch) : 0;
  const size_t b_bytes = r.pack_b ? fp8_packed_bytes(N(s), r.pitch) : 0;
  // One workspace (slot 0) for both copies; stream-K takes slot 1 (workspace.hpp).
  std::optional<Workspace> work;
  if (a_bytes + b_bytes > 0) work.emplace(a_bytes + b_bytes);
  uint8_t* packed = work ? reinterpret_cast<uint8_t*>(work->floats()) : nullptr;
  const uint8_t* a = A;
  const uint8_t* bk = B;  // B, K-major
  if (r.pack_a) {
    fp8_pack(s[3] != 0, M(s), K(s), r.pitch, A, packed);
    a = packed;
  }
  if (r.pack_b) {
    fp8_pack(s[4] == 0, N(s), K(s), r.pitch, B, packed + a_bytes);
    bk = packed + a_bytes;
  }
  run(a, bk, r.pitch);
}

}  // namespace
}  // namespace warpnet::device::gemm
