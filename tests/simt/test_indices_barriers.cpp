// Thread indices in 1-3-D launches and the block barrier family.
#include <doctest/doctest.h>

#include "tests/simt/device_buffer.hpp"

namespace {

// out: one row of 12 values per thread of the grid, at its global linear id.
__global__ void write_indices(unsigned* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned* row = out + 12 * (block * blockDim.x * blockDim.y * blockDim.z + thread);
  const unsigned values[12] = {threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z,
                               blockDim.x,  blockDim.y,  blockDim.z,  gridDim.x,  gridDim.y,  gridDim.z};
  for (int i = 0; i < 12; ++i) row[i] = values[i];
}

// out: (4, blockDim.x) per block: count, and, or of (t % 3 == 0), and of (t >= 0).
__global__ void barrier_votes(int* out) {
  const int t = threadIdx.x;
  int* row = out + blockIdx.x * 4 * blockDim.x;
  row[t] = __syncthreads_count(t % 3 == 0);
  row[blockDim.x + t] = __syncthreads_and(t % 3 == 0);
  row[2 * blockDim.x + t] = __syncthreads_or(t % 3 == 0);
  row[3 * blockDim.x + t] = __syncthreads_and(t >= 0);
}

// Every thread adds its predecessor's value after a barrier, `rounds` times:
// wrong unless every barrier really separates the phases.
__global__ void ring_shift(int* out, int rounds) {
  __shared__ int ring[1024];
  const int t = threadIdx.x, n = blockDim.x;
  ring[t] = t;
  for (int r = 0; r < rounds; ++r) {
    __syncthreads();
    const int left = ring[(t + n - 1) % n];
    __syncthreads();
    ring[t] = left;
  }
  out[t] = ring[t];
}

}  // namespace

TEST_CASE("threadIdx, blockIdx, blockDim, gridDim in a 3-D launch") {
  const dim3 grid(2, 3, 2), block(4, 2, 3);
  const unsigned threads = 2 * 3 * 2 * 4 * 2 * 3;
  DeviceBuffer<unsigned> out(12 * threads);
  warpnet::simt::launch(write_indices, grid, block, 0, out.get());
  const auto v = out.download();
  unsigned id = 0;
  for (unsigned bz = 0; bz < 2; ++bz)
    for (unsigned by = 0; by < 3; ++by)
      for (unsigned bx = 0; bx < 2; ++bx)
        for (unsigned tz = 0; tz < 3; ++tz)
          for (unsigned ty = 0; ty < 2; ++ty)
            for (unsigned tx = 0; tx < 4; ++tx, ++id) {
              const std::vector<unsigned> expect{tx, ty, tz, bx, by, bz, 4, 2, 3, 2, 3, 2};
              CHECK(std::vector<unsigned>(v.begin() + 12 * id, v.begin() + 12 * id + 12) == expect);
            }
}

TEST_CASE("__syncthreads_count, _and and _or over a 100-thread block") {
  DeviceBuffer<int> out(2 * 4 * 100);
  warpnet::simt::launch(barrier_votes, dim3(2), dim3(100), 0, out.get());
  const auto v = out.download();
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 100; ++t) {
      CHECK(v[b * 400 + t] == 34);  // 0, 3, ..., 99
      CHECK(v[b * 400 + 100 + t] == 0);
      CHECK(v[b * 400 + 200 + t] == 1);
      CHECK(v[b * 400 + 300 + t] == 1);
    }
}

TEST_CASE("__syncthreads separates phases in a 1024-thread block") {
  DeviceBuffer<int> out(1024);
  warpnet::simt::launch(ring_shift, dim3(1), dim3(1024), 0, out.get(), 5);
  const auto v = out.download();
  for (int t = 0; t < 1024; ++t) CHECK(v[t] == (t + 1024 - 5) % 1024);
}
