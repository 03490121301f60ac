// Access patterns — the smallest kernels that show coalescing and bank
// conflicts; lesson 03 traces them and the emulator's tests pin the numbers.
//
// Idea: a warp's 32 loads are served in 32-byte sectors (global) and in
//   passes over 32 four-byte banks (shared). Consecutive lanes reading
//   consecutive floats need 4 sectors; a stride of 32 floats needs 32. Lanes
//   reading a column of a 32-float-wide shared array all hit one bank (32
//   passes); padding each row to 33 floats spreads them over all 32 banks.
//   `out[i] += in[i]` is two loads and a store: a read-modify-write costs its
//   sectors twice.
// Changed: first version; accumulate added (the tracer counts a `+=`'s store).
// Measured: not yet measured on a GPU (the emulator's trace: 4 vs 32 sectors
//   per request, 32-way vs 1-way conflicts).
// Run: build/bin/test_simt -tc="trace*"
#include "kernels/common/cuda_compat.hpp"

// in, out: (n,) floats. Thread i copies element i: lanes read consecutive words.
__global__ void copy_coalesced(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// in, out: (n,) floats. out[i] += in[i]: loads of in[i] and out[i], then a store of out[i].
__global__ void accumulate(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += in[i];
}

// in: (n * stride,) floats, out: (n,). Thread i reads element i * stride: with
// stride 32 every lane of a warp touches its own 128-byte line.
__global__ void copy_strided(const float* __restrict__ in, float* __restrict__ out, int n, int stride) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i * stride];
}

// One warp; out: (32,) floats. Lane l fills row l of a 32 x WIDTH shared array,
// then reads its first element: together the lanes read column 0, WIDTH floats
// apart. WIDTH 32 puts all 32 in one bank (32-way conflict); WIDTH 33 in 32 banks.
template <int WIDTH>
__global__ void shared_column_read(float* __restrict__ out) {
  __shared__ float tile[32][WIDTH];
  const int lane = threadIdx.x;
  for (int c = 0; c < WIDTH; ++c) tile[lane][c] = float(lane * WIDTH + c);
  __syncwarp();
  out[lane] = tile[lane][0];
}
