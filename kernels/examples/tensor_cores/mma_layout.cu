// Tensor-core fragments, lane by lane — the kernels behind tests/simt/test_tensor_cores.cpp.
//
// Idea: a warp-wide matrix instruction spreads a matrix over the 32 lanes in
//   a fixed pattern (the PTX ISA's "fragment layout"). These kernels expose
//   it: ldmatrix writes out what each lane received, and mma_fragments builds
//   each lane's registers by the ISA's formulas, written out in its own words,
//   so a wrong layout in the emulator gives a wrong product.
// Changed: first version.
// Measured: not measured on a GPU yet (layout checks, not performance).
// Run: build/bin/test_simt -tc="tensor cores*"; nvcc -arch=sm_90 -c kernels/examples/tensor_cores/mma_layout.cu -I. -Isrc
#include "kernels/common/ptx.hpp"

// src: (8N, 8) 16-bit values, matrix m = rows 8m..8m+7; out: (32, N), lane l's register m.
// Launch: one warp.
template <int N, bool Trans>
__global__ void ldmatrix_lanes(const unsigned short* src, unsigned* out) {
  __shared__ __align__(16) unsigned short tile[32][8];  // up to 4 matrices of 8 rows, 16 bytes each
  const int lane = threadIdx.x;
  for (int i = lane; i < 8 * N * 8; i += 32) tile[i / 8][i % 8] = src[i];
  __syncwarp();
  uint32_t r[N];
  warpnet::ptx::ldmatrix_m8n8<N, Trans>(r, &tile[lane % (8 * N)][0]);  // lanes past 8N repeat valid rows
  for (int m = 0; m < N; ++m) out[lane * N + m] = r[m];
}

// Two 16-bit patterns in one register, the lower-numbered element in the low half.
__device__ __forceinline__ uint32_t pack(unsigned short lo, unsigned short hi) { return uint32_t(lo) | uint32_t(hi) << 16; }

// A: (16,16) row-major, B: (16,8) row-major (k,n), C, D: (16,8) row-major; 16-bit inputs as bit patterns.
// Launch: one warp. Bf16: the inputs are bf16, else fp16.
template <bool Bf16>
__global__ void mma_fragments(const unsigned short* A, const unsigned short* B, const float* C, float* D) {
  const int lane = threadIdx.x;
  const int groupID = lane >> 2, threadID_in_group = lane % 4;
  unsigned short a[8], b[4];
  float c[4];
  for (int i = 0; i < 8; ++i) {  // "row = groupID for ai where 0 <= i < 2 || 4 <= i < 6, groupID + 8 otherwise"
    const int row = ((0 <= i && i < 2) || (4 <= i && i < 6)) ? groupID : groupID + 8;
    const int col = i < 4 ? threadID_in_group * 2 + (i & 0x1) : threadID_in_group * 2 + (i & 0x1) + 8;
    a[i] = A[row * 16 + col];
  }
  for (int i = 0; i < 4; ++i) {  // B: "row = threadID_in_group*2 + (i & 0x1) for bi where i < 2, + 8 for i >= 2; col = groupID"
    const int row = i < 2 ? threadID_in_group * 2 + (i & 0x1) : threadID_in_group * 2 + (i & 0x1) + 8;
    b[i] = B[row * 8 + groupID];
  }
  for (int i = 0; i < 4; ++i) {  // C/D: "row = groupID for ci where i < 2, groupID + 8 for i >= 2; col = threadID_in_group*2 + (i & 0x1)"
    const int row = i < 2 ? groupID : groupID + 8;
    c[i] = C[row * 8 + threadID_in_group * 2 + (i & 0x1)];
  }
  const uint32_t ra[4] = {pack(a[0], a[1]), pack(a[2], a[3]), pack(a[4], a[5]), pack(a[6], a[7])};
  const uint32_t rb[2] = {pack(b[0], b[1]), pack(b[2], b[3])};
  float d[4];
  if (Bf16)
    warpnet::ptx::mma_m16n8k16_bf16_f32(d, ra, rb, c);
  else
    warpnet::ptx::mma_m16n8k16_f16_f32(d, ra, rb, c);
  for (int i = 0; i < 4; ++i) {
    const int row = i < 2 ? groupID : groupID + 8;
    D[row * 8 + threadID_in_group * 2 + (i & 0x1)] = d[i];
  }
}
