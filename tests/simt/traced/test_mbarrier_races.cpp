// The race checker and mbarriers: an arrive releases the arriving thread's
// earlier accesses to every thread whose wait returns for the phase it
// completed, as __syncthreads() does for the whole block. A hand-off from
// one warp to another through an mbarrier (one lane of a warp waiting or
// arriving for it, a __syncwarp() passing the order on), one relayed through
// a second barrier, and a buffer reused round after round through a full and an
// empty barrier (matmul v13's ring, with plain stores in place of TMA) must
// pass; a read without the wait, a wait on another barrier, a store after
// the arrive, and a wait that missed the phase whose arrivals the barrier
// keeps must still be named as races. A TMA copy's bytes count as its
// issuing thread's writes, released into the phase the copy completes
// (Checker::tma_copy_issued): read after the wait for that phase they run
// clean, read without it they race. Compiled with warpnet_simt_traced.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/common/hopper.hpp"
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/tma_helpers.hpp"

using warpnet::simt::LaunchError;

namespace {

// Dynamic shared memory: two mbarriers, then a buffer of 32 floats.
constexpr size_t kBarriers = 2;
constexpr size_t kShared = kBarriers * sizeof(uint64_t) + 32 * sizeof(float);

__device__ uint64_t* barriers() { return warpnet::dynamic_shared<uint64_t>(); }
__device__ float* buffer() { return reinterpret_cast<float*>(barriers() + kBarriers); }

// The launch's race report, or "" when it ran clean.
template <class... P, class... A>
std::string race_in_shared(size_t shared, void (*kernel)(P...), dim3 block, A... args) {
  DeterministicScope deterministic;
  try {
    warpnet::simt::launch(kernel, dim3(1), block, shared, args...);
  } catch (const LaunchError& e) {
    CHECK(e.code() == cudaErrorLaunchFailure);
    return e.what();
  }
  return "";
}
template <class... P, class... A>
std::string race_in(void (*kernel)(P...), dim3 block, A... args) {
  return race_in_shared(kShared, kernel, block, args...);
}

// How the producer warp fills the buffer, and how the consumer warp gets to read it.
enum class Producer { stores_then_arrives, arrives_then_stores, syncwarp_then_one_arrives };
enum class Consumer { waits, skips_the_wait, waits_on_another_barrier, one_lane_waits_then_syncwarp, one_lane_waits };

// Warp kProducer stores one float per lane and arrives on `full`; the other
// warp's lanes each read what a neighbouring producer lane stored. The
// consumer warp runs first when kProducer is 1: its waits park until the
// arrivals come (otherwise they return at once, the phase complete).
template <Producer kFill, Consumer kRead, unsigned kProducer>
__global__ void hand_off(float* out) {
  using namespace warpnet::ptx;
  uint64_t* full = &barriers()[0];
  uint64_t* another = &barriers()[1];
  float* buf = buffer();
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    mbarrier_init(full, kFill == Producer::syncwarp_then_one_arrives ? 1 : 32);
    mbarrier_init(another, 32);
  }
  __syncthreads();
  if (warp == kProducer) {
    if (kFill == Producer::arrives_then_stores) mbarrier_arrive(full);
    buf[lane] = float(lane);
    if (kFill == Producer::stores_then_arrives) mbarrier_arrive(full);
    if (kFill == Producer::syncwarp_then_one_arrives) {
      __syncwarp();  // lane 0's arrive releases what the warp stored before the sync
      if (lane == 0) mbarrier_arrive(full);
    }
  } else {
    if (kRead == Consumer::waits) mbarrier_wait(full, 0);
    if (kRead == Consumer::one_lane_waits_then_syncwarp || kRead == Consumer::one_lane_waits) {
      if (lane == 0) mbarrier_wait(full, 0);
      if (kRead == Consumer::one_lane_waits_then_syncwarp) __syncwarp();  // orders lane 0's wait before the reads
    }
    if (kRead == Consumer::waits_on_another_barrier) {
      mbarrier_arrive(another);  // the consumers' own barrier: its phase orders nothing the producer did
      mbarrier_wait(another, 0);
    }
    out[lane] = buf[(lane + 1) % 32];
  }
}

// Three warps: warp 0 stores and arrives on `first`; warp 1 waits on it and
// arrives on `second`; warp 2 waits on `second` and reads what warp 0 stored,
// ordered through warp 1. Unless warp 1 arrives before its wait
// (kRelayWaitsFirst false): then its arrive releases nothing of warp 0.
// kOneLane: in warp 1 only lane 0 waits and only lane 31 arrives, a
// __syncwarp() between passing the order on.
template <bool kRelayWaitsFirst, bool kOneLane = false>
__global__ void relay(float* out) {
  using namespace warpnet::ptx;
  uint64_t* first = &barriers()[0];
  uint64_t* second = &barriers()[1];
  float* buf = buffer();
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    mbarrier_init(first, 32);
    mbarrier_init(second, kOneLane ? 1 : 32);
  }
  __syncthreads();
  if (warp == 0) {
    buf[lane] = float(lane);
    mbarrier_arrive(first);
  } else if (warp == 1 && kOneLane) {
    if (lane == 0) mbarrier_wait(first, 0);
    __syncwarp();
    if (lane == 31) mbarrier_arrive(second);
  } else if (warp == 1) {
    if (kRelayWaitsFirst) mbarrier_wait(first, 0);
    mbarrier_arrive(second);
    if (!kRelayWaitsFirst) mbarrier_wait(first, 0);
  } else {
    mbarrier_wait(second, 0);
    out[lane] = buf[31 - lane];
  }
}

// A producer warp that runs three phases ahead (no `empty` barrier holds it
// back) while the consumer warp waits for phase 0: on a GPU the consumers may
// wake at phase 0 and read while the last producer lanes still store. Here
// they wake only once all three completed, and must acquire nothing: what
// the barrier keeps is phase 2's arrivals, which their wait did not see.
__global__ void runs_ahead(float* out) {
  using namespace warpnet::ptx;
  uint64_t* full = &barriers()[0];
  float* buf = buffer();
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) mbarrier_init(full, 32);
  __syncthreads();
  if (warp == 1) {
    for (int r = 0; r < 3; ++r) {
      buf[lane] = float(32 * r + int(lane));
      mbarrier_arrive(full);
    }
  } else {
    mbarrier_wait(full, 0);
    out[lane] = buf[31];  // lane 31 arrives last: in phase 2
  }
}

// Matmul v13's ring on one stage, with a warp's plain stores where v13 has
// TMA: round r, the producer warp waits until the consumer warp has released
// round r-1 (`empty`), stores, and arrives on `full`; the consumer waits on
// `full` for round r, reads a lane's value of another producer lane, and
// arrives on `empty`. Each consumer lane sums what it read.
constexpr int kRounds = 4;
__global__ void ring(float* out) {
  using namespace warpnet::ptx;
  uint64_t* full = &barriers()[0];
  uint64_t* empty = &barriers()[1];
  float* buf = buffer();
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    mbarrier_init(full, 32);
    mbarrier_init(empty, 32);
  }
  __syncthreads();
  float sum = 0.0f;
  for (int r = 0; r < kRounds; ++r) {
    if (warp == 0) {
      if (r > 0) mbarrier_wait(empty, uint32_t(r - 1) & 1);  // the consumers have read round r-1
      buf[lane] = float(32 * r + int(lane));
      mbarrier_arrive(full);
    } else {
      mbarrier_wait(full, uint32_t(r) & 1);
      sum += buf[(lane + unsigned(r) + 1) % 32];
      mbarrier_arrive(empty);
    }
  }
  if (warp == 1) out[lane] = sum;
}

// A TMA hand-off: thread 0 loads one box of 64 x 8 16-bit elements (1024
// bytes, swizzled) into shared memory on `full`; warp 1 reads it back, 32
// bytes a lane as they lie there, after its wait for the copy's phase
// (kWaits) or without it, thread 0 then waiting so that no copy is left in
// flight. Dynamic shared memory: up to 1024 bytes to align, the box, the barrier.
constexpr size_t kTmaShared = 3 * 1024;
template <bool kWaits>
__global__ void tma_hand_off(const __grid_constant__ CUtensorMap map, uint16_t* out) {
  using namespace warpnet::ptx;
  unsigned char* tile = aligned_shared();
  auto* full = reinterpret_cast<uint64_t*>(tile + 1024);
  if (threadIdx.x == 0) {
    mbarrier_init(full, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(full, 1024);
    tma_load_2d(tile, &map, 0, 0, full);
    if (!kWaits) mbarrier_wait(full, 0);
  } else if (threadIdx.x >= 32) {
    const unsigned lane = threadIdx.x - 32;
    if (kWaits) mbarrier_wait(full, 0);
    const auto* box = reinterpret_cast<const uint16_t*>(tile);
    for (unsigned i = 0; i < 16; ++i) out[16 * lane + i] = box[16 * lane + i];
  }
}

// What hand_off's consumer lane reads: its neighbour's lane number.
void check_neighbours(const DeviceBuffer<float>& out) {
  std::vector<float> expected(32);
  for (unsigned lane = 0; lane < 32; ++lane) expected[lane] = float((lane + 1) % 32);
  CHECK(out.download() == expected);
}

// A reported race between a consumer's read and the producer warp's store.
void check_race(const std::string& message, const char* kernel) {
  INFO(message);
  CHECK(message.starts_with(std::string("kernel ") + kernel));
  CHECK(message.find("shared-memory race on `dynamic shared memory`[byte ") != std::string::npos);
  CHECK(message.find("test_mbarrier_races.cpp:") != std::string::npos);
  CHECK(message.find(", nor an mbarrier that thread arrived on after its access and this thread waited for since") !=
        std::string::npos);
}

}  // namespace

TEST_CASE("traced: a store before an mbarrier arrive is ordered before the reads after the wait for its phase") {
  DeviceBuffer<float> out(32);
  // The wait returns at once (the producer warp ran first) or parks until the arrivals.
  CHECK(race_in(hand_off<Producer::stores_then_arrives, Consumer::waits, 0>, dim3(64), out.get()).empty());
  check_neighbours(out);
  CHECK(race_in(hand_off<Producer::stores_then_arrives, Consumer::waits, 1>, dim3(64), out.get()).empty());
  check_neighbours(out);
  // One lane arrives for the warp: __syncwarp orders the others' stores before its arrive.
  CHECK(race_in(hand_off<Producer::syncwarp_then_one_arrives, Consumer::waits, 0>, dim3(64), out.get()).empty());
  check_neighbours(out);
  // One lane waits for the warp: __syncwarp orders its wait before the others' reads.
  CHECK(race_in(hand_off<Producer::stores_then_arrives, Consumer::one_lane_waits_then_syncwarp, 0>, dim3(64),
                out.get())
            .empty());
  check_neighbours(out);
  CHECK(race_in(hand_off<Producer::stores_then_arrives, Consumer::one_lane_waits_then_syncwarp, 1>, dim3(64),
                out.get())
            .empty());
  check_neighbours(out);
}

TEST_CASE("traced: an mbarrier orders through a thread that waits on one and then arrives on another") {
  DeviceBuffer<float> out(32);
  CHECK(race_in(relay<true>, dim3(96), out.get()).empty());
  std::vector<float> expected(32);
  for (unsigned lane = 0; lane < 32; ++lane) expected[lane] = float(31 - lane);
  CHECK(out.download() == expected);
  // Lane 0 of the relay waits, lane 31 arrives: the __syncwarp() between passes lane 0's acquire on.
  CHECK(race_in(relay<true, true>, dim3(96), out.get()).empty());
  CHECK(out.download() == expected);
  // An arrive releases only what came before it: the relay's wait after it passes nothing on.
  check_race(race_in(relay<false>, dim3(96), out.get()), "relay<false");
}

TEST_CASE("traced: one buffer reused round after round through a full and an empty mbarrier runs clean") {
  DeviceBuffer<float> out(32);
  CHECK(race_in(ring, dim3(64), out.get()).empty());
  std::vector<float> sums(32, 0.0f);
  for (unsigned lane = 0; lane < 32; ++lane)
    for (int r = 0; r < kRounds; ++r) sums[lane] += float(32 * r + int((lane + unsigned(r) + 1) % 32));
  CHECK(out.download() == sums);
}

TEST_CASE("traced: a read of what a producer hands off through an mbarrier races without the wait for its phase") {
  DeviceBuffer<float> out(32);
  const std::string skipped = race_in(hand_off<Producer::stores_then_arrives, Consumer::skips_the_wait, 0>,
                                      dim3(64), out.get());
  check_race(skipped, "hand_off<");
  CHECK(skipped.find("thread (32,0,0): shared-memory race") != std::string::npos);
  CHECK(skipped.find("this thread reads it at") != std::string::npos);
  CHECK(skipped.find("and thread (1,0,0) wrote it at") != std::string::npos);
  // Lane 0's wait, with no __syncwarp() after it, orders nothing for lane 1.
  const std::string unsynced = race_in(hand_off<Producer::stores_then_arrives, Consumer::one_lane_waits, 0>,
                                       dim3(64), out.get());
  check_race(unsynced, "hand_off<");
  CHECK(unsynced.find("thread (33,0,0): shared-memory race") != std::string::npos);
  // A wait on a barrier the producer did not arrive on orders nothing of the producer's.
  check_race(race_in(hand_off<Producer::stores_then_arrives, Consumer::waits_on_another_barrier, 0>, dim3(64),
                     out.get()),
             "hand_off<");
}

TEST_CASE("traced: a wait woken only after later phases of its barrier completed acquires nothing") {
  DeviceBuffer<float> out(32);
  const std::string message = race_in(runs_ahead, dim3(64), out.get());
  check_race(message, "runs_ahead");
  CHECK(message.find("and thread (63,0,0) wrote it at") != std::string::npos);
}

TEST_CASE("traced: a store after its thread's mbarrier arrive races with the reads after the wait") {
  DeviceBuffer<float> out(32);
  for (const std::string& message :
       {race_in(hand_off<Producer::arrives_then_stores, Consumer::waits, 0>, dim3(64), out.get()),
        race_in(hand_off<Producer::arrives_then_stores, Consumer::waits, 1>, dim3(64), out.get())}) {
    check_race(message, "hand_off<");
    CHECK(message.find("wrote it at") != std::string::npos);
  }
}

TEST_CASE("traced: TMA's bytes are ordered before the reads after the wait for its copy's phase, and race without it") {
  std::vector<uint16_t> matrix(64 * 8);
  for (size_t i = 0; i < matrix.size(); ++i) matrix[i] = uint16_t(i);
  DeviceBuffer<uint16_t> d_matrix(matrix), out(512);
  CUtensorMap map;
  REQUIRE(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d_matrix.get(), 64, 8, 64, 8) == CUDA_SUCCESS);
  CHECK(race_in_shared(kTmaShared, tma_hand_off<true>, dim3(64), map, out.get()).empty());
  // Every element once, each in its swizzled place (test_hopper.cpp checks the places).
  std::vector<uint16_t> got = out.download();
  std::sort(got.begin(), got.end());
  CHECK(got == matrix);
  const std::string skipped = race_in_shared(kTmaShared, tma_hand_off<false>, dim3(64), map, out.get());
  INFO(skipped);
  CHECK(skipped.find("thread (32,0,0): shared-memory race on `dynamic shared memory`[byte ") != std::string::npos);
  CHECK(skipped.find("and thread (0,0,0) wrote it at") != std::string::npos);
}
