// Lesson 03 — SIMT: threads, warps and blocks.
//
// 1. Who am I: a grid of blocks of threads; warp and lane from the thread index.
// 2. SIMT: one warp stepped through a branch on the emulator; half its lanes sit out.
// 3. Coalescing: a warp's 32 loads served as 32-byte sectors, 4 or 32 of them.
// 4. Bank conflicts: a column of a 32x32 shared array in one bank, and padded.
// 5. Occupancy: how many warps an H200 SM keeps, from a kernel's threads,
//    registers and shared memory (computed from the CUDA Programming Guide's
//    limits for compute capability 9.0; no GPU runs here).
// 6. Bugs: an off-by-one, a missing __syncthreads(), a read of shared memory
//    no thread wrote, blocks adding to one total without atomicAdd, an array
//    smoothed in place, each stopped by the traced emulator with its message.
// 7. Lanes talking: a warp summed by five shuffles (no shared memory, no
//    barrier), votes, reductions and matches over its 32 lanes, and a
//    histogram's atomics cut to one per key a warp by a match.
// 8. A memory-bound ladder: every registered softmax version traced (bytes
//    per element, coalescing, shared memory) beside the H200's figures
//    recorded in bench/results (softmax_ladder.cpp).
// Every figure but part 5's (computed) comes from the emulator's own trace
// of the kernels in kernels/examples/ (part 8: of the registry's softmax
// versions, beside the GPU figures of bench/results); the program exits
// non-zero if one differs from what the lesson says.
//
// Run: build/bin/lesson03 [--markdown]   (--markdown: only part 8's tables,
//      as the README holds them; scripts/lesson-tables.sh pastes them there)
#include <algorithm>
#include <bit>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// Before cuda_compat.hpp: its __noinline__ macro (CUDA's spelling) would break
// the __attribute__((__noinline__)) of headers included after it.
#include "simt/stepper.hpp"
#include "simt/trace.hpp"

#include "device/datasheet.hpp"
#include "lessons/03-simt-threads-warps-blocks/softmax_ladder.hpp"
#include "lessons/lesson_args.hpp"
#include "lessons/lesson_checks.hpp"

#include "kernels/common/cuda_compat.hpp"

namespace {
#include "kernels/examples/access_patterns.cu"
#include "kernels/examples/bugs/missing_syncthreads.cu"
#include "kernels/examples/bugs/off_by_one.cu"
#include "kernels/examples/bugs/smooth_in_place.cu"
#include "kernels/examples/bugs/sum_across_blocks.cu"
#include "kernels/examples/bugs/uninitialized_shared.cu"
#include "kernels/examples/simt_basics.cu"
#include "kernels/examples/warp_talk.cu"
}  // namespace

using namespace warpnet;
using simt::Space;

namespace {

using lesson::expect;

template <class T>
struct Device {
  explicit Device(size_t n) : n(n) { WARPNET_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T))); }
  ~Device() { cudaFree(p); }
  std::vector<T> get() const {
    std::vector<T> v(n);
    WARPNET_CUDA_CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
  T* p = nullptr;
  size_t n;
};

void who_am_i() {
  std::printf("1. A grid of 2 blocks of 64 threads: each thread computes who it is\n");
  Device<int> ids(2 * 64 * 4);
  launch_kernel(whoami, dim3(2), dim3(64), 0, ids.p);
  WARPNET_CUDA_CHECK(cudaGetLastError());
  const auto v = ids.get();
  std::printf("   global  blockIdx.x  threadIdx.x  warp  lane\n");
  for (int g : {0, 1, 31, 32, 33, 63, 64, 127}) {
    std::printf("   %6d  %10d  %11d  %4d  %4d\n", g, v[4 * g], v[4 * g + 1], v[4 * g + 2], v[4 * g + 3]);
    expect(v[4 * g] == g / 64 && v[4 * g + 1] == g % 64, "global = blockIdx.x·64 + threadIdx.x");
    expect(v[4 * g + 2] == (g % 64) / 32 && v[4 * g + 3] == g % 32, "warp = threadIdx/32, lane = threadIdx%32");
  }
}

void simt_branch() {
  std::printf("\n2. SIMT: warp 0 of block 0 stepped through `if (i %% 2 == 0) evens[i/2] = ... else odds[i/2] = ...`\n");
  const int n = 64;
  Device<float> evens(n / 2), odds(n / 2);
  simt::Stepper stepper(uint3{0, 0, 0}, 0, [&] { simt::launch(divergent_halves, dim3(1), dim3(n), 0, evens.p, odds.p, n); });
  int stop = 0;
  while (stepper.step()) {
    const simt::WarpStop& s = stepper.stop();
    unsigned at_first = 0;
    for (const auto& lane : s.lanes) at_first += lane.where == s.lanes[0].where;
    std::printf("   stop %d: lane 0 is at %s (%u lanes there); lane 1 is at %s\n", ++stop, s.lanes[0].where.c_str(),
                at_first, s.lanes[1].where.c_str());
    expect(s.lanes[0].where != s.lanes[1].where, "even and odd lanes at different stores");
  }
  const auto trace = simt::last_trace();
  const auto stores = trace->total(Space::global, true);
  std::printf("   the trace: %llu warp-level stores, %.0f of 32 lanes active in each, divergence %.0f%%\n",
              (unsigned long long)stores.requests, double(stores.active_lanes) / double(stores.requests),
              100.0 * double(stores.inactive_lanes) / double(stores.active_lanes + stores.inactive_lanes));
  expect(stores.requests == 4 && stores.active_lanes == 64, "2 warps x 2 branches, 16 lanes each");
  // Both branches ran, each for its own lanes: every store landed.
  const auto e = evens.get(), o = odds.get();
  bool stored = true;
  for (int k = 0; k < n / 2; ++k) stored = stored && e[k] == float(2 * k) && o[k] == -float(2 * k + 1);
  expect(stored, "evens[k] = 2k and odds[k] = -(2k+1): each branch stored for its own lanes");
}

void coalescing() {
  std::printf("\n3. Coalescing: 256 threads copy floats, reading in[i] or in[32*i]\n");
  const int n = 256;
  Device<float> in(n * 32), out(n);
  WARPNET_CUDA_CHECK(cudaMemset(in.p, 0, n * 32 * sizeof(float)));
  for (int stride : {1, 32}) {
    if (stride == 1)
      simt::launch(copy_coalesced, dim3(n / 128), dim3(128), 0, in.p, out.p, n);
    else
      simt::launch(copy_strided, dim3(n / 128), dim3(128), 0, in.p, out.p, n, stride);
    const auto trace = simt::last_trace();
    const auto load = trace->total(Space::global, false);
    const simt::WarpAccess& a = trace->samples.front();
    std::printf("   stride %2d: lanes 0..3 read byte offsets %lu %lu %lu %lu -> %.0f sectors per warp load, "
                "efficiency %.1f%%\n",
                stride, (unsigned long)(a.addresses[0] - uintptr_t(in.p)), (unsigned long)(a.addresses[1] - uintptr_t(in.p)),
                (unsigned long)(a.addresses[2] - uintptr_t(in.p)), (unsigned long)(a.addresses[3] - uintptr_t(in.p)),
                double(load.sectors) / double(load.requests), 100.0 * double(load.ideal_sectors) / double(load.sectors));
    expect(load.sectors == (stride == 1 ? 4u : 32u) * load.requests, "4 sectors per request coalesced, 32 strided");
  }
}

void bank_conflicts() {
  std::printf("\n4. Bank conflicts: 32 lanes read column 0 of a shared tile[32][W]\n");
  Device<float> out(32);
  for (int width : {32, 33}) {
    if (width == 32)
      simt::launch(shared_column_read<32>, dim3(1), dim3(32), 0, out.p);
    else
      simt::launch(shared_column_read<33>, dim3(1), dim3(32), 0, out.p);
    const auto trace = simt::last_trace();
    const auto load = trace->total(Space::shared, false);
    const simt::WarpAccess* a = nullptr;
    for (const auto& s : trace->samples)
      if (s.space == Space::shared && !s.write) a = &s;
    std::printf("   W = %d: lanes 0..3 hit banks (lane 0's = 0)", width);
    for (int l = 0; l < 4; ++l) std::printf(" %lu", (unsigned long)((a->addresses[l] - a->addresses[0]) / 4 % 32));
    std::printf(" ... -> %llu wavefront(s) for one warp load\n", (unsigned long long)load.wavefronts);
    expect(load.wavefronts == (width == 32 ? 32u : 1u), "32-way conflict unpadded, none padded");
  }
}

// How many blocks of a kernel one H200 SM keeps at once, and which of its
// limits decides (datasheet.hpp's sm90: the CUDA Programming Guide's rules).
struct Occupancy {
  int blocks, warps;
  const char* limit;
};

Occupancy occupancy(int threads, int registers, int shared_bytes) {
  namespace sm = device::datasheet::sm90;
  const int warps_per_block = (threads + 31) / 32;
  const int registers_per_warp = (registers * 32 + sm::kRegisterUnitPerWarp - 1) / sm::kRegisterUnitPerWarp *
                                 sm::kRegisterUnitPerWarp;
  struct Limit {
    int blocks;
    const char* name;
  };
  const Limit limits[] = {
      {sm::kMaxWarpsPerSm / warps_per_block, "threads (64 warps)"},
      {sm::kMaxBlocksPerSm, "blocks (32)"},
      {sm::kRegistersPerSm / registers_per_warp / warps_per_block, "registers (64 Ki)"},
      {shared_bytes ? sm::kSharedBytesPerSm / (shared_bytes + sm::kSharedBytesReservedPerBlock) : sm::kMaxBlocksPerSm,
       "shared memory (228 KiB)"},
  };
  Limit binding = limits[0];
  for (const Limit& l : limits)
    if (l.blocks < binding.blocks) binding = l;
  return {binding.blocks, binding.blocks * warps_per_block, binding.name};
}

void occupancy_table() {
  std::printf("\n5. Occupancy: how many warps one H200 SM keeps resident, for a few kernels' resources\n");
  std::printf("   threads/block  registers/thread  shared/block  blocks/SM  warps/SM  occupancy  limited by\n");
  struct Row {
    int threads, registers, shared;
  };
  const Row rows[] = {{256, 32, 0}, {256, 64, 0}, {128, 255, 0}, {256, 32, 48 * 1024}, {32, 16, 0}, {1024, 32, 0}};
  for (const Row& r : rows) {
    const Occupancy o = occupancy(r.threads, r.registers, r.shared);
    std::printf("   %13d  %16d  %8d KiB  %9d  %8d  %8.1f%%  %s\n", r.threads, r.registers, r.shared / 1024, o.blocks,
                o.warps, 100.0 * o.warps / device::datasheet::sm90::kMaxWarpsPerSm, o.limit);
  }
  expect(occupancy(256, 32, 0).warps == 64, "32 registers a thread leave every warp slot usable");
  expect(occupancy(256, 64, 0).warps == 32, "64 registers a thread halve the resident warps");
  expect(occupancy(128, 255, 0).warps == 8, "255 registers a thread (a big register tile): 8 warps, an eighth");
  expect(occupancy(256, 32, 48 * 1024).warps == 32, "48 KiB of shared memory a block: 4 blocks fit in 228 KiB");
  expect(occupancy(32, 16, 0).warps == 32, "blocks of one warp run out of block slots at 32 warps");
}

// The message the traced emulator stops a launch with, or "" when it ran.
template <class... P, class... A>
std::string launch_message(void (*kernel)(P...), dim3 grid, dim3 block, A... args) {
  try {
    simt::launch(kernel, grid, block, 0, args...);
  } catch (const simt::LaunchError& e) {
    return e.what();
  }
  return "";
}

void bugs() {
  std::printf("\n6. Five bugs a GPU often runs through quietly (kernels/examples/bugs/), stopped by the traced "
              "emulator\n");
  std::vector<float> ones(100, 1.0f);
  Device<float> x(100), data(64), out(64), total(1);
  WARPNET_CUDA_CHECK(cudaMemcpy(x.p, ones.data(), 100 * sizeof(float), cudaMemcpyHostToDevice));
  WARPNET_CUDA_CHECK(cudaMemset(data.p, 0, 64 * sizeof(float)));
  WARPNET_CUDA_CHECK(cudaMemset(total.p, 0, sizeof(float)));
  const struct {
    const char* what;
    std::string message;
    const char* expected;
  } cases[] = {
      {"`if (i <= n)` instead of `i < n`, 128 threads for 100 floats",
       launch_message(scale_off_by_one, dim3(1), dim3(128), x.p, 100, 2.0f), "out-of-bounds global-memory"},
      {"a shared tile read back without __syncthreads() after it was written",
       launch_message(reverse_missing_sync, dim3(1), dim3(64), data.p, out.p), "with no __syncthreads() between them"},
      {"a shared tile read where no thread wrote", launch_message(uninitialized_shared, dim3(1), dim3(64), out.p),
       "uninitialized shared memory"},
      {"blocks adding their partial sums to one total with `+=`, not atomicAdd",
       launch_message(sum_across_blocks, dim3(4), dim3(32), x.p, total.p, 100), "race between blocks"},
      {"an array smoothed in place, `x[i] = (x[i] + x[i + 1]) / 2`",
       launch_message(smooth_in_place, dim3(1), dim3(64), x.p, 64), "and thread (0,0,0) read it"},
  };
  for (const auto& c : cases) {
    std::printf("   %s:\n     %s\n", c.what, c.message.empty() ? "(no error)" : c.message.c_str());
    expect(c.message.find(c.expected) != std::string::npos, c.expected);
  }
}

void warp_talk() {
  std::printf("\n7. Lanes talking: one warp, lane i holding the float i, sums them with __shfl_xor_sync\n");
  std::vector<float> values(32);
  for (int i = 0; i < 32; ++i) values[i] = float(i);
  Device<float> in(32), steps(5 * 32);
  WARPNET_CUDA_CHECK(cudaMemcpy(in.p, values.data(), 32 * sizeof(float), cudaMemcpyHostToDevice));
  simt::launch(butterfly_sum, dim3(1), dim3(32), 0, in.p, steps.p);
  const auto shared = simt::last_trace()->total(Space::shared, false).requests +
                      simt::last_trace()->total(Space::shared, true).requests;
  const auto v = steps.get();
  std::printf("   partner     lane 0 holds   lane 5 holds   values each lane has summed\n");
  int step = 0;
  for (int offset = 16; offset > 0; offset /= 2, ++step) {
    std::printf("   lane ^ %-2d  %12.0f   %12.0f   %d\n", offset, v[step * 32], v[step * 32 + 5], 32 / offset);
    // So far lane l has met every lane that differs from it only in the bits
    // exchanged (offset and above): those that agree with it below offset.
    bool sums = true;
    for (int l = 0; l < 32; ++l) {
      float want = 0;
      for (int o = 0; o < 32; ++o)
        if ((o & (offset - 1)) == (l & (offset - 1))) want += float(o);
      sums = sums && v[step * 32 + l] == want;
    }
    expect(sums, "after the exchange with lane ^ " + std::to_string(offset) + " each lane holds the sum of " +
                     std::to_string(32 / offset) + " values");
  }
  std::printf("   every lane ends with 496 = 0 + 1 + ... + 31; shared-memory accesses: %llu, barriers: none\n",
              (unsigned long long)shared);
  expect(shared == 0, "the butterfly touches no shared memory");

  std::printf("   votes, reductions and matches over x = (7·lane mod 11) - 5:\n");
  std::vector<int> x(32);
  for (int i = 0; i < 32; ++i) x[i] = (7 * i) % 11 - 5;
  Device<int> d_x(32);
  Device<unsigned> out(5 * 32);
  WARPNET_CUDA_CHECK(cudaMemcpy(d_x.p, x.data(), 32 * sizeof(int), cudaMemcpyHostToDevice));
  simt::launch(warp_votes, dim3(1), dim3(32), 0, d_x.p, out.p);
  const auto r = out.get();
  unsigned yes = 0, same = 0;
  int sum = 0, most = x[0];
  for (int i = 0; i < 32; ++i) {
    yes |= unsigned(x[i] > 0) << i;
    same |= unsigned((x[i] & 3) == (x[0] & 3)) << i;
    sum += x[i];
    most = std::max(most, x[i]);
  }
  std::printf("   __ballot_sync(x > 0)       0x%08x: %u lanes said yes (__popc)\n", r[0], r[32]);
  std::printf("   __reduce_add_sync(x)       %d, in every lane\n", int(r[64]));
  std::printf("   __reduce_max_sync(x)       %d\n", int(r[96]));
  std::printf("   __match_any_sync(x & 3)    lane 0's group 0x%08x: the lanes with its remainder\n", r[128]);
  bool agree = true;  // every lane got the warp-wide answers; the match is per lane
  for (int l = 0; l < 32; ++l)
    agree = agree && r[l] == yes && r[64 + l] == unsigned(sum) && r[96 + l] == unsigned(most);
  expect(agree && r[0] == yes && int(r[32]) == std::popcount(yes) && r[128] == same,
         "ballot, popcount, sum, maximum and match equal what the host computes from x");

  // A histogram: 1000 keys in 8 bins, each thread adding its key's 1.
  const int n = 1000, bins = 8;
  std::vector<int> keys(n), want(bins, 0);
  for (int i = 0; i < n; ++i) keys[i] = (i * i + 3 * i) % 13 % bins, ++want[keys[i]];
  Device<int> d_keys(n), counts(bins);
  WARPNET_CUDA_CHECK(cudaMemcpy(d_keys.p, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  std::printf("   a histogram of %d keys in %d bins, 256 threads a block:\n", n, bins);
  uint64_t atomics[2] = {};
  for (int per_key = 0; per_key < 2; ++per_key) {
    WARPNET_CUDA_CHECK(cudaMemset(counts.p, 0, bins * sizeof(int)));
    simt::launch(per_key ? histogram_per_key : histogram_per_lane, dim3((n + 255) / 256), dim3(256), 0, d_keys.p,
                 counts.p, n);
    const auto trace = simt::last_trace();
    atomics[per_key] = trace->atomics;
    std::printf("   %-22s %4llu atomics (%.1f a warp)\n",
                per_key ? "one per key a warp:" : "one per thread:", (unsigned long long)trace->atomics,
                double(trace->atomics) / double(trace->warps));
    expect(counts.get() == want, "the histogram's counts equal the host's");
  }
  expect(atomics[0] == uint64_t(n) && atomics[1] * 3 < atomics[0],
         "per key, under a third of the atomics: a warp's 32 keys fall in at most 8 bins");
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<bool> markdown = lesson::parse_markdown(argc, argv, "the README's softmax tables only");
  if (!markdown) return 2;
  simt::set_workers(1);  // blocks in order: the same output every run
  if (*markdown) {
    lesson03::softmax_ladder(true);
    return lesson::failures() ? 1 : 0;
  }
  std::printf("Lesson 03 on the SIMT emulator (this CPU: %u hardware threads, the chefs; an H200: 132 SMs x 128 "
              "FP32 lanes = 16896 helpers)\n\n",
              std::thread::hardware_concurrency());
  who_am_i();
  simt_branch();
  coalescing();
  bank_conflicts();
  occupancy_table();
  bugs();
  warp_talk();
  lesson03::softmax_ladder(false);
  if (lesson::failures()) std::printf("\n%d figure(s) differ from the lesson\n", lesson::failures());
  return lesson::failures() ? 1 : 0;
}
