// Hopper's asynchronous units in the emulator: mbarriers, the TMA copy engine
// and wgmma (sm_90a). The device-side entry points the PTX wrappers
// (simt/ptx_hopper.hpp) call, and the per-block state the scheduler keeps.
//
// The model, and how it catches what a GPU would get wrong silently:
//   - An mbarrier lives at an 8-byte shared address; its state (expected and
//     pending arrivals, transaction bytes, completed phases) is kept here,
//     keyed by that address. A wait on a phase that has not completed parks
//     the thread; when no thread of the block can run, the scheduler lets
//     the copy engine work and wakes the threads whose phase completed. If
//     none did, the launch fails naming the barrier and what it still waits for.
//   - TMA copies are queued when issued and made only when no thread can run:
//     the latest moment, so a consumer that reads a stage without waiting on
//     its barrier reads stale bytes here as it might on the GPU.
//   - wgmma.mma_async is queued per warp and computed at the
//     wgmma.wait_group that retires its group, reading shared memory then:
//     a stage refilled before the wait retired its wgmma shows up as a wrong
//     product. Each warp of a warpgroup computes its own 16 rows of the m64
//     result (the accumulator layout gives warp w rows 16w..16w+15).
//   - Shared addresses: the emulator puts dynamic shared memory at shared
//     address kDynamicSharedAddress (not 1024-aligned on purpose, so a kernel
//     must align its swizzled tiles itself, as on a GPU); static __shared__
//     variables have no shared address here (no instruction below accepts them).
// Descriptors and swizzles: 128-byte swizzle only (TMA and wgmma), the mode
// Hopper GEMMs use; other modes are refused with an error, never guessed.
// Not traced: TMA and wgmma move bytes in the library, so the tracer and the
// race checker do not see them (as they do not see registers).
#pragma once
#include <cstdint>

#include "simt/tensor_map.hpp"

namespace warpnet::simt {

inline constexpr uint32_t kDynamicSharedAddress = 0x480;

// The shared-window address of a byte of dynamic shared memory (cvta.to.shared).
uint32_t shared_address(const void* pointer);

// mbarrier.init / arrive (with expect_tx bytes, 0 for a plain arrive) /
// try_wait.parity until it succeeds (parks).
void mbarrier_init(uint64_t* bar, uint32_t count);
void mbarrier_arrive(uint64_t* bar, uint32_t expect_tx_bytes, const char* instruction);
void mbarrier_wait_parity(uint64_t* bar, uint32_t parity);

// cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes:
// the box of `map` at coords (innermost first) into shared `dst`, counted on `bar`.
void tma_load(void* dst, const CUtensorMap* map, const int* coords, int rank, uint64_t* bar);
// ....global.im2col.mbarrier::complete_tx::bytes: the pixels of an im2col map
// (TensorMapFields::lower says the walk) from coords (channel, then the
// spatial dimensions, then the image), each read at its position plus
// offsets (rank - 2 of them, innermost first).
void tma_load_im2col(void* dst, const CUtensorMap* map, const int* coords, int rank, const uint16_t* offsets,
                     uint64_t* bar);

// Clusters (cluster.hpp): %cluster_ctarank; barrier.cluster.arrive + wait.
unsigned cluster_ctarank();
void cluster_sync();
// mapa + mbarrier.arrive.shared::cluster: arrive on the
// mbarrier at `bar`'s offset in the shared memory of CTA `cta` of the cluster.
void mbarrier_arrive_remote(uint64_t* bar, uint32_t cta);
// ....multicast::cluster: the box lands at `dst`'s offset in every CTA of
// `cta_mask` (bit r: rank r), each completing on the mbarrier at `bar`'s offset there.
void tma_load_multicast(void* dst, const CUtensorMap* map, const int* coords, int rank, uint64_t* bar,
                        uint16_t cta_mask);

// wgmma operand element types.
enum class WgmmaInput : uint8_t { f16, bf16, e4m3 };

// wgmma.mma_async.sync.aligned.m64nNkK.f32.<in>.<in>: d (64,N) += a (64,K) @ b (K,N),
// a and b read from shared memory through descriptors; each thread holds N/2
// of d's floats (the accumulator layout of the PTX ISA).
struct WgmmaShape {
  int n;            // 8..256, a multiple of 8
  int k;            // 16 for f16/bf16, 32 for e4m3
  WgmmaInput input;
  bool mn_major_a, mn_major_b;  // imm-trans-a / imm-trans-b (16-bit inputs only)
};
// `traced`: issued by a traced kernel, whose stores the checker has seen, so
// its operands are checked against them (Checker::async_proxy_read).
void wgmma_issue(const char* instruction, const WgmmaShape& shape, float* d, uint64_t desc_a, uint64_t desc_b,
                 bool traced);
void wgmma_fence();
// fence.proxy.async.shared::cta: the thread's plain shared stores (and
// cp.async copies) so far become visible to wgmma and TMA; the traced
// build's checker asks for it before a wgmma reads such bytes.
void fence_proxy_async();
void wgmma_commit();
void wgmma_wait(unsigned pending);

}  // namespace warpnet::simt
