// Sector and bank-conflict counting for hand-made warp requests.
#include <doctest/doctest.h>

#include "simt/trace.hpp"

using namespace warpnet::simt;

namespace {

std::array<uintptr_t, 32> lanes(uintptr_t base, uintptr_t stride) {
  std::array<uintptr_t, 32> a{};
  for (unsigned l = 0; l < 32; ++l) a[l] = base + l * stride;
  return a;
}

}  // namespace

TEST_CASE("sectors: coalesced, strided, broadcast, misaligned and partial warps") {
  CHECK(sectors_touched(lanes(1024, 4), ~0u, 4) == 4);
  CHECK(sectors_touched(lanes(1024, 128), ~0u, 4) == 32);
  CHECK(ideal_sectors(lanes(1024, 128), ~0u, 4) == 4);
  CHECK(sectors_touched(lanes(1024, 0), ~0u, 4) == 1);  // broadcast
  CHECK(ideal_sectors(lanes(1024, 0), ~0u, 4) == 1);
  CHECK(sectors_touched(lanes(1028, 4), ~0u, 4) == 5);  // misaligned by one float
  CHECK(sectors_touched(lanes(1024, 16), ~0u, 16) == 16);  // float4 per lane: 512 bytes
  CHECK(sectors_touched(lanes(1024, 4), 0x0000ffffu, 4) == 2);  // half the warp active
}

TEST_CASE("shared wavefronts: strides, broadcast and wide accesses") {
  CHECK(shared_wavefronts(lanes(0, 4), ~0u, 4) == 1);
  CHECK(shared_wavefronts(lanes(0, 8), ~0u, 4) == 2);     // stride 2 words: 2-way
  CHECK(shared_wavefronts(lanes(0, 128), ~0u, 4) == 32);  // stride 32 words: one bank
  CHECK(shared_wavefronts(lanes(0, 132), ~0u, 4) == 1);   // stride 33 words: all banks
  CHECK(shared_wavefronts(lanes(0, 0), ~0u, 4) == 1);     // broadcast
  CHECK(shared_wavefronts(lanes(0, 8), ~0u, 8) == 2);     // float2: two half-warp passes
  CHECK(shared_wavefronts(lanes(0, 16), ~0u, 16) == 4);   // float4: four quarter-warp passes
}

TEST_CASE("wide range accesses: every sector counted, no lane past the warp") {
  // 64-byte structs, one float off a sector: each lane touches 3 sectors, the
  // warp the 2048 bytes from 1028, sectors 32 to 96 (a list of 64 held fewer).
  CHECK(sectors_touched(lanes(1028, 64), ~0u, 64) == 65);
  CHECK(ideal_sectors(lanes(1024, 64), ~0u, 64) == 64);
  // 12 bytes a lane (a float3 copied whole): ten lanes a pass, the last pass
  // holds lanes 30 and 31 only. Consecutive float3s: 1 wavefront a pass.
  CHECK(shared_wavefronts(lanes(0, 12), ~0u, 12) == 4);
  CHECK(ideal_shared_wavefronts(~0u, 12) == 4);
}

TEST_CASE("ideal shared wavefronts: one per pass that has an active lane") {
  CHECK(ideal_shared_wavefronts(~0u, 4) == 1);
  CHECK(ideal_shared_wavefronts(~0u, 8) == 2);
  CHECK(ideal_shared_wavefronts(~0u, 16) == 4);
  CHECK(ideal_shared_wavefronts(0x1u, 4) == 1);
  // Lanes 0 and 16 of a float2 access are in different half-warp passes:
  // two wavefronts, neither a conflict.
  CHECK(ideal_shared_wavefronts(0x00010001u, 8) == 2);
  CHECK(shared_wavefronts(lanes(0, 8), 0x00010001u, 8) == 2);
  // One lane in each quarter of a float4 access: four passes.
  CHECK(ideal_shared_wavefronts(0x01010101u, 16) == 4);
  CHECK(shared_wavefronts(lanes(0, 16), 0x01010101u, 16) == 4);
  // The first half warp only: one pass of a float2 access.
  CHECK(ideal_shared_wavefronts(0x0000ffffu, 8) == 1);
}
