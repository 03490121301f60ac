// Hopper's asynchronous units in the emulator (hopper.hpp says the model).
#include "simt/hopper_units.hpp"

#include <algorithm>
#include <cstring>

#include "simt/allocations.hpp"
#include "simt/block.hpp"
#include "simt/checker.hpp"
#include "simt/cluster.hpp"
#include "simt/minifloat.hpp"
#include "simt/tensor_cores.hpp"
#include "simt/symbols.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {
namespace {

std::string hex32(uint32_t v) { return cat("0x", std::hex, v); }

[[noreturn]] void misuse(const Lane& lane, const char* instruction, const std::string& why) {
  throw LaunchError(cudaErrorLaunchFailure, cat(current_block->where(lane), ": ", instruction, ": ", why,
                                                " (on a GPU: undefined behaviour)"));
}
// From the scheduler (a warp's wgmma runs there): no lane is current.
[[noreturn]] void warp_misuse(unsigned warp, const char* instruction, const std::string& why) {
  throw LaunchError(cudaErrorLaunchFailure, cat(current_block->where(), ", warp ", warp, ": ", instruction, ": ",
                                                why, " (on a GPU: undefined behaviour)"));
}

// The bytes [address, address + bytes) of the shared window, as a host pointer; null when outside.
unsigned char* shared_bytes(uint32_t address, size_t bytes) {
  const Block& block = *current_block;
  const size_t size = block.shape().dynamic_shared;
  if (address < kDynamicSharedAddress || address - kDynamicSharedAddress + bytes > size) return nullptr;
  return static_cast<unsigned char*>(block.dynamic_shared()) + (address - kDynamicSharedAddress);
}

// The 128-byte swizzle on a shared address: the 16-byte chunk c of a 128-byte
// row r moves to chunk c ^ (r % 8). TMA writes and wgmma reads through it alike.
uint32_t swizzle128(uint32_t address) { return address ^ (((address >> 7) & 7u) << 4); }

MBarrier& barrier_at(const Lane& lane, uint64_t* bar, const char* instruction) {
  auto found = current_block->hopper().barriers.find(bar);
  if (found == current_block->hopper().barriers.end())
    misuse(lane, instruction, cat("no mbarrier was initialized at shared address ", hex32(shared_address(bar))));
  const MBarrier& b = found->second;
  if (b.init_thread != lane.linear && b.init_epoch == current_block->barrier_epoch())
    misuse(lane, instruction,
           cat("the mbarrier at shared address ", hex32(shared_address(bar)), " was initialized by thread ",
               format_dim(current_block->lane(b.init_thread).tid), " with no __syncthreads() since, so its "
               "initialization is not yet visible to this thread (initialize, fence.mbarrier_init, then "
               "__syncthreads())"));
  return found->second;
}

// A phase completes when its arrivals and its transaction bytes are all in.
// Its arrivals' clocks become what its waits acquire; the TMA bytes that may
// complete it release nothing (no thread made those writes).
void maybe_complete(MBarrier& b) {
  if (b.pending == 0 && b.tx == 0) {
    ++b.completed;
    b.pending = b.expected;
    std::swap(b.released, b.arriving);
    std::fill(b.arriving.begin(), b.arriving.end(), 0u);  // the next phase starts with no arrival
  }
}

// The race checker (traced launches only) takes an arrive as a release and a
// wait that returns for a completed phase as an acquire of its arrivals.
void release(const Lane& lane, MBarrier& b) {
  if (Checker* checker = current_block->checker_if_traced()) checker->mbarrier_release(lane, b.arriving);
}
void acquire(Block& block, const Lane& lane, const MBarrier& b) {
  if (Checker* checker = block.checker_if_traced()) checker->mbarrier_acquire(lane, b.released);
}

bool phase_done(const MBarrier& b, uint32_t parity) { return (b.completed & 1u) != (parity & 1u); }

}  // namespace

uint32_t shared_address(const void* pointer) {
  LibraryScope scope;
  const Lane& lane = this_lane("cvta.to.shared");
  const Block& block = *current_block;
  const auto* base = static_cast<const unsigned char*>(block.dynamic_shared());
  const auto* p = static_cast<const unsigned char*>(pointer);
  if (p < base || p >= base + block.shape().dynamic_shared)
    misuse(lane, "cvta.to.shared",
           cat("address ", pointer, " is not in the block's dynamic shared memory (the emulator gives shared-space "
               "addresses to dynamic shared memory only)"));
  return kDynamicSharedAddress + uint32_t(p - base);
}

void mbarrier_init(uint64_t* bar, uint32_t count) {
  LibraryScope scope;
  const Lane& lane = this_lane("mbarrier.init");
  const uint32_t address = shared_address(bar);
  if (address % 8 != 0) misuse(lane, "mbarrier.init", cat("shared address ", hex32(address), " is not 8-byte aligned"));
  if (count == 0 || count >= (1u << 20)) misuse(lane, "mbarrier.init", cat("count ", count, " is outside [1, 2^20)"));
  MBarrier& b = current_block->hopper().barriers[bar] =
      MBarrier{count, count, 0, 0, lane.linear, current_block->barrier_epoch(), 0, {}, {}};  // no clocks released yet
  if (const Cluster* cluster = current_block->cluster()) b.init_cluster_phase = cluster->phases();
}

void mbarrier_arrive(uint64_t* bar, uint32_t expect_tx_bytes, const char* instruction) {
  LibraryScope scope;
  const Lane& lane = this_lane(instruction);
  MBarrier& b = barrier_at(lane, bar, instruction);
  if (b.pending == 0)
    misuse(lane, instruction,
           cat("more arrivals than the ", b.expected, " the mbarrier at ", hex32(shared_address(bar)),
               " was initialized with, in one phase"));
  release(lane, b);
  b.tx += expect_tx_bytes;
  --b.pending;
  maybe_complete(b);
}

void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  Lane* lane;
  {
    LibraryScope scope;
    lane = &this_lane("mbarrier.try_wait.parity");
    const MBarrier& b = barrier_at(*lane, bar, "mbarrier.try_wait.parity");
    if (phase_done(b, parity)) {
      acquire(*current_block, *lane, b);  // the phase of that parity that completed last
      return;
    }
    lane->state = LaneState::at_mbarrier;
    lane->mbarrier = bar;
    lane->mbarrier_phase = b.completed;  // the phase in progress has the parity it waits for
    lane->value = parity;
    lane->site = __builtin_return_address(0);
  }
  current_block->park(*lane);  // HopperUnits::settle makes it ready again
}

namespace {

// The copy a TMA load asks for, checked against this block's shared memory.
// `offsets` (im2col only, rank - 2 of them) are the filter tap's.
TmaCopy checked_copy(const Lane& lane, const char* instruction, void* dst, const CUtensorMap* map, const int* coords,
                     int rank, uint64_t* bar, const uint16_t* offsets = nullptr) {
  const std::optional<TensorMapFields> fields = tensor_map_fields(*map);
  if (!fields) misuse(lane, instruction, "the tensor map was never encoded by cuTensorMapEncodeTiled or _Im2col");
  TmaCopy copy{*fields, static_cast<unsigned char*>(dst), shared_address(dst), 0, {}, {}, bar};
  const TensorMapFields& m = copy.map;
  if (int(m.rank) != rank)
    misuse(lane, instruction, cat("a ", rank, "-d copy of a rank-", unsigned(m.rank), " tensor map"));
  if (m.im2col != (offsets != nullptr))
    misuse(lane, instruction, m.im2col ? "a tiled copy of an im2col tensor map (cuTensorMapEncodeIm2col): use .im2col"
                                       : "an .im2col copy of a tiled tensor map (cuTensorMapEncodeTiled)");
  if (copy.dst_address % 128 != 0)
    misuse(lane, instruction, cat("shared destination ", hex32(copy.dst_address), " is not 128-byte aligned"));
  uint64_t extent = m.element_bytes;  // from the first element to past the last
  for (uint32_t d = 0; d < m.rank; ++d) extent += (m.dims[d] - 1) * m.strides[d];
  if (!find_allocation(reinterpret_cast<const void*>(m.global), extent))
    misuse(lane, instruction, cat("the tensor map describes ", extent, " bytes at ", reinterpret_cast<const void*>(m.global),
                                  ", which do not lie inside one cudaMalloc allocation"));
  for (int i = 0; i < rank; ++i) copy.coords[i] = coords[i];
  uint64_t box_bytes = m.element_bytes;
  if (m.im2col) {
    box_bytes *= uint64_t(m.box[0]) * m.box[1];  // channels per pixel x pixels per column
    for (int d = 1; d + 1 < rank; ++d) {
      copy.offsets[d - 1] = offsets[d - 1];
      const int64_t end = int64_t(m.dims[d]) + m.upper[d - 1];
      if (coords[d] < m.lower[d - 1] || coords[d] >= end)
        misuse(lane, instruction, cat("the first pixel's coordinate ", coords[d], " in dimension ", d,
                                      " lies outside the bounding box [", m.lower[d - 1], ", ", end, ")"));
    }
  } else {
    for (int i = 0; i < rank; ++i) box_bytes *= box_elements(m, uint32_t(i));
  }
  if (!shared_bytes(copy.dst_address, box_bytes))
    misuse(lane, instruction, cat("the ", box_bytes, "-byte box at shared address ", hex32(copy.dst_address),
                                  " runs past the block's dynamic shared memory"));
  copy.bytes = uint32_t(box_bytes);
  return copy;
}

// Queues `copy` in `target`'s copy engine (the issuing block's, or a peer's
// for a multicast), after the hazard check against its wgmmas in flight.
void queue_copy(const Lane& lane, const char* instruction, Block& target, TmaCopy copy) {
  const SharedSpan box{copy.dst_address, copy.dst_address + copy.bytes};
  const HopperUnits& units = target.hopper();
  for (size_t w = 0; w < units.warps.size(); ++w)
    for (const WgmmaOp& op : units.warps[w].ops)
      if (box.overlaps(op.a) || box.overlaps(op.b))
        misuse(lane, instruction,
               cat("the copy overwrites shared bytes [", hex32(box.begin), ", ", hex32(box.end), ")",
                   copy.from_peer ? cat(" of CTA ", target.cluster_rank()) : std::string(), " that a wgmma of warp ",
                   w, " (issued at ", describe_code(op.site), ") has not finished reading: its wgmma.wait_group "
                   "must retire it before the stage is released for refilling"));
  target.hopper().copies.push_back(copy);
}

// The same byte of CTA `rank`'s shared memory as `local` is of this block's (mapa).
template <class T>
T* in_peer(const Block& peer, T* local) {
  const auto offset = reinterpret_cast<const unsigned char*>(local) -
                      static_cast<const unsigned char*>(current_block->dynamic_shared());
  return reinterpret_cast<T*>(static_cast<unsigned char*>(peer.dynamic_shared()) + offset);
}

// CTA `rank` of the current block's cluster, checked to still have its shared memory.
Block& peer_cta(const Lane& lane, const char* instruction, uint32_t rank) {
  const Cluster* cluster = current_block->cluster();
  if (!cluster)
    misuse(lane, instruction, "a launch without clusters has no peer CTAs (warpnet::launch_kernel_in_clusters)");
  if (rank >= cluster->size())
    misuse(lane, instruction, cat("CTA ", rank, " of a cluster of ", cluster->size()));
  Block& peer = cluster->cta(rank);
  if (peer.finished())
    misuse(lane, instruction,
           cat("CTA ", rank, " of the cluster (block ", format_dim(peer.index()), ") has exited, and its shared memory "
               "with it: end the kernel with cluster_sync() so that no CTA exits while its peers may still reach it"));
  return peer;
}

// The mbarrier at `local`'s offset in `peer`, initialized there and published by a cluster_sync() since.
MBarrier& peer_barrier(const Lane& lane, const char* instruction, Block& peer, uint64_t* local) {
  if (&peer == current_block) return barrier_at(lane, local, instruction);
  auto found = peer.hopper().barriers.find(in_peer(peer, local));
  const uint32_t address = shared_address(local);
  if (found == peer.hopper().barriers.end())
    misuse(lane, instruction,
           cat("CTA ", peer.cluster_rank(), " has no mbarrier initialized at shared address ", hex32(address)));
  if (found->second.init_cluster_phase >= peer.cluster()->phases())
    misuse(lane, instruction,
           cat("CTA ", peer.cluster_rank(), " initialized its mbarrier at shared address ", hex32(address),
               " with no cluster_sync() since, so the initialization is not yet visible to other CTAs "
               "(initialize, fence.mbarrier_init, then cluster_sync())"));
  return found->second;
}

// Queues a copy of this block's, as the tracer sees it. Recorded as [dst,
// dst + bytes): the 128-byte swizzle moves 16-byte chunks only within their
// 128-byte line, and the box starts 128-byte aligned, so for every box of
// whole lines (all of warpnet's) that is exactly what the copy writes.
void issue_local(const Lane& lane, const char* instruction, void* dst, const TmaCopy& copy, uint64_t* bar,
                 const void* site) {
  MBarrier& barrier = barrier_at(lane, bar, instruction);
  if (Checker* checker = current_block->checker_if_traced())
    checker->tma_copy_issued(lane, reinterpret_cast<uintptr_t>(dst), copy.bytes, site, barrier.arriving);
  queue_copy(lane, instruction, *current_block, copy);
}

}  // namespace

void tma_load(void* dst, const CUtensorMap* map, const int* coords, int rank, uint64_t* bar) {
  LibraryScope scope;
  constexpr const char* instruction = "cp.async.bulk.tensor.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
  const Lane& lane = this_lane(instruction);
  issue_local(lane, instruction, dst, checked_copy(lane, instruction, dst, map, coords, rank, bar), bar,
              __builtin_return_address(0));
}

void tma_load_im2col(void* dst, const CUtensorMap* map, const int* coords, int rank, const uint16_t* offsets,
                     uint64_t* bar) {
  LibraryScope scope;
  constexpr const char* instruction = "cp.async.bulk.tensor.shared::cluster.global.im2col.mbarrier::complete_tx::bytes";
  const Lane& lane = this_lane(instruction);
  issue_local(lane, instruction, dst, checked_copy(lane, instruction, dst, map, coords, rank, bar, offsets), bar,
              __builtin_return_address(0));
}

void tma_load_multicast(void* dst, const CUtensorMap* map, const int* coords, int rank, uint64_t* bar,
                        uint16_t cta_mask) {
  LibraryScope scope;
  constexpr const char* instruction =
      "cp.async.bulk.tensor.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster";
  const Lane& lane = this_lane(instruction);
  const TmaCopy copy = checked_copy(lane, instruction, dst, map, coords, rank, bar);
  const unsigned ctas = current_block->cluster() ? current_block->cluster()->size() : 1;
  if (cta_mask == 0 || cta_mask >> ctas != 0)
    misuse(lane, instruction, cat("CTA mask ", hex32(cta_mask), " names no CTA, or one outside a cluster of ", ctas));
  bool counted = false;  // the first landing counts the global read for all of them
  for (uint32_t r = 0; r < ctas; ++r) {
    if (!(cta_mask >> r & 1)) continue;
    Block& target = peer_cta(lane, instruction, r);
    MBarrier& barrier = peer_barrier(lane, instruction, target, bar);
    TmaCopy landing = copy;
    landing.counted = !counted;
    counted = true;
    if (&target == current_block) {
      if (Checker* checker = current_block->checker_if_traced())
        checker->tma_copy_issued(lane, reinterpret_cast<uintptr_t>(dst), copy.bytes, __builtin_return_address(0),
                                 barrier.arriving);
    } else {
      landing.dst = in_peer(target, copy.dst);
      landing.bar = in_peer(target, bar);
      landing.from_peer = true;
    }
    queue_copy(lane, instruction, target, landing);
  }
}

void mbarrier_arrive_remote(uint64_t* bar, uint32_t cta) {
  LibraryScope scope;
  constexpr const char* instruction = "mbarrier.arrive.shared::cluster.b64";
  const Lane& lane = this_lane(instruction);
  Block& peer = peer_cta(lane, instruction, cta);
  MBarrier& b = peer_barrier(lane, instruction, peer, bar);
  if (b.pending == 0)
    misuse(lane, instruction,
           cat("more arrivals than the ", b.expected, " the mbarrier at ", hex32(shared_address(bar)), " of CTA ", cta,
               " was initialized with, in one phase"));
  if (&peer == current_block) release(lane, b);  // the race checker follows orders within a CTA only
  --b.pending;
  maybe_complete(b);
}

// ---- the block's side ------------------------------------------------------

namespace {

// Row `row` of a copy (box[0] elements of dimension 0 from coords[0]) into
// shared memory, read at byte `offset` of the tensor, zeros where the row or
// an element lies outside it.
void copy_row(const TmaCopy& c, uint32_t row, int64_t offset, bool inside) {
  const TensorMapFields& m = c.map;
  const uint32_t e = m.element_bytes, inner_bytes = m.box[0] * e;
  const auto* global = reinterpret_cast<const unsigned char*>(m.global);
  for (uint32_t i = 0; i < m.box[0]; ++i) {
    const int64_t coord = int64_t(c.coords[0]) + i;
    const bool in = inside && coord >= 0 && uint64_t(coord) < m.dims[0];
    uint32_t address = c.dst_address + row * inner_bytes + i * e;
    if (m.swizzle == CU_TENSOR_MAP_SWIZZLE_128B) address = swizzle128(address);
    unsigned char* to = c.dst + (address - c.dst_address);
    if (in) std::memcpy(to, global + offset + coord * e, e);
    else std::memset(to, 0, e);
  }
}

// One queued tiled copy: the box, element by element, zeros outside the
// tensor; along a dimension with an element stride, every stride-th element
// from the box's coordinate, packed side by side. Returns the bytes it
// completes on its mbarrier (the whole box).
uint32_t make_tiled_copy(const TmaCopy& c) {
  const TensorMapFields& m = c.map;
  uint32_t rows = 1;
  for (uint32_t d = 1; d < m.rank; ++d) rows *= box_elements(m, d);
  for (uint32_t row = 0; row < rows; ++row) {
    // The row's coordinates in dimensions 1..rank-1, and whether it lies inside the tensor.
    int64_t offset = 0;
    bool inside = true;
    for (uint32_t d = 1, rest = row; d < m.rank; ++d) {
      const uint32_t count = box_elements(m, d);
      const int64_t coord = int64_t(c.coords[d]) + int64_t(rest % count) * m.element_strides[d];
      rest /= count;
      inside = inside && coord >= 0 && uint64_t(coord) < m.dims[d];
      offset += coord * int64_t(m.strides[d]);
    }
    copy_row(c, row, offset, inside);
  }
  return uint32_t(m.box[0]) * m.element_bytes * rows;
}

// One queued im2col copy: pixel after pixel of the bounding box's walk
// (TensorMapFields::lower), each one's channels read at its position plus
// the tap's offsets, zeros outside the tensor (the convolution's padding).
uint32_t make_im2col_copy(const TmaCopy& c) {
  const TensorMapFields& m = c.map;
  const uint32_t image = m.rank - 1u;  // the images' dimension; 1..rank-2 are spatial
  int64_t at[5];
  for (uint32_t d = 1; d < m.rank; ++d) at[d] = c.coords[d];
  for (uint32_t pixel = 0; pixel < m.box[1]; ++pixel) {
    int64_t offset = at[image] * int64_t(m.strides[image]);
    bool inside = at[image] >= 0 && at[image] < int64_t(m.dims[image]);
    for (uint32_t d = 1; d < image; ++d) {
      const int64_t coord = at[d] + c.offsets[d - 1];
      inside = inside && coord >= 0 && uint64_t(coord) < m.dims[d];
      offset += coord * int64_t(m.strides[d]);
    }
    copy_row(c, pixel, offset, inside);
    // The next pixel: a step along the innermost spatial dimension, carried outward at the box's ends.
    for (uint32_t d = 1; d <= image; ++d) {
      if (d == image) {
        ++at[d];
        break;
      }
      at[d] += m.element_strides[d];
      if (at[d] < int64_t(m.dims[d]) + m.upper[d - 1]) break;
      at[d] = m.lower[d - 1];
    }
  }
  return uint32_t(m.box[0]) * m.element_bytes * m.box[1];
}

uint32_t make_copy(const TmaCopy& c) { return c.map.im2col ? make_im2col_copy(c) : make_tiled_copy(c); }

// The shared address of element (mn, k) of a wgmma operand, through its
// descriptor: the canonical 128-byte-swizzle layouts of the PTX ISA ("Shared
// Memory Matrix Layout"), in bytes before the swizzle:
//   K-major:  start + (mn / 8) * SBO + (mn % 8) * 128 + k * e
//   MN-major: start + (mn / 64) * LBO + (k / 8) * SBO + (k % 8) * 128 + (mn % 64) * 2   (16-bit only)
uint32_t operand_address(unsigned warp, const char* name, uint64_t desc, bool mn_major, uint32_t e, int mn, int k) {
  const uint32_t start = uint32_t(desc & 0x3FFF) << 4, lbo = uint32_t((desc >> 16) & 0x3FFF) << 4;
  const uint32_t sbo = uint32_t((desc >> 32) & 0x3FFF) << 4, base_offset = uint32_t(desc >> 49) & 7u;
  const uint32_t mode = uint32_t(desc >> 62);
  if (mode != 1 || base_offset != 0)
    warp_misuse(warp, name, cat("descriptor ", cat("0x", std::hex, desc), " has swizzle mode ", mode, " and base offset ",
                                base_offset, "; the emulator models the 128-byte swizzle (mode 1) with base offset 0"));
  const uint32_t address = mn_major ? start + uint32_t(mn / 64) * lbo + uint32_t(k / 8) * sbo + uint32_t(k % 8) * 128 +
                                          uint32_t(mn % 64) * 2
                                    : start + uint32_t(mn / 8) * sbo + uint32_t(mn % 8) * 128 + uint32_t(k) * e;
  return swizzle128(address);
}

uint32_t element_bytes(WgmmaInput input) { return input == WgmmaInput::e4m3 ? 1 : 2; }

float operand(unsigned warp, const char* name, uint64_t desc, bool mn_major, WgmmaInput input, int mn, int k) {
  const uint32_t e = element_bytes(input), address = operand_address(warp, name, desc, mn_major, e, mn, k);
  const unsigned char* p = shared_bytes(address, e);
  if (!p)
    warp_misuse(warp, name, cat("operand element (", mn, ", ", k, ") at shared address ", hex32(address),
                                " lies outside the block's dynamic shared memory"));
  switch (input) {
    case WgmmaInput::e4m3: return decode(kE4M3, p[0]);
    case WgmmaInput::f16: return decode(kHalf, uint16_t(p[0] | p[1] << 8));
    default: return decode(kBfloat16, uint16_t(p[0] | p[1] << 8));
  }
}

// The shared bytes an operand's rows [mn0, mn0 + rows) span, for the hazard checks.
SharedSpan operand_span(unsigned warp, const char* name, uint64_t desc, bool mn_major, WgmmaInput input, int mn0,
                        int rows, int depth) {
  const uint32_t e = element_bytes(input);
  SharedSpan span{~0u, 0};
  for (int mn = mn0; mn < mn0 + rows; ++mn)
    for (int k = 0; k < depth; ++k) {
      const uint32_t address = operand_address(warp, name, desc, mn_major, e, mn, k);
      span.begin = std::min(span.begin, address);
      span.end = std::max(span.end, address + e);
    }
  return span;
}

const char* wgmma_name(const WgmmaShape& s) {
  switch (s.input) {
    case WgmmaInput::e4m3: return "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3";
    case WgmmaInput::f16: return "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16";
    default: return "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16";
  }
}

// d (16 rows of this warp, N) += a (those rows, K) @ b (K, N): products exact
// in double, each output's K-term sum plus d rounded once to float (a GPU's
// tensor cores round differently in the last bits; Hopper's fp8 sums keep
// fewer bits still: tests compare with the kernel's bound).
void run_wgmma(unsigned warp, const WgmmaOp& op) {
  const WgmmaShape& s = op.shape;
  const char* name = wgmma_name(s);
  for (const TmaCopy& c : current_block->hopper().copies) {
    const SharedSpan box{c.dst_address, c.dst_address + c.bytes};
    if (box.overlaps(op.a) || box.overlaps(op.b))
      warp_misuse(warp, name,
                  cat("the wgmma issued at ", describe_code(op.site), " reads shared bytes [", hex32(box.begin), ", ",
                      hex32(box.end), ") that a TMA copy has not finished writing: wait on the copy's mbarrier "
                      "before issuing the wgmma"));
  }
  if (!op.c.empty()) {
    // The chain's first: its registers must still hold what issue left.
    const size_t per_lane = size_t(s.n / 2);
    for (unsigned l = 0; l < 32; ++l)
      for (size_t i = 0; i < per_lane; ++i) {
        uint32_t bits;
        std::memcpy(&bits, &op.d[l][i], sizeof bits);
        if (bits != kInFlight)
          warp_misuse(warp, name,
                      cat("lane ", l, " wrote accumulator ", i, " of the wgmma issued at ", describe_code(op.site),
                          " before wgmma.wait_group completed it (the registers belong to the wgmma until then)"));
        op.d[l][i] = op.c[l * per_lane + i];
      }
  }
  const int rank = int(warp % 4);
  std::vector<float> a(size_t(16) * s.k), b(size_t(s.k) * s.n);
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < s.k; ++k) a[size_t(r) * s.k + k] = operand(warp, name, op.desc_a, s.mn_major_a, s.input, 16 * rank + r, k);
  for (int n = 0; n < s.n; ++n)
    for (int k = 0; k < s.k; ++k) b[size_t(k) * s.n + n] = operand(warp, name, op.desc_b, s.mn_major_b, s.input, n, k);
  for (unsigned l = 0; l < 32; ++l) {
    for (int i = 0; i < s.n / 2; ++i) {
      const int row = int(l / 4) + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * int(l % 4) + (i & 1);
      double sum = op.d[l][i];
      for (int k = 0; k < s.k; ++k) sum += double(a[size_t(row) * s.k + k]) * double(b[size_t(k) * s.n + col]);
      op.d[l][i] = float(sum);
    }
  }
  // The registers are the threads' again: a later wgmma on them after an
  // access needs a wgmma.fence between (note_stack_access).
  for (unsigned l = 0; l < 32; ++l)
    current_block->hopper().warps[warp].returned[l] = {op.d[l], op.d[l] + s.n / 2, nullptr};
}

// A chain's first wgmma: keeps the accumulators' values in op.c and leaves
// kInFlight in the registers until its wait.
void take_accumulators(WgmmaOp& op) {
  const size_t per_lane = size_t(op.shape.n / 2);
  op.c.resize(32 * per_lane);
  for (unsigned l = 0; l < 32; ++l)
    for (size_t i = 0; i < per_lane; ++i) {
      op.c[l * per_lane + i] = op.d[l][i];
      std::memcpy(&op.d[l][i], &kInFlight, sizeof kInFlight);
    }
}

struct IssueLane {
  const WgmmaShape* shape;
  float* d;
  uint64_t desc_a, desc_b;
  unsigned warp;
  const void* site;
};

void wgmma_issue_warp(void* const* lanes) {
  const auto& first = *static_cast<const IssueLane*>(lanes[0]);
  const WgmmaShape& shape = *first.shape;
  const char* name = wgmma_name(shape);
  WgmmaOp op{shape, first.desc_a, first.desc_b, {}, 0,
             operand_span(first.warp, name, first.desc_a, shape.mn_major_a, shape.input, 16 * int(first.warp % 4), 16, shape.k),
             operand_span(first.warp, name, first.desc_b, shape.mn_major_b, shape.input, 0, shape.n, shape.k), first.site, {}};
  for (unsigned l = 0; l < 32; ++l) {
    const auto& lane = *static_cast<const IssueLane*>(lanes[l]);
    if (lane.desc_a != op.desc_a || lane.desc_b != op.desc_b)
      warp_misuse(first.warp, wgmma_name(op.shape),
                  cat("lane ", l, " gives other descriptors than lane 0 (every thread of a warpgroup passes the same)"));
    op.d[l] = lane.d;
  }
  HopperUnits::Warp& w = current_block->hopper().warps[first.warp];
  if (!w.fenced)
    warp_misuse(first.warp, name,
                cat("the wgmma at ", describe_code(first.site), " is the warpgroup's first, and no wgmma.fence came "
                    "before it: PTX requires one, to order the threads' earlier register accesses (the "
                    "accumulators' zeros) before the wgmma reads the registers"));
  for (unsigned l = 0; l < 32; ++l) {
    const HopperUnits::Returned& r = w.returned[l];
    if (r.touched_at && op.d[l] < r.end && op.d[l] + shape.n / 2 > r.begin)
      warp_misuse(first.warp, name,
                  cat("lane ", l, " accessed its accumulators at ", describe_code(r.touched_at),
                      " after the wgmma.wait_group that gave them back, and no wgmma.fence came between that access "
                      "and the wgmma at ", describe_code(first.site),
                      ": the wgmma may read the registers before the access is done"));
  }
  // The first wgmma of a chain keeps the accumulators' values and leaves
  // kInFlight in the registers: a read before the wait sees NaN, a write is
  // found at the wait. Later ones into the same registers add to its result.
  std::vector<WgmmaOp>& in_flight = current_block->hopper().warps[first.warp].ops;
  const bool chained =
      std::any_of(in_flight.begin(), in_flight.end(), [&](const WgmmaOp& o) { return o.d[0] == op.d[0]; });
  if (!chained) take_accumulators(op);
  in_flight.push_back(op);
}

struct WarpLane {
  unsigned warp;
  unsigned pending;
};

void wgmma_commit_warp(void* const* lanes) {
  const auto& first = *static_cast<const WarpLane*>(lanes[0]);
  HopperUnits::Warp& w = current_block->hopper().warps[first.warp];
  ++w.committed;  // an empty group is legal, and counts
  for (WgmmaOp& op : w.ops)
    if (op.group == 0) op.group = w.committed;
}

void wgmma_wait_warp(void* const* lanes) {
  const auto& first = *static_cast<const WarpLane*>(lanes[0]);
  HopperUnits::Warp& w = current_block->hopper().warps[first.warp];
  const uint32_t newest_done = w.committed > first.pending ? w.committed - first.pending : 0;
  std::vector<WgmmaOp> left;
  for (const WgmmaOp& op : w.ops) {
    if (op.group != 0 && op.group <= newest_done) run_wgmma(first.warp, op);
    else left.push_back(op);
  }
  // A wgmma still in flight whose chain's head has just completed heads the
  // chain now: its accumulators are the wgmma's again until its own wait.
  for (WgmmaOp& op : left) {
    const bool headed = std::any_of(left.begin(), left.end(), [&](const WgmmaOp& o) {
      return &o != &op && o.d[0] == op.d[0] && !o.c.empty();
    });
    if (op.c.empty() && !headed) take_accumulators(op);
  }
  w.ops = std::move(left);
}

void warp_op(const char* name, void (*run)(void* const*), void* operands, bool yields = false) {
  warp_matrix_op({name, run, operands, yields});
}

}  // namespace

void wgmma_issue(const char* instruction, const WgmmaShape& shape, float* d, uint64_t desc_a, uint64_t desc_b) {
  unsigned warp;
  {
    LibraryScope scope;
    const Lane& lane = this_lane(instruction);
    warp = lane.warp;
    if (current_block->shape().block.x * current_block->shape().block.y * current_block->shape().block.z < (warp / 4 + 1) * 128)
      misuse(lane, instruction, "the thread's warpgroup (4 warps, 128 threads) is not complete in this block");
  }
  IssueLane lane{&shape, d, desc_a, desc_b, warp, __builtin_return_address(0)};
  warp_op(instruction, &wgmma_issue_warp, &lane);
}

void wgmma_fence_warp(void* const* lanes) {
  HopperUnits::Warp& w = current_block->hopper().warps[static_cast<const WarpLane*>(lanes[0])->warp];
  w.fenced = true;
  for (HopperUnits::Returned& r : w.returned) r.touched_at = nullptr;  // ordered before what follows
}

void wgmma_fence() {
  WarpLane lane{this_lane("wgmma.fence").warp, 0};
  warp_op("wgmma.fence.sync.aligned", &wgmma_fence_warp, &lane);
}

void wgmma_commit() {
  WarpLane lane{this_lane("wgmma.commit_group").warp, 0};
  warp_op("wgmma.commit_group.sync.aligned", &wgmma_commit_warp, &lane);
}

void wgmma_wait(unsigned pending) {
  WarpLane lane{this_lane("wgmma.wait_group").warp, pending};
  // A yield: the warp's wgmmas in flight stay queued while the rest of the
  // block (a TMA producer above all) runs as far as it can, as on a GPU where
  // the wait takes a while. A stage released before its wgmma was retired is
  // then refilled under it, and tma_load reports the overlap.
  warp_op("wgmma.wait_group.sync.aligned", &wgmma_wait_warp, &lane, true);
}

void HopperUnits::start(unsigned warp_count) {
  barriers.clear();
  copies.clear();
  copies_made = bytes_copied = largest_copy = 0;
  warps.assign(warp_count, Warp{});
}

bool HopperUnits::settle(Block& block) {
  // The copy engine runs while no thread can: in issue order.
  for (const TmaCopy& c : copies) {
    const uint32_t bytes = make_copy(c);
    if (c.from_peer)
      if (Checker* checker = block.checker_if_traced()) checker->peer_copy_landed(reinterpret_cast<uintptr_t>(c.dst), bytes);
    if (c.counted) {
      ++copies_made;
      bytes_copied += bytes;
      largest_copy = std::max<uint64_t>(largest_copy, bytes);
    }
    auto found = barriers.find(c.bar);
    if (found == barriers.end())
      throw LaunchError(cudaErrorLaunchFailure, cat(block.where(), ": a TMA copy completes on the mbarrier at ",
                                                    hex32(shared_address_of(block, c.bar)),
                                                    ", which is no longer initialized"));
    found->second.tx -= bytes;
    maybe_complete(found->second);
  }
  copies.clear();
  bool woke = false;
  for (unsigned i = 0; i < block.lane_count(); ++i) {
    Lane& lane = block.lane(i);
    if (lane.state == LaneState::yielded) {
      lane.state = LaneState::ready;
      woke = true;
    }
    if (lane.state != LaneState::at_mbarrier) continue;
    const MBarrier& b = barriers.at(lane.mbarrier);
    if (phase_done(b, uint32_t(lane.value))) {
      lane.state = LaneState::ready;
      woke = true;
      // Its wait returns for the phase it parked on. Should later phases of
      // the same parity have completed too, the clocks kept are theirs, which
      // its wait did not see: it acquires nothing (a race reported, not hidden).
      if (b.completed == lane.mbarrier_phase + 1) acquire(block, lane, b);
    }
  }
  return woke;
}

void HopperUnits::finish(const Block& block) {
  if (!copies.empty())
    throw LaunchError(cudaErrorLaunchFailure,
                      cat(block.where(), ": the block exited with ", copies.size(),
                          " TMA copies in flight (no thread waited for them; on a GPU: undefined behaviour)"));
  for (size_t w = 0; w < warps.size(); ++w)
    if (!warps[w].ops.empty())
      throw LaunchError(cudaErrorLaunchFailure,
                        cat(block.where(), ", warp ", w, ": ", warps[w].ops.size(),
                            " wgmma operations were never retired by a wgmma.wait_group (their results are undefined)"));
}

std::string HopperUnits::describe_wait(const Block& block, const Lane& lane) const {
  const MBarrier& b = barriers.at(lane.mbarrier);
  return cat("waits on the mbarrier at shared address ", hex32(shared_address_of(block, lane.mbarrier)), " (",
             describe_code(lane.site), ") for its phase of parity ", lane.value, ", which still lacks ", b.pending,
             " of ", b.expected, " arrivals and ", b.tx, " transaction bytes, and nothing left can complete it");
}

uint32_t shared_address_of(const Block& block, const void* pointer) {
  return kDynamicSharedAddress +
         uint32_t(static_cast<const unsigned char*>(pointer) - static_cast<const unsigned char*>(block.dynamic_shared()));
}

}  // namespace warpnet::simt
