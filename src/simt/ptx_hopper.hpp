// The Hopper PTX wrappers of kernels/common/hopper.hpp as the emulator runs
// them: the same names and signatures, the model of simt/hopper.hpp.
// Included only under g++.
#pragma once
#include <cstdint>

#include "simt/copy_namespace.hpp"
#include "simt/hopper.hpp"

namespace warpnet::ptx {
inline namespace WARPNET_SIMT_COPY {

inline uint32_t shared_address(const void* p) { return simt::shared_address(p); }

inline void mbarrier_init(uint64_t* bar, uint32_t count) { simt::mbarrier_init(bar, count); }
// Makes the initializations visible to the copy engine: nothing to do here,
// where the copy engine runs only between threads.
inline void fence_mbarrier_init() {}
inline void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  simt::mbarrier_arrive(bar, bytes, "mbarrier.arrive.expect_tx.shared::cta.b64");
}
inline void mbarrier_arrive(uint64_t* bar) { simt::mbarrier_arrive(bar, 0, "mbarrier.arrive.shared::cta.b64"); }
inline void mbarrier_wait(uint64_t* bar, uint32_t parity) { simt::mbarrier_wait_parity(bar, parity); }

inline void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  const int coords[2] = {c0, c1};
  simt::tma_load(dst, map, coords, 2, bar);
}
inline void tma_load_3d(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
  const int coords[3] = {c0, c1, c2};
  simt::tma_load(dst, map, coords, 3, bar);
}
inline void tma_load_4d(void* dst, const CUtensorMap* map, int c0, int c1, int c2, int c3, uint64_t* bar) {
  const int coords[4] = {c0, c1, c2, c3};
  simt::tma_load(dst, map, coords, 4, bar);
}
inline void tma_load_im2col_4d(void* dst, const CUtensorMap* map, int c, int w, int h, int n, uint16_t offset_w,
                               uint16_t offset_h, uint64_t* bar) {
  const int coords[4] = {c, w, h, n};
  const uint16_t offsets[2] = {offset_w, offset_h};
  simt::tma_load_im2col(dst, map, coords, 4, offsets, bar);
}

// Clusters (simt/cluster.hpp): this CTA's rank in its cluster, the cluster
// barrier, an arrive on a peer's mbarrier, a TMA copy into several CTAs.
inline uint32_t cluster_ctarank() { return simt::cluster_ctarank(); }
inline void cluster_sync() { simt::cluster_sync(); }
inline void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) { simt::mbarrier_arrive_remote(bar, cta); }
inline void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar, uint16_t cta_mask) {
  const int coords[2] = {c0, c1};
  simt::tma_load_multicast(dst, map, coords, 2, bar, cta_mask);
}
inline void tma_load_3d_multicast(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar,
                                  uint16_t cta_mask) {
  const int coords[3] = {c0, c1, c2};
  simt::tma_load_multicast(dst, map, coords, 3, bar, cta_mask);
}

// Orders plain shared stores before the async proxy's reads: the values are
// there already, but the traced build checks that a wgmma reads none
// without it.
inline void fence_proxy_async_shared() { simt::fence_proxy_async(); }

inline void wgmma_fence() { simt::wgmma_fence(); }
inline void wgmma_commit() { simt::wgmma_commit(); }
template <int Pending>
inline void wgmma_wait() {
  simt::wgmma_wait(unsigned(Pending));
}

template <int TransA, int TransB>
inline void wgmma_m64n64k16_bf16(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  static constexpr simt::WgmmaShape shape{64, 16, simt::WgmmaInput::bf16, TransA != 0, TransB != 0};
  simt::wgmma_issue("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", shape, d, desc_a, desc_b,
                    WARPNET_SIMT_TRACED);
}
template <int TransA, int TransB>
inline void wgmma_m64n128k16_bf16(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  static constexpr simt::WgmmaShape shape{128, 16, simt::WgmmaInput::bf16, TransA != 0, TransB != 0};
  simt::wgmma_issue("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", shape, d, desc_a, desc_b,
                    WARPNET_SIMT_TRACED);
}
inline void wgmma_m64n128k32_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  static constexpr simt::WgmmaShape shape{128, 32, simt::WgmmaInput::e4m3, false, false};
  simt::wgmma_issue("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", shape, d, desc_a, desc_b,
                    WARPNET_SIMT_TRACED);
}

template <int TransA, int TransB>
inline void wgmma_m64n256k16_bf16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  static constexpr simt::WgmmaShape shape{256, 16, simt::WgmmaInput::bf16, TransA != 0, TransB != 0};
  simt::wgmma_issue("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", shape, d, desc_a, desc_b,
                    WARPNET_SIMT_TRACED);
}
inline void wgmma_m64n256k32_e4m3(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  static constexpr simt::WgmmaShape shape{256, 32, simt::WgmmaInput::e4m3, false, false};
  simt::wgmma_issue("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", shape, d, desc_a, desc_b,
                    WARPNET_SIMT_TRACED);
}

// setmaxnreg: a no-op here. Registers are not modelled (a fiber's locals live
// on its stack, never short of room), so giving them back or taking more
// changes nothing the emulator can see; the range is checked as ptxas would.
template <int Registers>
inline void setmaxnreg_dec() {
  static_assert(Registers >= 24 && Registers <= 256 && Registers % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
}
template <int Registers>
inline void setmaxnreg_inc() {
  static_assert(Registers >= 24 && Registers <= 256 && Registers % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
}

}  // inline namespace WARPNET_SIMT_COPY
}  // namespace warpnet::ptx
