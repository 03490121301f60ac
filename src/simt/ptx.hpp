// The PTX wrappers of kernels/common/ptx.hpp as the emulator runs them: the
// same names and signatures, CPU semantics. Included only under g++.
//   mma.sync (m16n8k16 f16/bf16, m16n8k32 e4m3) / ldmatrix: a warp rendezvous (WarpMatrixOp) with the PTX ISA's
//     lane-to-element layouts (tensor_cores.hpp says which, and where from).
//   ldmatrix: each address lane loads its own 16-byte row here, in the
//     kernel's code, so traced builds check and count those shared loads.
//   cp.async: queued per thread, made at the cp.async.wait_group that waits
//     for it (device.hpp, AsyncCopy).
#pragma once
#include <cstdint>
#include <cstring>

#include "simt/cuda_types.hpp"
#include "simt/copy_namespace.hpp"
#include "simt/device.hpp"
#include "simt/tensor_cores.hpp"

namespace warpnet::ptx {
inline namespace WARPNET_SIMT_COPY {

// d (16,8) = a (16,16) @ b (16,8) + c, fp16 inputs, fp32 accumulation.
inline void mma_m16n8k16_f16_f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], const float (&c)[4]) {
  simt::MmaLane lane{a, b, c, d};
  simt::warp_matrix_op({"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", &simt::mma_m16n8k16_f16, &lane});
}
// The same with bf16 inputs.
inline void mma_m16n8k16_bf16_f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], const float (&c)[4]) {
  simt::MmaLane lane{a, b, c, d};
  simt::warp_matrix_op({"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", &simt::mma_m16n8k16_bf16, &lane});
}

// d (16,8) = a (16,32) @ b (32,8) + c, fp8 e4m3 inputs (four per register), fp32 accumulation.
inline void mma_m16n8k32_e4m3_f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], const float (&c)[4]) {
  simt::MmaLane lane{a, b, c, d};
  simt::warp_matrix_op({"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", &simt::mma_m16n8k32_e4m3, &lane});
}

namespace detail {
template <int N, bool Trans>
constexpr const char* ldmatrix_name() {
  if constexpr (Trans) return N == 1 ? "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16"
                              : N == 2 ? "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"
                                       : "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16";
  else return N == 1 ? "ldmatrix.sync.aligned.m8n8.x1.shared.b16"
              : N == 2 ? "ldmatrix.sync.aligned.m8n8.x2.shared.b16"
                       : "ldmatrix.sync.aligned.m8n8.x4.shared.b16";
}
}  // namespace detail

// N 8x8 matrices of 16-bit elements from shared memory: lanes 0..8N-1 each
// give the address of one row (16 bytes, 16-byte aligned); r[m] is this
// lane's fragment of matrix m. Trans: the matrices arrive transposed.
template <int N, bool Trans = false>
inline void ldmatrix_m8n8(uint32_t (&r)[N], const void* row_address) {
  static_assert(N == 1 || N == 2 || N == 4, "ldmatrix loads 1, 2 or 4 matrices");
  constexpr const char* name = detail::ldmatrix_name<N, Trans>();
  simt::LdmatrixLane lane{{0, 0, 0, 0}, r};
  if (simt::lane_id() < 8u * N) {  // the other lanes' addresses are not used
    if (reinterpret_cast<uintptr_t>(row_address) % 16 != 0)
      simt::device_misuse(name, "a row address must be 16-byte aligned", row_address);
    lane.row = *static_cast<const uint4*>(row_address);  // one 16-byte shared load, as on the GPU
  }
  simt::warp_matrix_op({name, &simt::ldmatrix_m8n8<N, Trans>, &lane});
}

// cp.async.ca.shared.global (Bytes = 4, 8, 16): copy global -> shared without
// passing through registers; complete only after cp_async_wait<...>().
// src_bytes < Bytes reads only that many and zero-fills the rest (guards edges).
template <int Bytes>
inline void cp_async_ca(void* shared_dst, const void* global_src, unsigned src_bytes = Bytes) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async.ca copies 4, 8 or 16 bytes");
  simt::async_copy_issue("cp.async.ca.shared.global", shared_dst, global_src, Bytes, src_bytes);
}
// cp.async.cg.shared.global: 16 bytes, cached in L2 only (the same copy here).
inline void cp_async_cg(void* shared_dst, const void* global_src, unsigned src_bytes = 16) {
  simt::async_copy_issue("cp.async.cg.shared.global", shared_dst, global_src, 16, src_bytes);
}
// cp.async.commit_group: the copies issued since the last commit form a group.
inline void cp_async_commit() { simt::async_copy_commit(); }
// cp.async.wait_group Pending: wait until at most `Pending` of this thread's
// newest committed groups are still in flight. Other threads' copies need a
// __syncthreads() after their own wait, as on the GPU.
template <int Pending>
inline void cp_async_wait() {
  simt::AsyncCopy copy;
  while (simt::async_copy_next(unsigned(Pending), &copy)) {
    // One global read of the src-size bytes (none past a tile's edge, none
    // at all for 0), as on the GPU. The traced copy reports it at one place
    // per copy size, so a lane's copy at an edge joins the same request as
    // its neighbours' whole ones; the memcpy of a variable size is a library
    // call, which the instrumentation does not see.
    uint4 value{0, 0, 0, 0};
    if (copy.src_bytes) {
#if WARPNET_TRACED_COPY
      switch (copy.bytes) {
        case 4: simt::traced_read<4>(copy.src, copy.src_bytes); break;
        case 8: simt::traced_read<8>(copy.src, copy.src_bytes); break;
        default: simt::traced_read<16>(copy.src, copy.src_bytes); break;
      }
#endif
      std::memcpy(&value, copy.src, copy.src_bytes);
    }
    // One shared store of the copy's size, zero-filled past src-size: on the
    // GPU one write, not one per byte.
    switch (copy.bytes) {
      case 4: *static_cast<uint32_t*>(copy.dst) = value.x; break;
      case 8: *static_cast<uint2*>(copy.dst) = uint2{value.x, value.y}; break;
      default: *static_cast<uint4*>(copy.dst) = value; break;
    }
  }
}
// cp.async.wait_all: commit, then wait for everything.
inline void cp_async_wait_all() {
  cp_async_commit();
  cp_async_wait<0>();
}

}  // inline namespace WARPNET_SIMT_COPY
}  // namespace warpnet::ptx
