// Tensor-core instructions for the emulator: which matrix element each lane
// holds, and the warp-wide computations the rendezvous runs (tensor_cores.cpp).
//
// Layouts follow the PTX ISA (docs.nvidia.com/cuda/parallel-thread-execution,
// "Matrix Fragments for mma.m16n8k16 with floating point type", figures
// mma-16816-A/B/C for .f16/.bf16 with .f32 accumulators):
//   groupID = %laneid >> 2, threadID_in_group = %laneid % 4
//   A (16x16, .row): row = groupID for a0,a1,a4,a5, groupID + 8 otherwise;
//                    col = threadID_in_group*2 + (i & 1), + 8 for i >= 4
//   B (16x8, .col):  row = threadID_in_group*2 + (i & 1), + 8 for i >= 2; col = groupID
//   C/D (16x8):      row = groupID for c0,c1, groupID + 8 for c2,c3;
//                    col = threadID_in_group*2 + (i & 1)
// Two 16-bit elements share a 32-bit register, the lower index in the low half.
#pragma once
#include <cstdint>
#include <stdexcept>

#include "simt/cuda_types.hpp"

namespace warpnet::simt {

struct RowCol {
  int row, col;
};

// Element i (0..7) of a lane's A fragment: A is (16,16), (row, col) = (m, k).
constexpr RowCol mma_a_element(unsigned lane, int i) {
  const int group = int(lane >> 2), in_group = int(lane % 4);
  return {group + 8 * ((i >> 1) & 1), in_group * 2 + (i & 1) + 8 * (i >> 2)};
}
// Element i (0..3) of a lane's B fragment: B is (16,8), (row, col) = (k, n).
constexpr RowCol mma_b_element(unsigned lane, int i) {
  const int group = int(lane >> 2), in_group = int(lane % 4);
  return {in_group * 2 + (i & 1) + 8 * (i >> 1), group};
}
// Element i (0..3) of a lane's C/D fragment: C is (16,8), (row, col) = (m, n).
constexpr RowCol mma_c_element(unsigned lane, int i) {
  const int group = int(lane >> 2), in_group = int(lane % 4);
  return {group + 8 * (i >> 1), in_group * 2 + (i & 1)};
}

// m16n8k32 with 8-bit inputs (.e4m3; PTX ISA, "Matrix Fragments for
// mma.m16n8k32", the .u8/.s8/.e4m3/.e5m2 figures): four elements per register,
// the lowest index in the lowest byte.
//   A (16x32, .row): row = groupID for a0..a3, a8..a11, groupID + 8 otherwise;
//                    col = threadID_in_group*4 + (i & 3), + 16 for i >= 8
//   B (32x8, .col):  row = threadID_in_group*4 + (i & 3), + 16 for i >= 4; col = groupID
//   C/D: as for m16n8k16.
constexpr RowCol mma_a8_element(unsigned lane, int i) {
  const int group = int(lane >> 2), in_group = int(lane % 4);
  return {group + 8 * ((i >> 2) & 1), in_group * 4 + (i & 3) + 16 * (i >> 3)};
}
constexpr RowCol mma_b8_element(unsigned lane, int i) {
  const int group = int(lane >> 2), in_group = int(lane % 4);
  return {in_group * 4 + (i & 3) + 16 * (i >> 2), group};
}

// The element types tensor cores multiply, as 16-bit patterns.
enum class MmaInput : uint8_t { f16, bf16 };

// One lane's operands of mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.f32:
// a: 4 registers (a0..a7), b: 2 (b0..b3), c and d: 4 floats. d may alias c.
struct MmaLane {
  const uint32_t* a;
  const uint32_t* b;
  const float* c;
  float* d;
};
void mma_m16n8k16_f16(void* const* lanes);   // MmaLane* per lane
void mma_m16n8k16_bf16(void* const* lanes);
// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (sm_89+): the same
// MmaLane, a holding a0..a15 and b holding b0..b7 as fp8 e4m3 bytes.
void mma_m16n8k32_e4m3(void* const* lanes);

// One lane's operands of ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16:
// lanes 0..8N-1 each loaded one 16-byte row (matrix lane/8, row lane%8) into
// `row`; every lane receives N registers in `out`.
struct LdmatrixLane {
  uint4 row;  // one 16-byte value, so the kernel's load of it is one 16-byte access
  uint32_t* out;
};
template <int N, bool Trans>
void ldmatrix_m8n8(void* const* lanes);  // LdmatrixLane* per lane; instantiated for N = 1, 2, 4

// wmma m16n16k16 with an fp32 accumulator. warpnet's fragment layout (CUDA
// leaves it unspecified) is two mma.m16n8k16 side by side, as sm_80 does:
//   matrix_a x[0..7]: the A fragment above;
//   matrix_b x[0..3], x[4..7]: B fragments of columns 0..7 and 8..15;
//   accumulator x[0..3], x[4..7]: C fragments of columns 0..7 and 8..15.
// fp16 a/b fragments have 16 slots (CUDA's count, a Volta legacy): x[8+i] repeats x[i].
constexpr RowCol wmma_a_element(unsigned lane, int i) { return mma_a_element(lane, i & 7); }
constexpr RowCol wmma_b_element(unsigned lane, int i) {
  const RowCol e = mma_b_element(lane, i & 3);
  return {e.row, e.col + 8 * ((i >> 2) & 1)};
}
constexpr RowCol wmma_c_element(unsigned lane, int i) {
  const RowCol e = mma_c_element(lane, i & 3);
  return {e.row, e.col + 8 * ((i >> 2) & 1)};
}

// One lane's wmma::mma_sync operands: a and b as 16-bit patterns (8 used), c and d 8 floats.
struct WmmaLane {
  const uint16_t* a;
  const uint16_t* b;
  const float* c;
  float* d;
};
void wmma_m16n16k16_f16(void* const* lanes);  // WmmaLane* per lane
void wmma_m16n16k16_bf16(void* const* lanes);

// One lane's matrix in wmma::load/store_matrix_sync: .sync.aligned, so every
// lane of the warp must pass the same pointer and ldm (a pointer computed
// from the lane's index is undefined behaviour on a GPU).
struct WmmaMatrix {
  const void* p;
  unsigned ldm;
};
void wmma_same_matrix(void* const* lanes);  // WmmaMatrix* per lane: throws WarpOperandError when they differ

// Thrown by a warp-wide operation when its lanes' operands break its rules;
// the block adds the kernel, thread, instruction and line (Block::run_matrix_op).
struct WarpOperandError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace warpnet::simt
