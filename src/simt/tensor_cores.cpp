// The warp-wide half of the tensor-core instructions: once all 32 lanes have
// parked, gather the matrices from every lane's fragments, compute, scatter.
// Runs on the scheduler, in the library: reading other lanes' registers (their
// stacks) is invisible to the tracer, as register traffic is on a GPU.
#include "simt/tensor_cores.hpp"

#include <cstring>

#include "core/error.hpp"
#include "simt/minifloat.hpp"

namespace warpnet::simt {
namespace {

// Products of fp16/bf16 values are exact in double; the 16-term sum plus c is
// rounded once to float. GPUs differ in the last bits (their adders truncate,
// in an order NVIDIA does not document): tests compare with a tolerance.
float decode16(MmaInput type, uint16_t bits) { return decode(type == MmaInput::f16 ? kHalf : kBfloat16, bits); }

uint16_t half_of(uint32_t reg, int i) { return uint16_t(i & 1 ? reg >> 16 : reg & 0xffffu); }

template <MmaInput type>
void mma_m16n8k16(void* const* lanes) {
  float a[16][16], b[16][8], c[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    const MmaLane& lane = *static_cast<const MmaLane*>(lanes[l]);
    for (int i = 0; i < 8; ++i) {
      const RowCol e = mma_a_element(l, i);
      a[e.row][e.col] = decode16(type, half_of(lane.a[i / 2], i));
    }
    for (int i = 0; i < 4; ++i) {
      const RowCol eb = mma_b_element(l, i), ec = mma_c_element(l, i);
      b[eb.row][eb.col] = decode16(type, half_of(lane.b[i / 2], i));
      c[ec.row][ec.col] = lane.c[i];
    }
  }
  for (unsigned l = 0; l < 32; ++l) {
    const MmaLane& lane = *static_cast<const MmaLane*>(lanes[l]);
    for (int i = 0; i < 4; ++i) {
      const RowCol e = mma_c_element(l, i);
      double sum = c[e.row][e.col];
      for (int k = 0; k < 16; ++k) sum += double(a[e.row][k]) * double(b[k][e.col]);
      lane.d[i] = float(sum);  // c was read in full above, so d may alias it
    }
  }
}

// e4m3 products are exact in double (4-bit significands), like fp16's.
void mma_m16n8k32_e4m3_impl(void* const* lanes) {
  float a[16][32], b[32][8], c[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    const MmaLane& lane = *static_cast<const MmaLane*>(lanes[l]);
    for (int i = 0; i < 16; ++i) {
      const RowCol e = mma_a8_element(l, i);
      a[e.row][e.col] = decode(kE4M3, (lane.a[i / 4] >> (8 * (i % 4))) & 0xffu);
    }
    for (int i = 0; i < 8; ++i) {
      const RowCol e = mma_b8_element(l, i);
      b[e.row][e.col] = decode(kE4M3, (lane.b[i / 4] >> (8 * (i % 4))) & 0xffu);
    }
    for (int i = 0; i < 4; ++i) {
      const RowCol e = mma_c_element(l, i);
      c[e.row][e.col] = lane.c[i];
    }
  }
  for (unsigned l = 0; l < 32; ++l) {
    const MmaLane& lane = *static_cast<const MmaLane*>(lanes[l]);
    for (int i = 0; i < 4; ++i) {
      const RowCol e = mma_c_element(l, i);
      double sum = c[e.row][e.col];
      for (int k = 0; k < 32; ++k) sum += double(a[e.row][k]) * double(b[k][e.col]);
      lane.d[i] = float(sum);
    }
  }
}

template <MmaInput type>
void wmma_m16n16k16(void* const* lanes) {
  float a[16][16], b[16][16], c[16][16];
  for (unsigned l = 0; l < 32; ++l) {
    const WmmaLane& lane = *static_cast<const WmmaLane*>(lanes[l]);
    for (int i = 0; i < 8; ++i) {
      const RowCol ea = wmma_a_element(l, i), eb = wmma_b_element(l, i), ec = wmma_c_element(l, i);
      a[ea.row][ea.col] = decode16(type, lane.a[i]);
      b[eb.row][eb.col] = decode16(type, lane.b[i]);
      c[ec.row][ec.col] = lane.c[i];
    }
  }
  for (unsigned l = 0; l < 32; ++l) {
    const WmmaLane& lane = *static_cast<const WmmaLane*>(lanes[l]);
    for (int i = 0; i < 8; ++i) {
      const RowCol e = wmma_c_element(l, i);
      double sum = c[e.row][e.col];
      for (int k = 0; k < 16; ++k) sum += double(a[e.row][k]) * double(b[k][e.col]);
      lane.d[i] = float(sum);
    }
  }
}

}  // namespace

void mma_m16n8k16_f16(void* const* lanes) { mma_m16n8k16<MmaInput::f16>(lanes); }
void mma_m16n8k16_bf16(void* const* lanes) { mma_m16n8k16<MmaInput::bf16>(lanes); }
void mma_m16n8k32_e4m3(void* const* lanes) { mma_m16n8k32_e4m3_impl(lanes); }
void wmma_m16n16k16_f16(void* const* lanes) { wmma_m16n16k16<MmaInput::f16>(lanes); }
void wmma_m16n16k16_bf16(void* const* lanes) { wmma_m16n16k16<MmaInput::bf16>(lanes); }

void wmma_same_matrix(void* const* lanes) {
  const auto& first = *static_cast<const WmmaMatrix*>(lanes[0]);
  for (unsigned l = 1; l < 32; ++l) {
    const auto& m = *static_cast<const WmmaMatrix*>(lanes[l]);
    if (m.p == first.p && m.ldm == first.ldm) continue;
    throw WarpOperandError(cat("lane ", l, " passes the matrix at ", m.p, " with ldm ", m.ldm, ", lane 0 at ", first.p,
                               " with ldm ", first.ldm, " (.sync.aligned: every lane of the warp passes the same "
                               "pointer and ldm, the warp's one matrix)"));
  }
}

// PTX ISA, ldmatrix: the rows of matrix m come from lanes 8m..8m+7 (row r from
// lane 8m+r); a group of four consecutive lanes receives one row: lane l gets
// row l/4, elements 2(l%4) and 2(l%4)+1. With .trans each lane gets the same
// position of the transposed matrix: elements (2(l%4), l/4) and (2(l%4)+1, l/4).
template <int N, bool Trans>
void ldmatrix_m8n8(void* const* lanes) {
  uint16_t m[4][8][8];  // [matrix][row][col] as stored in shared memory
  for (int matrix = 0; matrix < N; ++matrix)
    for (int r = 0; r < 8; ++r)
      std::memcpy(m[matrix][r], &static_cast<const LdmatrixLane*>(lanes[8 * matrix + r])->row, 16);
  for (unsigned l = 0; l < 32; ++l) {
    const LdmatrixLane& lane = *static_cast<const LdmatrixLane*>(lanes[l]);
    const int r = int(l / 4), c = int(l % 4) * 2;
    for (int matrix = 0; matrix < N; ++matrix) {
      const uint16_t lo = Trans ? m[matrix][c][r] : m[matrix][r][c];
      const uint16_t hi = Trans ? m[matrix][c + 1][r] : m[matrix][r][c + 1];
      lane.out[matrix] = uint32_t(lo) | uint32_t(hi) << 16;
    }
  }
}

template void ldmatrix_m8n8<1, false>(void* const*);
template void ldmatrix_m8n8<2, false>(void* const*);
template void ldmatrix_m8n8<4, false>(void* const*);
template void ldmatrix_m8n8<1, true>(void* const*);
template void ldmatrix_m8n8<2, true>(void* const*);
template void ldmatrix_m8n8<4, true>(void* const*);

}  // namespace warpnet::simt
