// The traced build's checks: out-of-bounds global and shared accesses, races,
// uninitialized shared reads — each named with kernel, block, thread, address
// and source line. Compiled with warpnet_simt_traced (see src/simt/CMakeLists.txt).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tests/simt/device_buffer.hpp"

// Wrapped so these traced copies never clash with the untraced copies of the
// same kernels in other test files.
namespace {
#include "kernels/examples/bugs/missing_syncthreads.cu"
#include "kernels/examples/bugs/off_by_one.cu"
#include "kernels/examples/bugs/sum_across_blocks.cu"
#include "kernels/examples/bugs/uninitialized_shared.cu"
#include "kernels/matmul/03_smem_tiled.cu"
}  // namespace

using warpnet::simt::LaunchError;

namespace {

// The message of the LaunchError the launch throws, with its code checked.
template <class... P, class... A>
std::string launch_error(cudaError_t expected, void (*kernel)(P...), dim3 grid, dim3 block, A... args) {
  try {
    warpnet::simt::launch(kernel, grid, block, 0, args...);
  } catch (const LaunchError& e) {
    CHECK(e.code() == expected);
    return e.what();
  }
  FAIL("the launch reported nothing");
  return "";
}

}  // namespace

TEST_CASE("traced: an off-by-one bounds check is an out-of-bounds global read") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(std::vector<float>(100, 1.0f));
  const std::string message =
      launch_error(cudaErrorIllegalAddress, scale_off_by_one, dim3(1), dim3(128), x.get(), 100, 2.0f);
  INFO(message);
  CHECK(message.starts_with("kernel scale_off_by_one, block (0,0,0), thread (100,0,0): out-of-bounds global-memory "
                            "read of 4 bytes at 0x"));
  CHECK(message.find("0 bytes past the end of a 400-byte allocation") != std::string::npos);
  CHECK(message.find("off_by_one.cu:15") != std::string::npos);  // the source line, from the traced copy's -g
}

namespace {

__global__ void read_at(const float* x, int index, float* out) { out[0] = x[index]; }

}  // namespace

TEST_CASE("traced: a read well past a buffer is out of bounds, not a read of the next buffer") {
  // Two 4 KiB buffers allocated one after the other: without a gap after the
  // first, 300 bytes past its end could be the second's.
  DeterministicScope deterministic;
  DeviceBuffer<float> x(std::vector<float>(1024, 1.0f)), next(std::vector<float>(1024, 2.0f)), out(1);
  const std::string message =
      launch_error(cudaErrorIllegalAddress, read_at, dim3(1), dim3(1), x.get(), 1024 + 75, out.get());
  INFO(message);
  CHECK(message.find("out-of-bounds global-memory read of 4 bytes") != std::string::npos);
  CHECK(message.find("300 bytes past the end of a 4096-byte allocation") != std::string::npos);
}

namespace {
__global__ void read_dynamic(float* out) { out[threadIdx.x] = warpnet::dynamic_shared<float>()[threadIdx.x]; }
}  // namespace

TEST_CASE("traced: a bad address is named for what it is: a null pointer, freed memory, no allocation at all") {
  DeterministicScope deterministic;
  DeviceBuffer<float> out(1);
  std::string message = launch_error(cudaErrorIllegalAddress, read_at, dim3(1), dim3(1),
                                     static_cast<const float*>(nullptr), 3, out.get());
  INFO(message);
  CHECK(message.find("read of 4 bytes at 0xc at ") != std::string::npos);
  CHECK(message.ends_with(": a null pointer (the address is 12, where nothing is ever mapped)"));
  float* freed = nullptr;
  REQUIRE(cudaMalloc(&freed, 256 * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaFree(freed) == cudaSuccess);
  message = launch_error(cudaErrorIllegalAddress, read_at, dim3(1), dim3(1), static_cast<const float*>(freed), 10,
                         out.get());
  CHECK(message.find("inside a 1024-byte allocation at 0x") != std::string::npos);
  CHECK(message.ends_with(" that cudaFree has released: a use after free"));
  // An address far from every allocation: 64 TiB, below where Linux puts a
  // program, its heap and its mappings (an index 64 MiB past a buffer once
  // landed in an allocation an earlier test had freed, and read as a use
  // after free).
  message = launch_error(cudaErrorIllegalAddress, read_at, dim3(1), dim3(1),
                         reinterpret_cast<const float*>(uintptr_t(1) << 46), 0, out.get());
  CHECK(message.find(": in no device allocation, nor near one (the nearest, ") != std::string::npos);
  CHECK(message.ends_with("a host pointer, one never set, or an index far out of range"));
  // Dynamic shared memory the launch did not size.
  message = launch_error(cudaErrorIllegalAddress, read_dynamic, dim3(1), dim3(32), out.get());
  CHECK(message.find("out-of-bounds shared-memory read of 4 bytes") != std::string::npos);
  CHECK(message.find("of the dynamic shared memory (extern __shared__, dynamic_shared<T>()), but the launch gave it 0 "
                     "bytes: the third <<<grid, block, bytes>>> argument sizes it") != std::string::npos);
}

namespace {

// Every thread adds its element to one total with a plain += (the atomicAdd
// forgotten): a GPU loses updates; one thread at a time here, it would not.
__global__ void sum_without_atomic(const float* x, float* total, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) *total += x[i];
}

// The same with atomicAdd, and a block's total written by one thread after
// a barrier: no race.
__global__ void sum_with_atomic(const float* x, float* total, float* first, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, x[i]);
  if (threadIdx.x == 1) first[blockIdx.x] = x[blockIdx.x * blockDim.x];
  __syncthreads();
  if (threadIdx.x == 0) first[blockIdx.x] += 1.0f;
}

}  // namespace

TEST_CASE("traced: threads of a block updating one global value without an atomic is a race") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(std::vector<float>(64, 1.0f)), total(std::vector<float>{0.0f}), first(2);
  const std::string message =
      launch_error(cudaErrorLaunchFailure, sum_without_atomic, dim3(2), dim3(32), x.get(), total.get(), 64);
  INFO(message);
  CHECK(message.starts_with("kernel sum_without_atomic, block (0,0,0), thread (1,0,0): global-memory race on byte 0 "
                            "of a 4-byte allocation"));
  CHECK(message.find("this thread reads it at ") != std::string::npos);
  CHECK(message.find("and thread (0,0,0) wrote it at ") != std::string::npos);
  CHECK(message.find("needs an atomic") != std::string::npos);
  total.upload({0.0f});
  REQUIRE_NOTHROW(warpnet::simt::launch(sum_with_atomic, dim3(2), dim3(32), 0, x.get(), total.get(), first.get(), 64));
  CHECK(total.download()[0] == 64.0f);
  CHECK(first.download() == std::vector<float>{2.0f, 2.0f});
}

namespace {

// Each thread moves its right neighbour's value into its own slot in place:
// thread i reads x[i + 1] before thread i + 1 overwrites it only because
// threads run in order here; on a GPU either may come first.
__global__ void shift_left_in_place(float* x, int n) {
  const int i = threadIdx.x;
  if (i + 1 < n) x[i] = x[i + 1];
}

// The same, correct: every read before a barrier, every write after it.
__global__ void shift_left_with_barrier(float* x, int n) {
  const int i = threadIdx.x;
  const float right = i + 1 < n ? x[i + 1] : 0.0f;
  __syncthreads();
  if (i + 1 < n) x[i] = right;
}

// The last thread reads the total the others are still adding to.
__global__ void read_total_while_adding(const float* x, float* total, float* out) {
  atomicAdd(total, x[threadIdx.x]);
  if (threadIdx.x == blockDim.x - 1) *out = *total;
}

// Thread 0 clears the counter the others increment, with no barrier between.
__global__ void clear_while_counting(unsigned* count) {
  if (threadIdx.x == 0) *count = 0;
  atomicAdd(count, 1u);
}

// The largest element by compare-and-swap on the float's bits, the
// Programming Guide's loop. VolatileGuess false reads the first guess with
// a plain load, which races with the other threads' atomicCAS. (Not `c ?
// volatile_lvalue : plain_lvalue`: that reads through a volatile lvalue either way.)
template <bool VolatileGuess>
__global__ void max_by_cas(const float* x, float* m) {
  auto* word = reinterpret_cast<int*>(m);
  int old, assumed;
  if constexpr (VolatileGuess) old = *reinterpret_cast<volatile int*>(word);
  else old = *word;
  do {
    assumed = old;
    old = atomicCAS(word, assumed, __float_as_int(fmaxf(x[threadIdx.x], __int_as_float(assumed))));
  } while (assumed != old);
}

// Bytes of one word, each read and written by its own thread: no race.
__global__ void increment_bytes(unsigned char* b) { b[threadIdx.x] = static_cast<unsigned char>(b[threadIdx.x] + 1); }

}  // namespace

TEST_CASE("traced: a thread overwriting a global value another thread of the block read is a race") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const std::string message = launch_error(cudaErrorLaunchFailure, shift_left_in_place, dim3(1), dim3(10), x.get(), 10);
  INFO(message);
  CHECK(message.starts_with("kernel shift_left_in_place, block (0,0,0), thread (1,0,0): global-memory race on byte 4 "
                            "of a 40-byte allocation"));
  CHECK(message.find("this thread writes it at ") != std::string::npos);
  CHECK(message.find("and thread (0,0,0) read it at ") != std::string::npos);
  CHECK(message.find("must not be overwritten before a __syncthreads()") != std::string::npos);
  x.upload({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  REQUIRE_NOTHROW(warpnet::simt::launch(shift_left_with_barrier, dim3(1), dim3(10), 0, x.get(), 10));
  CHECK(x.download() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 9});
}

TEST_CASE("traced: a plain access to a global word other threads of the block update atomically is a race") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(std::vector<float>(32, 1.0f)), total(std::vector<float>{0.0f}), out(1);
  std::string message = launch_error(cudaErrorLaunchFailure, read_total_while_adding, dim3(1), dim3(32), x.get(),
                                     total.get(), out.get());
  INFO(message);
  CHECK(message.starts_with("kernel read_total_while_adding, block (0,0,0), thread (31,0,0): global-memory race on "
                            "byte 0 of a 4-byte allocation"));
  CHECK(message.find("this thread reads it at ") != std::string::npos);
  CHECK(message.find("and thread (0,0,0) updated it with an atomic at ") != std::string::npos);
  CHECK(message.find("need a __syncthreads() between them and the updates: a clear before them, a read of the "
                     "result after them") != std::string::npos);

  DeviceBuffer<unsigned> count(std::vector<unsigned>{7});
  message = launch_error(cudaErrorLaunchFailure, clear_while_counting, dim3(1), dim3(32), count.get());
  INFO(message);
  CHECK(message.starts_with("kernel clear_while_counting, block (0,0,0), thread (1,0,0): global-memory race on "
                            "byte 0 of a 4-byte allocation"));
  CHECK(message.find("this thread updates it with an atomic at ") != std::string::npos);
  CHECK(message.find("and thread (0,0,0) wrote it at ") != std::string::npos);
  CHECK(message.find("a clear before them") != std::string::npos);  // the barrier goes between the clear and the adds
}

TEST_CASE("traced: a compare-and-swap loop's first guess is a volatile load, not a plain one") {
  DeterministicScope deterministic;
  std::vector<float> values(32);
  for (int i = 0; i < 32; ++i) values[size_t(i)] = float((i * 7) % 32);
  DeviceBuffer<float> x(values), m(std::vector<float>{-1.0f});
  const std::string message =
      launch_error(cudaErrorLaunchFailure, max_by_cas<false>, dim3(1), dim3(32), x.get(), m.get());
  INFO(message);
  CHECK(message.find("this thread reads it at ") != std::string::npos);
  CHECK(message.find("updated it with an atomic at ") != std::string::npos);
  CHECK(message.find("reads its first guess with a volatile load") != std::string::npos);
  m.upload({-1.0f});
  REQUIRE_NOTHROW(warpnet::simt::launch(max_by_cas<true>, dim3(1), dim3(32), 0, x.get(), m.get()));
  CHECK(m.download()[0] == 31.0f);
}

TEST_CASE("traced: threads reading and writing their own bytes of one global word do not race") {
  DeterministicScope deterministic;
  DeviceBuffer<unsigned char> b(std::vector<unsigned char>{1, 2, 3, 4, 5, 6, 7, 8});
  REQUIRE_NOTHROW(warpnet::simt::launch(increment_bytes, dim3(1), dim3(8), 0, b.get()));
  CHECK(b.download() == std::vector<unsigned char>{2, 3, 4, 5, 6, 7, 8, 9});
}

namespace {

// Block 0 writes a value the other blocks read in the same launch.
__global__ void broadcast_in_launch(float* scale, const float* x, float* y) {
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0) *scale = 2.0f;
    return;
  }
  y[blockIdx.x * blockDim.x + threadIdx.x] = *scale * x[blockIdx.x * blockDim.x + threadIdx.x];
}

// The last block writes a value the others read in the same launch.
__global__ void broadcast_from_last(float* scale, const float* x, float* y) {
  if (blockIdx.x == gridDim.x - 1) {
    if (threadIdx.x == 0) *scale = 2.0f;
    return;
  }
  y[blockIdx.x * blockDim.x + threadIdx.x] = *scale * x[blockIdx.x * blockDim.x + threadIdx.x];
}

// Block 0 clears the total that every block adds to with atomics (its own
// threads wait for the clear; the other blocks cannot).
__global__ void clear_while_others_add(const float* x, float* total) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *total = 0.0f;
  __syncthreads();
  atomicAdd(total, x[blockIdx.x * blockDim.x + threadIdx.x]);
}

// The last block to finish sums the others' partial sums: each block writes
// its partial, makes it visible to the whole device (__threadfence) and then
// counts itself done; the block that counts last reads them all.
__global__ void last_block_sums(const float* x, float* partial, unsigned* done, float* total) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (unsigned t = 0; t < blockDim.x; ++t) s += x[blockIdx.x * blockDim.x + t];
    partial[blockIdx.x] = s;
    __threadfence();
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    float s = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b];
    *total = s;
  }
}

// Each block counts its threads with atomicAdd_block: into its own slot of
// `counts` (what the _block scope is for), and, when `shared_slot`, all into
// counts[0] (a race: the scope covers one block's threads only).
__global__ void count_with_block_atomics(unsigned* counts, bool shared_slot) {
  atomicAdd_block(&counts[shared_slot ? 0 : blockIdx.x], 1u);
}

// Every thread adds its pair to a float2 total with the sm_90 vector
// atomicAdd: into global `total` directly (allowed), or first into a shared
// total that thread 0 then stores (PTX allows vector atomics on global
// memory only).
__global__ void add_pairs(const float2* x, float2* total, bool through_shared) {
  __shared__ float2 block_total;
  if (!through_shared) {
    atomicAdd(total, x[threadIdx.x]);
    return;
  }
  if (threadIdx.x == 0) block_total = make_float2(0.0f, 0.0f);
  __syncthreads();
  atomicAdd(&block_total, x[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x == 0) *total = block_total;
}

}  // namespace

TEST_CASE("traced: a block-scoped atomic on a word only its block touches is no race; on one all blocks share, it is") {
  DeterministicScope deterministic;
  DeviceBuffer<unsigned> counts(std::vector<unsigned>(3, 0u));
  REQUIRE_NOTHROW(warpnet::simt::launch(count_with_block_atomics, dim3(3), dim3(32), 0, counts.get(), false));
  CHECK(counts.download() == std::vector<unsigned>(3, 32u));
  const std::string message =
      launch_error(cudaErrorLaunchFailure, count_with_block_atomics, dim3(3), dim3(32), counts.get(), true);
  INFO(message);
  CHECK(message.starts_with("kernel count_with_block_atomics, block (1,0,0), thread (0,0,0): global-memory race "
                            "between blocks on byte 0 of a 12-byte allocation"));
  CHECK(message.find("this thread updates it with a block-scoped atomic (the _block family)") != std::string::npos);
  CHECK(message.find("and block (0,0,0) wrote it in this launch") != std::string::npos);
  CHECK(message.find("atomic only among the threads of its own block") != std::string::npos);
}

TEST_CASE("traced: a float2 atomicAdd works on global memory; on shared memory it is an error, as in PTX") {
  DeviceBuffer<float2> x(std::vector<float2>(32, make_float2(1.0f, 2.0f))), total(std::vector<float2>(1));
  REQUIRE_NOTHROW(warpnet::simt::launch(add_pairs, dim3(1), dim3(32), 0, x.get(), total.get(), false));
  CHECK(total.download()[0].x == 32.0f);
  CHECK(total.download()[0].y == 64.0f);
  const std::string message =
      launch_error(cudaErrorIllegalAddress, add_pairs, dim3(1), dim3(32), x.get(), total.get(), true);
  INFO(message);
  CHECK(message.starts_with("kernel add_pairs, block (0,0,0), thread (0,0,0): a float2 atomicAdd on shared "
                            "`block_total`[byte 0]"));
  CHECK(message.find("the vector atomics work on global memory only") != std::string::npos);
}

TEST_CASE("traced: blocks adding to one global value without an atomic is a race between blocks") {
  DeterministicScope deterministic;  // blocks in order: block 1 meets block 0's read and write
  DeviceBuffer<float> x(std::vector<float>(96, 1.0f)), total(std::vector<float>{0.0f});
  const std::string message =
      launch_error(cudaErrorLaunchFailure, sum_across_blocks, dim3(3), dim3(32), x.get(), total.get(), 96);
  INFO(message);
  CHECK(message.starts_with("kernel sum_across_blocks, block (1,0,0), thread (0,0,0): global-memory race "
                            "between blocks on byte 0 of a 4-byte allocation"));
  CHECK(message.find("this thread reads it at kernels/examples/bugs/sum_across_blocks.cu:28") != std::string::npos);
  CHECK(message.find("and block (0,0,0) read it and wrote it in this launch (the last of these at "
                     "kernels/examples/bugs/sum_across_blocks.cu:28") != std::string::npos);
  CHECK(message.find("needs atomicAdd, or a partial result per block") != std::string::npos);
}

TEST_CASE("traced: a value one block writes and the others read in the same launch is a race between blocks") {
  DeterministicScope deterministic;
  DeviceBuffer<float> scale(std::vector<float>{1.0f}), x(std::vector<float>(64, 1.0f)), y(64);
  const std::string message = launch_error(cudaErrorLaunchFailure, broadcast_in_launch, dim3(2), dim3(32),
                                           scale.get(), x.get(), y.get());
  INFO(message);
  CHECK(message.starts_with("kernel broadcast_in_launch, block (1,0,0), thread (0,0,0): global-memory race between "
                            "blocks on byte 0 of a 4-byte allocation"));
  CHECK(message.find("this thread reads it at ") != std::string::npos);
  CHECK(message.find("and block (0,0,0) wrote it in this launch (at ") != std::string::npos);
  CHECK(message.find("test_checks.cpp:") != std::string::npos);
  CHECK(message.find(" (broadcast_in_launch)). A grid's blocks") != std::string::npos);  // block 0's line, named
  CHECK(message.find("must be written by an earlier launch") != std::string::npos);
}

TEST_CASE("traced: a plain write by one block races with the atomics of the others") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(std::vector<float>(64, 1.0f)), total(std::vector<float>{5.0f});
  const std::string message =
      launch_error(cudaErrorLaunchFailure, clear_while_others_add, dim3(2), dim3(32), x.get(), total.get());
  INFO(message);
  CHECK(message.starts_with("kernel clear_while_others_add, block (1,0,0), thread (0,0,0): global-memory race between "
                            "blocks on byte 0 of a 4-byte allocation"));
  CHECK(message.find("this thread updates it with an atomic at ") != std::string::npos);
  CHECK(message.find("test_checks.cpp:") != std::string::npos);
  CHECK(message.find(" (clear_while_others_add), and block") != std::string::npos);
  CHECK(message.find(", and block (0,0,0) wrote it and updated it with an atomic (or a volatile access) in this "
                     "launch") != std::string::npos);
  CHECK(message.find("clear it before (cudaMemset") != std::string::npos);
}

TEST_CASE("traced: reads and atomics by many blocks, and a last block ordered by __threadfence, are no race") {
  DeterministicScope restores;
  for (int workers : {1, 2}) {
    CAPTURE(workers);
    warpnet::simt::set_workers(workers);
    DeviceBuffer<float> x(std::vector<float>(128, 1.0f)), partial(4), total(std::vector<float>{0.0f});
    DeviceBuffer<unsigned> done(std::vector<unsigned>{0});
    REQUIRE_NOTHROW(warpnet::simt::launch(last_block_sums, dim3(4), dim3(32), 0, x.get(), partial.get(), done.get(),
                                          total.get()));
    CHECK(total.download()[0] == 128.0f);
    total.upload({0.0f});
    DeviceBuffer<float> first(4);
    REQUIRE_NOTHROW(
        warpnet::simt::launch(sum_with_atomic, dim3(4), dim3(32), 0, x.get(), total.get(), first.get(), 128));
    CHECK(total.download()[0] == 128.0f);
  }
}

namespace {

// Each block adds to the total with a plain += and then fences and counts
// itself done: the race comes before the fence, in every block.
__global__ void race_then_fence(float* total, unsigned* done) {
  if (threadIdx.x == 0) {
    *total += 1.0f;
    __threadfence();
    atomicAdd(done, 1u);
  }
}

// Blocks stop early once one of them has found the value: the flag is set
// with an atomic and polled with volatile loads, both strong in PTX.
__global__ void find_with_flag(const float* x, int* found) {
  if (*(volatile int*)found) return;
  if (x[blockIdx.x * blockDim.x + threadIdx.x] == 42.0f) atomicExch(found, 1);
}

__device__ float device_total;
__device__ unsigned device_done;

// A __device__ variable as the total: blocks race on it as on an allocation.
__global__ void sum_into_device_variable(const float* x) {
  if (threadIdx.x == 0) device_total += x[blockIdx.x];
}

// The CUDA sample's last-block sum, counting with a __device__ variable.
__global__ void last_block_with_device_counter(const float* x, float* partial, float* total) {
  if (threadIdx.x != 0) return;
  partial[blockIdx.x] = x[blockIdx.x];
  __threadfence();
  if (atomicInc(&device_done, gridDim.x - 1) == gridDim.x - 1) {
    float s = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b];
    *total = s;
  }
}

}  // namespace

TEST_CASE("traced: a race before each block's __threadfence() is still a race between blocks") {
  for (int workers : {1, 2}) {
    CAPTURE(workers);
    DeterministicScope restores;
    warpnet::simt::set_workers(workers);
    DeviceBuffer<float> total(std::vector<float>{0.0f});
    DeviceBuffer<unsigned> done(std::vector<unsigned>{0});
    const std::string message =
        launch_error(cudaErrorLaunchFailure, race_then_fence, dim3(64), dim3(32), total.get(), done.get());
    INFO(message);
    CHECK(message.find(": global-memory race between blocks on byte 0 of a 4-byte allocation") != std::string::npos);
  }
}

TEST_CASE("traced: a flag set with an atomic and polled with volatile loads is no race between blocks") {
  DeterministicScope deterministic;
  std::vector<float> values(128, 1.0f);
  values[40] = 42.0f;
  DeviceBuffer<float> x(values);
  DeviceBuffer<int> found(std::vector<int>{0});
  REQUIRE_NOTHROW(warpnet::simt::launch(find_with_flag, dim3(4), dim3(32), 0, x.get(), found.get()));
  CHECK(found.download()[0] == 1);
}

TEST_CASE("traced: blocks racing on a __device__ variable are named with the variable") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(std::vector<float>(4, 1.0f)), partial(4), total(1);
  const std::string message =
      launch_error(cudaErrorLaunchFailure, sum_into_device_variable, dim3(4), dim3(32), x.get());
  INFO(message);
  CHECK(message.starts_with("kernel sum_into_device_variable, block (1,0,0), thread (0,0,0): global-memory race "
                            "between blocks on byte 0 of `"));
  CHECK(message.find("device_total` (a 4-byte __device__ variable)") != std::string::npos);
  CHECK(message.find("and block (0,0,0) read it and wrote it in this launch") != std::string::npos);
  // An atomic counter in a __device__ variable is device memory, not out of
  // bounds (atomicInc wraps it back to 0 after the last block).
  REQUIRE_NOTHROW(
      warpnet::simt::launch(last_block_with_device_counter, dim3(4), dim3(32), 0, x.get(), partial.get(), total.get()));
  CHECK(total.download()[0] == 4.0f);
}

TEST_CASE("traced: a value several blocks read, written by another in the same launch, is a race") {
  DeterministicScope deterministic;  // blocks 0 and 1 read *scale, then block 2 writes it
  DeviceBuffer<float> scale(std::vector<float>{1.0f}), x(std::vector<float>(96, 1.0f)), y(96);
  const std::string message =
      launch_error(cudaErrorLaunchFailure, broadcast_from_last, dim3(3), dim3(32), scale.get(), x.get(), y.get());
  INFO(message);
  CHECK(message.starts_with("kernel broadcast_from_last, block (2,0,0), thread (0,0,0): global-memory race between "
                            "blocks on byte 0 of a 4-byte allocation"));
  CHECK(message.find("this thread writes it at ") != std::string::npos);
  CHECK(message.find(", and at least one other block read it in this launch (at ") != std::string::npos);
  CHECK(message.find("must not change during the launch") != std::string::npos);
}

namespace {

// A float4 read one float into a buffer: each lane's 16 bytes start 4 bytes
// past a 16-byte boundary.
__global__ void float4_one_float_in(const float* x, float* out) {
  const float4 v = reinterpret_cast<const float4*>(x + 1)[threadIdx.x];
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

}  // namespace

TEST_CASE("traced: a 16-byte load at an address not 16-byte aligned is a misaligned-address error") {
  DeterministicScope deterministic;
  DeviceBuffer<float> x(std::vector<float>(64, 1.0f)), out(8);
  const std::string message =
      launch_error(cudaErrorMisalignedAddress, float4_one_float_in, dim3(1), dim3(8), x.get(), out.get());
  INFO(message);
  CHECK(message.starts_with("kernel float4_one_float_in, block (0,0,0), thread (0,0,0): a load at "));
  CHECK(message.find("test_checks.cpp:") != std::string::npos);
  CHECK(message.find(": a 16-byte access at 0x") != std::string::npos);
  CHECK(message.find(", not 16-byte aligned") != std::string::npos);
}

TEST_CASE("traced: writing past a __shared__ array is an out-of-bounds shared access") {
  DeterministicScope deterministic;
  DeviceBuffer<float> out(32);
  const std::string message = launch_error(cudaErrorIllegalAddress, shared_off_by_one, dim3(1), dim3(32), out.get());
  INFO(message);
  CHECK(message.starts_with("kernel shared_off_by_one, block (0,0,0), thread (31,0,0): out-of-bounds shared-memory "
                            "write of 4 bytes"));
  CHECK(message.find("0 bytes past the end of `tile` (128 bytes)") != std::string::npos);
}

TEST_CASE("traced: a missing __syncthreads() is reported as a shared-memory race") {
  DeterministicScope deterministic;
  DeviceBuffer<float> in(std::vector<float>(64, 1.0f)), out(64);
  const std::string message =
      launch_error(cudaErrorLaunchFailure, reverse_missing_sync, dim3(1), dim3(64), in.get(), out.get());
  INFO(message);
  // Warp 0 runs first: thread 31 reads tile[32] before thread 32 (warp 1) writes
  // it, and nothing orders the two.
  CHECK(message.starts_with("kernel reverse_missing_sync, block (0,0,0), thread (32,0,0): shared-memory race on "
                            "`tile`[byte 128]"));
  CHECK(message.find("writes it at kernels/examples/bugs/missing_syncthreads.cu:16") != std::string::npos);
  CHECK(message.find("and thread (31,0,0) read it at kernels/examples/bugs/missing_syncthreads.cu:18") !=
        std::string::npos);
  CHECK(message.find("with no __syncthreads() between them") != std::string::npos);
}

TEST_CASE("traced: reading shared memory no thread wrote is reported") {
  DeterministicScope deterministic;
  DeviceBuffer<float> out(64);
  const std::string message = launch_error(cudaErrorLaunchFailure, uninitialized_shared, dim3(1), dim3(64), out.get());
  INFO(message);
  CHECK(message.starts_with("kernel uninitialized_shared, block (0,0,0), thread (1,0,0): reads `tile`[byte 4]"));
  CHECK(message.find("uninitialized shared memory") != std::string::npos);
}

TEST_CASE("traced: a correct tiled SGEMM passes every check, in parallel too") {
  const int M = 33, N = 47, K = 35;
  std::vector<float> a(M * K), b(K * N);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 7 % 13) - 6) / 8;  // exact in fp32, varied
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 5 % 11) - 5) / 4;
  // Every product and partial sum is a multiple of 1/32 under 2^10: exact in
  // fp32 in any order, so the kernel must equal the plain loop exactly.
  std::vector<float> want(M * N, 0.0f);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) want[i * N + j] += a[i * K + k] * b[k * N + j];
  DeviceBuffer<float> A(a), B(b), C(M * N);
  const dim3 block(16, 16), grid(warpnet::ceil_div(N, 16), warpnet::ceil_div(M, 16));
  for (int workers : {1, 2}) {
    warpnet::simt::set_workers(workers);
    C.upload(std::vector<float>(M * N, NAN));  // a launch that writes nothing cannot match
    CHECK_NOTHROW(warpnet::simt::launch(sgemm_smem_tiled<16>, grid, block, 0, M, N, K, A.get(), B.get(), C.get()));
    CHECK(C.download() == want);
  }
  warpnet::simt::set_workers(0);
}

namespace {

// One warp swaps neighbouring values through shared memory. With __syncwarp()
// between the store and the load the lanes are ordered; without it (the
// pre-Volta "warp-synchronous" idiom) lane 0 may read s[1] before lane 1 wrote it.
template <bool kSyncWarp>
__global__ void warp_swap(const float* in, float* out) {
  __shared__ float s[32];
  const int lane = threadIdx.x;
  s[lane] = in[lane];
  if (kSyncWarp) __syncwarp();
  out[lane] = s[lane ^ 1];
}

}  // namespace

TEST_CASE("traced: __syncwarp orders shared accesses within a warp, its absence is a race") {
  DeterministicScope deterministic;
  std::vector<float> values(32);
  for (int i = 0; i < 32; ++i) values[i] = float(i);
  DeviceBuffer<float> in(values), out(32);
  CHECK_NOTHROW(warpnet::simt::launch(warp_swap<true>, dim3(1), dim3(32), 0, in.get(), out.get()));
  CHECK(out.download()[4] == 5.0f);
  const std::string message =
      launch_error(cudaErrorLaunchFailure, warp_swap<false>, dim3(1), dim3(32), in.get(), out.get());
  INFO(message);
  CHECK(message.starts_with("kernel warp_swap<false>, block (0,0,0), thread (1,0,0): shared-memory race on `s`[byte 4]"));
}
