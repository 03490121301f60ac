// The tracer's coalescing and bank-conflict figures for the access-pattern
// kernels, and the JSON summary. Compiled with warpnet_simt_traced.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "kernels/common/ptx.hpp"
#include "simt/trace.hpp"
#include "tests/simt/device_buffer.hpp"

namespace {
#include "kernels/examples/access_patterns.cu"
}  // namespace

namespace {

// in, out: (128) floats, one warp. Lane l copies in[4l .. 4l+3] to shared
// memory with one 16-byte cp.async, except the last lane, at a tile's edge:
// its copy reads two floats and zero-fills the other two.
__global__ void cp_async_edge(const float* in, float* out) {
  __shared__ __align__(16) float tile[128];
  const unsigned l = threadIdx.x;
  warpnet::ptx::cp_async_cg(&tile[4 * l], &in[4 * l], l == 31 ? 8 : 16);
  warpnet::ptx::cp_async_wait_all();
  __syncwarp();
  for (unsigned i = 0; i < 4; ++i) out[4 * l + i] = tile[4 * l + i];
}

// A block reduces its threads' values twice, each time with a shuffle
// butterfly per warp (5 shuffles), partials through shared memory behind a
// barrier, and a ballot; `rounds` more barriers pad the end. out: one sum a block.
__global__ void barriers_and_shuffles(float* out, int rounds) {
  __shared__ float partial[8];
  float v = float(threadIdx.x);
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 16; k > 0; k /= 2) v += __shfl_xor_sync(0xffffffffu, v, k);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
    __syncthreads();
  }
  if (__ballot_sync(0xffffffffu, v != 0.0f) != 0 && threadIdx.x == 0) out[blockIdx.x] = v;
  for (int i = 0; i < rounds; ++i) __syncthreads();
}

// Every thread adds 1 to a shared counter, and thread 0 its block's total to
// out: blockDim + 1 atomics a block.
__global__ void counts_atomics(int* out) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  atomicAdd(&count, 1);
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(out, count);
}

}  // namespace

using warpnet::simt::KernelTrace;
using warpnet::simt::Space;

namespace {

KernelTrace traced_launch_result() {
  const auto trace = warpnet::simt::last_trace();
  REQUIRE(trace.has_value());
  return *trace;
}

}  // namespace

TEST_CASE("trace: a coalesced float copy touches 4 sectors per warp load, stride 32 touches 32") {
  DeterministicScope deterministic;
  const int n = 256;
  DeviceBuffer<float> in(std::vector<float>(n * 32, 1.0f)), out(n);

  warpnet::simt::launch(copy_coalesced, dim3(n / 128), dim3(128), 0, in.get(), out.get(), n);
  KernelTrace trace = traced_launch_result();
  CHECK(trace.kernel == "copy_coalesced");
  auto load = trace.total(Space::global, false);
  CHECK(load.requests == n / 32);
  CHECK(load.sectors == 4 * load.requests);
  CHECK(load.ideal_sectors == load.sectors);
  CHECK(trace.total(Space::global, true).sectors == 4 * (n / 32));

  warpnet::simt::launch(copy_strided, dim3(n / 128), dim3(128), 0, in.get(), out.get(), n, 32);
  trace = traced_launch_result();
  load = trace.total(Space::global, false);
  CHECK(load.requests == n / 32);
  CHECK(load.sectors == 32 * load.requests);
  CHECK(load.ideal_sectors == 4 * load.requests);  // 128 useful bytes per request: 12.5% efficiency
  CHECK(trace.total(Space::global, true).sectors == 4 * (n / 32));
}

TEST_CASE("trace: a shared column read with stride 32 floats is a 32-way conflict, stride 33 none") {
  DeterministicScope deterministic;
  DeviceBuffer<float> out(32);

  warpnet::simt::launch(shared_column_read<32>, dim3(1), dim3(32), 0, out.get());
  auto load = traced_launch_result().total(Space::shared, false);
  CHECK(load.requests == 1);
  CHECK(load.wavefronts == 32);
  CHECK(load.ideal_wavefronts == 1);
  CHECK(out.download()[5] == 5.0f * 32);

  warpnet::simt::launch(shared_column_read<33>, dim3(1), dim3(32), 0, out.get());
  load = traced_launch_result().total(Space::shared, false);
  CHECK(load.requests == 1);
  CHECK(load.wavefronts == 1);
  CHECK(out.download()[5] == 5.0f * 33);
}

TEST_CASE("trace: the JSON summary carries efficiency, conflicts and per-lane samples") {
  DeterministicScope deterministic;
  DeviceBuffer<float> in(std::vector<float>(64 * 32, 1.0f)), out(64);
  warpnet::simt::launch(copy_strided, dim3(1), dim3(64), 0, in.get(), out.get(), 64, 32);
  const nlohmann::json j = traced_launch_result().to_json();
  CHECK(j["kernel"] == "copy_strided");
  CHECK(j["warps"] == 2);
  CHECK(j["global_load"]["sectors_per_request"] == 32.0);
  CHECK(j["global_load"]["efficiency"] == 0.125);
  CHECK(j["global_store"]["efficiency"] == 1.0);
  const auto& first = j["samples"][0];
  CHECK(first["kind"] == "load");
  CHECK(first["addresses"].size() == 32);
  CHECK(first["addresses"][1].get<uint64_t>() - first["addresses"][0].get<uint64_t>() == 128);
  CHECK(first["where"].get<std::string>().find("access_patterns.cu") != std::string::npos);
}

TEST_CASE("trace: the stats are gathered when blocks run on several workers too") {
  warpnet::simt::set_workers(2);
  const int n = 1024;
  DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(n);
  warpnet::simt::launch(copy_coalesced, dim3(n / 64), dim3(64), 0, in.get(), out.get(), n);
  warpnet::simt::set_workers(0);
  const auto load = traced_launch_result().total(Space::global, false);
  CHECK(load.requests == n / 32);
  CHECK(load.sectors == 4 * (n / 32));
}

TEST_CASE("trace: lanes that skip a memory instruction are counted as divergence") {
  DeterministicScope deterministic;
  // 40 of 64 threads in range: warp 0 has all 32 lanes active, warp 1 only 8.
  const int n = 40;
  DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(n);
  warpnet::simt::launch(copy_coalesced, dim3(1), dim3(64), 0, in.get(), out.get(), n);
  const KernelTrace trace = traced_launch_result();
  const auto load = trace.total(Space::global, false);
  CHECK(load.requests == 2);
  CHECK(load.active_lanes == 40);
  CHECK(load.inactive_lanes == 24);
  CHECK(trace.to_json()["divergence"] == doctest::Approx(48.0 / 128));  // loads and stores alike

  // A partial warp (block of 40 threads) has no lanes past its end to count.
  warpnet::simt::launch(copy_coalesced, dim3(1), dim3(40), 0, in.get(), out.get(), n);
  CHECK(traced_launch_result().total(Space::global, false).inactive_lanes == 0);
}

TEST_CASE("trace: a warp's cp.async copies are one global request and one shared store, an edge's included") {
  DeterministicScope deterministic;
  std::vector<float> values(128);
  for (int i = 0; i < 128; ++i) values[size_t(i)] = float(i + 1);
  DeviceBuffer<float> in(values), out(128);
  warpnet::simt::launch(cp_async_edge, dim3(1), dim3(32), 0, in.get(), out.get());
  const KernelTrace trace = traced_launch_result();
  const auto read = trace.total(Space::global, false);
  CHECK(read.requests == 1);  // the last lane's 8 bytes join the others' request
  CHECK(read.active_lanes == 32);
  CHECK(read.sectors == 16);
  const auto stored = trace.total(Space::shared, true);
  CHECK(stored.requests == 1);  // 16 bytes a lane: four quarter-warp passes, no conflict
  CHECK(stored.wavefronts == 4);
  CHECK(stored.ideal_wavefronts == 4);
  const std::vector<float> got = out.download();
  for (int i = 0; i < 128; ++i) CHECK(got[size_t(i)] == (i < 126 ? float(i + 1) : 0.0f));  // zero-filled past the edge
}

TEST_CASE("trace: a block's barriers and its warps' shuffles and votes are counted, per launch and merged") {
  DeterministicScope deterministic;
  DeviceBuffer<float> out(3);
  // 3 blocks of 4 warps: 4 + 1 barriers a block; 2 x 5 shuffles and a ballot a warp.
  warpnet::simt::launch(barriers_and_shuffles, dim3(3), dim3(128), 0, out.get(), 1);
  KernelTrace trace = traced_launch_result();
  CHECK(trace.blocks == 3);
  CHECK(trace.barriers == 3 * 5);
  CHECK(trace.warp_collectives == 12 * 11);
  const nlohmann::json j = trace.to_json();
  CHECK(j["barriers"] == 15);
  CHECK(j["warp_collectives"] == 132);
  // Another launch of the same kernel, added: every block counted once.
  warpnet::simt::launch(barriers_and_shuffles, dim3(2), dim3(64), 0, out.get(), 3);
  trace.add(traced_launch_result());
  CHECK(trace.blocks == 5);
  CHECK(trace.barriers == 15 + 2 * 7);
  CHECK(trace.warp_collectives == 132 + 4 * 11);
}

TEST_CASE("trace: each lane's atomic operation is counted, shared and global alike") {
  DeterministicScope deterministic;
  DeviceBuffer<int> out(std::vector<int>{0});
  warpnet::simt::launch(counts_atomics, dim3(3), dim3(96), 0, out.get());
  CHECK(out.download()[0] == 3 * 96);
  const KernelTrace trace = traced_launch_result();
  CHECK(trace.atomics == 3 * (96 + 1));
  CHECK(trace.to_json()["atomics"] == 3 * 97);
  // Atomics are not memory requests: the count of global stores is zero.
  CHECK(trace.total(Space::global, true).requests == 0);
}
