// Hopper (sm_90a) PTX wrappers on both compilers: inline PTX under nvcc, the
// emulator's model under g++ (src/simt/ptx_hopper.hpp; src/simt/hopper.hpp
// says what it models). Shared memory is named by pointers here; under nvcc
// they become shared-space addresses (cvta.to.shared) inside the wrappers.
//
//   shared_address(p)                        the shared-space address of p (for wgmma descriptors)
//   mbarrier_init, fence_mbarrier_init       a barrier in shared memory, made visible to the copy engine
//   mbarrier_arrive_expect_tx, _arrive       arrive (announcing TMA bytes to come)
//   mbarrier_wait(bar, parity)               until the phase of that parity has completed
//   tma_load_2d(dst, map, c0, c1, bar)       a TMA box of a CUtensorMap into shared memory, counted on bar
//   tma_load_3d, tma_load_4d                 the same for maps of rank 3 and 4 (conv's NHWC images, KRSC filters)
//   tma_load_im2col_4d(dst, map, c, w, h, n, off_w, off_h, bar)
//                                            a run of pixels of an NHWC image's im2col map, read at a tap's offsets
//   cluster_ctarank, cluster_sync            this CTA's rank in its cluster; the barrier of every thread of it
//   mbarrier_arrive_cluster(bar, cta)        arrive on the mbarrier at bar's offset in CTA cta of the cluster
//   tma_load_2d_multicast(..., bar, mask)    tma_load_2d into every CTA of mask, each counted on its own bar
//   tma_load_3d_multicast(..., bar, mask)    the same for a map of rank 3 (conv's KRSC filters)
//   fence_proxy_async_shared()               the thread's plain shared stores, before what TMA/wgmma read next
//   wgmma_fence / _commit / _wait<N>         order, group, and retire asynchronous wgmmas
//   wgmma_m64n64k16_bf16<TransA, TransB>     d (64,64) += a (64,16) @ b (16,64), bf16, fp32 accumulators
//   wgmma_m64n128k16_bf16<TransA, TransB>    d (64,128) += a (64,16) @ b (16,128), bf16, fp32 accumulators
//   wgmma_m64n128k32_e4m3                    d (64,128) += a (64,32) @ b (32,128), fp8 e4m3 (K-major both)
//   wgmma_m64n256k16_bf16<TransA, TransB>    d (64,256) += a (64,16) @ b (16,256), bf16, fp32 accumulators
//   wgmma_m64n256k32_e4m3                    d (64,256) += a (64,32) @ b (32,256), fp8 e4m3 (K-major both)
//   setmaxnreg_dec<N> / _inc<N>              shrink or grow the warpgroup's registers per thread to N
//   driver_entry_point<PFN>(symbol)          (host) a driver function such as cuTensorMapEncodeTiled, or null
//
// WARPNET_HOPPER_PTX is 1 where these exist: the emulator, and nvcc's device
// pass for sm_90a. A kernel built on them guards its body with it and traps
// elsewhere (a plain sm_90 or older GPU has no wgmma), never a wrong answer.
#pragma once
#include <cstdint>

#include "kernels/common/cuda_compat.hpp"

#if defined(__CUDACC__)
#include <cudaTypedefs.h>  // CUtensorMap, PFN_cuTensorMapEncodeTiled: declarations only, no -lcuda
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WARPNET_HOPPER_PTX 1
#else
#define WARPNET_HOPPER_PTX 0
#endif
#else
#include "simt/ptx_hopper.hpp"
#define WARPNET_HOPPER_PTX 1
#endif

#if defined(__CUDACC__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace warpnet::ptx {

__device__ __forceinline__ uint32_t shared_address(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Arrive once and raise the bytes the current phase waits for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
// Spin until the phase with this parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}
// TMA: the box at coordinates (c0 innermost, c1) of `map` into shared `dst`, completing on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(shared_address(bar))
      : "memory");
}
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(shared_address(bar))
      : "memory");
}
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, int c0, int c1, int c2, int c3,
                                            uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(shared_address(bar))
      : "memory");
}
// TMA's im2col mode: the map's pixelsPerColumn pixels of x (N,H,W,C), walked
// from (w, h) of image n through the map's bounding box, channels c.. of
// each, every one read at its position + (off_w, off_h), the filter tap;
// zeros outside the image.
__device__ __forceinline__ void tma_load_im2col_4d(void* dst, const CUtensorMap* map, int c, int w, int h, int n,
                                                   uint16_t off_w, uint16_t off_h, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(shared_address(bar)), "h"(off_w),
      "h"(off_h)
      : "memory");
}

// Clusters (launch_kernel_in_clusters). A CTA's rank in its cluster (x fastest).
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}
// Every thread of every CTA of the cluster arrives, then waits for the rest:
// release and acquire at cluster scope (mbarriers initialized before it are
// visible to the peers after it). The .aligned forms want every lane of the
// warp at the same instruction; kernels reach their last one from a branch
// only a producer lane took, so the warp reconverges first.
__device__ __forceinline__ void cluster_sync() {
  __syncwarp();
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// Arrive on the mbarrier at the same shared offset as `bar`, in CTA `cta` of the cluster (mapa).
// The default semantics (release at CTA scope), as CUTLASS's
// ClusterBarrier::arrive(cta_id) writes it: what the arrival publishes is
// that this CTA is done reading a stage of its own shared memory (its
// wgmma.wait_group retired the reads), not data for the peer to read.
// Written .release.cluster, ptxas fences every earlier global store of the
// thread (MEMBAR.GPU) before each arrival, on every k-step.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(cta)
      : "memory");
}
// tma_load_2d into the same shared offset of every CTA whose bit is set in
// cta_mask (this one's too, if set); each completes on its own mbarrier at bar's offset.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar,
                                                      uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(shared_address(bar)), "h"(cta_mask)
      : "memory");
}
__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const CUtensorMap* map, int c0, int c1, int c2,
                                                      uint64_t* bar, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(shared_address(bar)), "h"(cta_mask)
      : "memory");
}

// Shared memory written by plain stores (the generic proxy) and then read by
// a wgmma or a TMA store (the async proxy): the fence, then a barrier, between.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// d (64,64) += a (64,16) @ b (16,64), bf16 from shared memory through descriptors,
// fp32 in registers (32 per thread). TransA/TransB: 1 when the operand's tile is MN-major.
template <int TransA, int TransB>
__device__ __forceinline__ void wgmma_m64n64k16_bf16(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
      ", %32, %33, 1, 1, 1, %34, %35;\n"  // scale-d 1: d += a @ b; imm-scale-a/b 1
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "n"(TransA), "n"(TransB)
      : "memory");
}

// The 64 accumulator operands of an m64n128 wgmma, as asm operand list text and constraints.
#define WARPNET_WGMMA_D64                                                                                           \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                         \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                                \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                                \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define WARPNET_WGMMA_D64_OPERANDS(d)                                                                               \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),       \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),        \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),       \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),       \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),       \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),       \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// d (64,128) += a (64,16) @ b (16,128), bf16 from shared memory through descriptors,
// fp32 in registers (64 per thread). TransA/TransB: 1 when the operand's tile is MN-major.
template <int TransA, int TransB>
__device__ __forceinline__ void wgmma_m64n128k16_bf16(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WARPNET_WGMMA_D64
               ", %64, %65, 1, 1, 1, %66, %67;\n"  // scale-d 1: d += a @ b; imm-scale-a/b 1
               : WARPNET_WGMMA_D64_OPERANDS(d)
               : "l"(desc_a), "l"(desc_b), "n"(TransA), "n"(TransB)
               : "memory");
}
// d (64,128) += a (64,32) @ b (32,128), fp8 e4m3: both tiles K-major (no
// transpose for 8-bit types), no trans operands in the instruction.
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " WARPNET_WGMMA_D64
               ", %64, %65, 1, 1, 1;\n"  // scale-d 1; imm-scale-a/b 1
               : WARPNET_WGMMA_D64_OPERANDS(d)
               : "l"(desc_a), "l"(desc_b)
               : "memory");
}
#undef WARPNET_WGMMA_D64
#undef WARPNET_WGMMA_D64_OPERANDS


// The 128 accumulator operands of an m64n256 wgmma, as asm operand list text and constraints.
#define WARPNET_WGMMA_D128 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define WARPNET_WGMMA_D128_OPERANDS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// d (64,256) += a (64,16) @ b (16,256), bf16 from shared memory through descriptors,
// fp32 in registers (128 per thread). TransA/TransB: 1 when the operand's tile is MN-major.
template <int TransA, int TransB>
__device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WARPNET_WGMMA_D128
               ", %128, %129, 1, 1, 1, %130, %131;\n"  // scale-d 1: d += a @ b; imm-scale-a/b 1
               : WARPNET_WGMMA_D128_OPERANDS(d)
               : "l"(desc_a), "l"(desc_b), "n"(TransA), "n"(TransB)
               : "memory");
}
// d (64,256) += a (64,32) @ b (32,256), fp8 e4m3: both tiles K-major (no
// transpose for 8-bit types), no trans operands in the instruction.
__device__ __forceinline__ void wgmma_m64n256k32_e4m3(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " WARPNET_WGMMA_D128
               ", %128, %129, 1, 1, 1;\n"  // scale-d 1; imm-scale-a/b 1
               : WARPNET_WGMMA_D128_OPERANDS(d)
               : "l"(desc_a), "l"(desc_b)
               : "memory");
}
#undef WARPNET_WGMMA_D128
#undef WARPNET_WGMMA_D128_OPERANDS

// Register reallocation between warpgroups: every thread of the executing
// warpgroup shrinks (dec) or grows (inc) its register allocation to
// Registers (24..256, a multiple of 8). A producer that only issues copies
// gives registers back so the consumers' accumulators fit without spilling.
template <int Registers>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(Registers >= 24 && Registers <= 256 && Registers % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <int Registers>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(Registers >= 24 && Registers <= 256 && Registers % 8 == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

}  // namespace warpnet::ptx
#endif

namespace warpnet {

// A driver entry point (cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col)
// found through the runtime, so the program needs no -lcuda; null when the
// driver lacks it. Host code, on both compilers (the emulator's driver
// answers for those two: simt/tensor_map.cpp).
template <class Function>
inline Function driver_entry_point(const char* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Function>(p);
}

}  // namespace warpnet
