// Hopper's asynchronous units in the emulator (hopper.hpp says the model):
// mbarriers, TMA copies (issued by threads, made by the block's copy
// engine), and the units' per-block state. The wgmma unit is wgmma.cpp.
#include "simt/hopper_units.hpp"

#include <algorithm>
#include <cstring>

#include "simt/allocations.hpp"
#include "simt/block.hpp"
#include "simt/checker.hpp"
#include "simt/cluster.hpp"
#include "simt/symbols.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {

// Shared with wgmma.cpp (declared in hopper_units.hpp).
std::string hex32(uint32_t v) { return cat("0x", std::hex, v); }

[[noreturn]] void hopper_misuse(const Lane& lane, const char* instruction, const std::string& why) {
  throw LaunchError(cudaErrorLaunchFailure, cat(current_block->where(lane), ": ", instruction, ": ", why,
                                                " (on a GPU: undefined behaviour)"));
}
[[noreturn]] void hopper_warp_misuse(unsigned warp, const char* instruction, const std::string& why) {
  throw LaunchError(cudaErrorLaunchFailure, cat(current_block->where(), ", warp ", warp, ": ", instruction, ": ",
                                                why, " (on a GPU: undefined behaviour)"));
}

unsigned char* shared_bytes(uint32_t address, size_t bytes) {
  const Block& block = *current_block;
  const size_t size = block.shape().dynamic_shared;
  if (address < kDynamicSharedAddress || address - kDynamicSharedAddress + bytes > size) return nullptr;
  return static_cast<unsigned char*>(block.dynamic_shared()) + (address - kDynamicSharedAddress);
}

uint32_t swizzle128(uint32_t address) { return address ^ (((address >> 7) & 7u) << 4); }

namespace {

MBarrier& barrier_at(const Lane& lane, uint64_t* bar, const char* instruction) {
  auto found = current_block->hopper().barriers.find(bar);
  if (found == current_block->hopper().barriers.end())
    hopper_misuse(lane, instruction, cat("no mbarrier was initialized at shared address ", hex32(shared_address(bar))));
  const MBarrier& b = found->second;
  if (b.init_thread != lane.linear && b.init_epoch == current_block->barrier_epoch())
    hopper_misuse(lane, instruction,
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
    hopper_misuse(lane, "cvta.to.shared",
           cat("address ", pointer, " is not in the block's dynamic shared memory (the emulator gives shared-space "
               "addresses to dynamic shared memory only)"));
  return kDynamicSharedAddress + uint32_t(p - base);
}

void mbarrier_init(uint64_t* bar, uint32_t count) {
  LibraryScope scope;
  const Lane& lane = this_lane("mbarrier.init");
  const uint32_t address = shared_address(bar);
  if (address % 8 != 0) hopper_misuse(lane, "mbarrier.init", cat("shared address ", hex32(address), " is not 8-byte aligned"));
  if (count == 0 || count >= (1u << 20)) hopper_misuse(lane, "mbarrier.init", cat("count ", count, " is outside [1, 2^20)"));
  MBarrier& b = current_block->hopper().barriers[bar] =
      MBarrier{count, count, 0, 0, lane.linear, current_block->barrier_epoch(), 0, {}, {}};  // no clocks released yet
  if (const Cluster* cluster = current_block->cluster()) b.init_cluster_phase = cluster->phases();
}

void mbarrier_arrive(uint64_t* bar, uint32_t expect_tx_bytes, const char* instruction) {
  LibraryScope scope;
  const Lane& lane = this_lane(instruction);
  MBarrier& b = barrier_at(lane, bar, instruction);
  if (b.pending == 0)
    hopper_misuse(lane, instruction,
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
  if (!fields) hopper_misuse(lane, instruction, "the tensor map was never encoded by cuTensorMapEncodeTiled or _Im2col");
  TmaCopy copy{*fields, static_cast<unsigned char*>(dst), shared_address(dst), 0, {}, {}, bar};
  const TensorMapFields& m = copy.map;
  if (int(m.rank) != rank)
    hopper_misuse(lane, instruction, cat("a ", rank, "-d copy of a rank-", unsigned(m.rank), " tensor map"));
  if (m.im2col != (offsets != nullptr))
    hopper_misuse(lane, instruction, m.im2col ? "a tiled copy of an im2col tensor map (cuTensorMapEncodeIm2col): use .im2col"
                                       : "an .im2col copy of a tiled tensor map (cuTensorMapEncodeTiled)");
  if (copy.dst_address % 128 != 0)
    hopper_misuse(lane, instruction, cat("shared destination ", hex32(copy.dst_address), " is not 128-byte aligned"));
  uint64_t extent = m.element_bytes;  // from the first element to past the last
  for (uint32_t d = 0; d < m.rank; ++d) extent += (m.dims[d] - 1) * m.strides[d];
  if (!find_allocation(reinterpret_cast<const void*>(m.global), extent))
    hopper_misuse(lane, instruction, cat("the tensor map describes ", extent, " bytes at ", reinterpret_cast<const void*>(m.global),
                                  ", which do not lie inside one cudaMalloc allocation"));
  for (int i = 0; i < rank; ++i) copy.coords[i] = coords[i];
  uint64_t box_bytes = m.element_bytes;
  if (m.im2col) {
    box_bytes *= uint64_t(m.box[0]) * m.box[1];  // channels per pixel x pixels per column
    for (int d = 1; d + 1 < rank; ++d) {
      copy.offsets[d - 1] = offsets[d - 1];
      const int64_t end = int64_t(m.dims[d]) + m.upper[d - 1];
      if (coords[d] < m.lower[d - 1] || coords[d] >= end)
        hopper_misuse(lane, instruction, cat("the first pixel's coordinate ", coords[d], " in dimension ", d,
                                      " lies outside the bounding box [", m.lower[d - 1], ", ", end, ")"));
    }
  } else {
    for (int i = 0; i < rank; ++i) box_bytes *= box_elements(m, uint32_t(i));
  }
  if (!shared_bytes(copy.dst_address, box_bytes))
    hopper_misuse(lane, instruction, cat("the ", box_bytes, "-byte box at shared address ", hex32(copy.dst_address),
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
        hopper_misuse(lane, instruction,
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
    hopper_misuse(lane, instruction, "a launch without clusters has no peer CTAs (warpnet::launch_kernel_in_clusters)");
  if (rank >= cluster->size())
    hopper_misuse(lane, instruction, cat("CTA ", rank, " of a cluster of ", cluster->size()));
  Block& peer = cluster->cta(rank);
  if (peer.finished())
    hopper_misuse(lane, instruction,
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
    hopper_misuse(lane, instruction,
           cat("CTA ", peer.cluster_rank(), " has no mbarrier initialized at shared address ", hex32(address)));
  if (found->second.init_cluster_phase >= peer.cluster()->phases())
    hopper_misuse(lane, instruction,
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
    hopper_misuse(lane, instruction, cat("CTA mask ", hex32(cta_mask), " names no CTA, or one outside a cluster of ", ctas));
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
    hopper_misuse(lane, instruction,
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

}  // namespace

void HopperUnits::start(unsigned warp_count) {
  barriers.clear();
  copies.clear();
  copies_made = bytes_copied = largest_copy = 0;
  warps.assign(warp_count, Warp{});
  warpgroups.assign((warp_count + 3) / 4, Warpgroup{});
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

namespace {

const char* collective_name(HopperUnits::Collective kind) {
  using C = HopperUnits::Collective;
  switch (kind) {
    case C::fence: return "wgmma.fence";
    case C::mma: return "wgmma.mma_async";
    case C::commit: return "wgmma.commit_group";
    default: return "wgmma.wait_group";
  }
}

std::string describe_collectives(const HopperUnits::Warp& w) {
  using C = HopperUnits::Collective;
  return cat(w.collectives[size_t(C::mma)], " wgmma.mma_async, ", w.collectives[size_t(C::fence)], " wgmma.fence, ",
             w.collectives[size_t(C::commit)], " commit_group and ", w.collectives[size_t(C::wait)], " wait_group");
}

// "wgmma.mma_async at kernel.cu:42": one warp's instruction of a rank, for the lockstep errors.
std::string describe_collective(const HopperUnits::CollectiveIssued& c) {
  return cat(collective_name(c.kind), " at ", describe_code(c.site));
}

std::string ordinal(uint64_t n) {
  const uint64_t tens = n % 100, units = n % 10;
  const char* suffix = tens >= 11 && tens <= 13 ? "th" : units == 1 ? "st" : units == 2 ? "nd" : units == 3 ? "rd" : "th";
  return cat(n, suffix);
}

constexpr const char* kLockstep =
    "the wgmma instructions are warpgroup-wide (.sync.aligned), so its four warps issue each one together, with the "
    "same operands; on a GPU a warp left out leaves the others waiting or the result undefined";

}  // namespace

void HopperUnits::note_collective(unsigned warp, Collective kind, std::initializer_list<uint64_t> operands,
                                  const void* site) {
  Warp& w = warps[warp];
  ++w.collectives[size_t(kind)];
  CollectiveIssued issued{kind, {}, site, warp};
  std::copy(operands.begin(), operands.end(), issued.operands.begin());
  Warpgroup& group = warpgroups[warp / 4];
  const uint64_t rank = w.issued++;
  if (rank < group.first + group.unmatched.size()) {
    const CollectiveIssued& before = group.unmatched[rank - group.first];
    if (before.kind != kind || before.operands != issued.operands)
      throw LaunchError(
          cudaErrorLaunchFailure,
          cat(current_block->where(), ", warpgroup ", warp / 4, ": warps ", before.warp, " and ", warp,
              " part at their ", ordinal(rank + 1), " wgmma instruction: warp ", before.warp, " issued ",
              describe_collective(before), ", warp ", warp, " ", describe_collective(issued),
              before.kind == kind ? " (the same instruction, other operands: descriptors, shape or wait depth)" : "",
              ": ", kLockstep));
  } else {
    group.unmatched.push_back(issued);
  }
  // Drop the instructions every warp of a complete warpgroup has issued.
  const size_t begin = warp / 4 * 4;
  if (begin + 4 > warps.size()) return;
  uint64_t all = warps[begin].issued;
  for (size_t v = begin + 1; v < begin + 4; ++v) all = std::min(all, warps[v].issued);
  while (group.first < all) {
    group.unmatched.pop_front();
    ++group.first;
  }
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
  // Each warp's instructions matched the others' rank by rank as it issued
  // them (note_collective); what is left is a warp that stopped short.
  for (size_t first = 0; first + 4 <= warps.size(); first += 4) {
    const Warpgroup& group = warpgroups[first / 4];
    for (size_t w = first; w < first + 4; ++w) {
      if (warps[w].issued == group.first + group.unmatched.size()) continue;
      const CollectiveIssued& missing = group.unmatched[warps[w].issued - group.first];
      throw LaunchError(cudaErrorLaunchFailure,
                        cat(block.where(), ", warpgroup ", first / 4, ": warp ", w, " issued ",
                            describe_collectives(warps[w]), " where warp ", missing.warp, " issued ",
                            describe_collectives(warps[missing.warp]), "; the first warp ", w, " left out is warp ",
                            missing.warp, "'s ", ordinal(warps[w].issued + 1), ", ", describe_collective(missing),
                            ": ", kLockstep));
    }
  }
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
