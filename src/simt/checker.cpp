#include "simt/checker.hpp"

#include <algorithm>
#include <bit>

#include "simt/block.hpp"
#include "simt/grid_shadow.hpp"
#include "simt/stacks.hpp"

namespace warpnet::simt {

namespace {

std::string hex_address(uintptr_t a) { return cat("0x", std::hex, a); }
const char* verb(bool write) { return write ? "writes" : "reads"; }

Checker::How how_of(bool write, bool strong) {
  using How = Checker::How;
  return strong ? (write ? How::volatile_write : How::volatile_read) : (write ? How::write : How::read);
}

}  // namespace

Checker::Checker(Block& block, TraceSink& sink)
    : block_(block), sink_(sink), allocations_(allocation_snapshot()), tls_(this_thread_tls()) {
  // The kernel's own __shared__ variables at their addresses on this worker
  // thread: its shared-memory window, as a GPU's bounds check sees it.
  for (const SharedVariable& var : kernel_shared_variables(block.kernel()))
    regions_.push_back({reinterpret_cast<uintptr_t>(tls_.begin) + var.offset, var.bytes, var.name, {}});
  for (size_t offset : kernel_guard_variables(block.kernel()))
    guards_.push_back(reinterpret_cast<uintptr_t>(tls_.begin) + offset);
  if (block.shape().dynamic_shared > 0) {
    regions_.push_back({reinterpret_cast<uintptr_t>(block.dynamic_shared()), block.shape().dynamic_shared,
                        "dynamic shared memory", {}});
  }
  std::sort(regions_.begin(), regions_.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
  start_block();
}

void Checker::start_block() {
  ++generation_;  // every region's shadow is now stale: shared memory starts undefined
  pending_.clear();
  for (auto& warp : issued_) warp.clear();
  uninitialized_.reset();
  global_words_.clear();
  acquired_.clear();
  proxy_fenced_.clear();
}

Checker::Region* Checker::shared_region(uintptr_t address) {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), address,
                             [](uintptr_t a, const Region& r) { return a < r.begin; });
  if (it == regions_.begin()) return nullptr;
  --it;
  return address < it->begin + it->bytes ? &*it : nullptr;
}

Touched Checker::access(const Lane& lane, uintptr_t address, size_t bytes, bool write, const void* pc,
                        bool strong) {
  // The thread's own stack (locals) and the kernel's arguments are not device memory.
  const StackSet& stacks = block_.stacks();
  if (address >= uintptr_t(stacks.bottom(lane.linear)) && address < uintptr_t(stacks.top(lane.linear))) {
    block_.hopper().note_stack_access(lane.warp, lane.lane, address, pc);  // its wgmma accumulators live there
    return {};
  }
  const auto bound = reinterpret_cast<uintptr_t>(block_.call().bound);
  if (address >= bound && address < bound + block_.call().bound_bytes) return {};

  if (Region* region = shared_region(address)) {
    if (address + bytes > region->begin + region->bytes) out_of_bounds(lane, address, bytes, write, pc, true);
    check_shared(lane, *region, address, bytes, write, pc);
    record(lane, address, bytes, write, pc, Space::shared);
    return {true, Space::shared, &region->name};
  }
  auto it = std::upper_bound(allocations_.begin(), allocations_.end(), address,
                             [](uintptr_t a, const Allocation& r) { return a < r.begin; });
  if (it != allocations_.begin() && std::prev(it)->contains(address, bytes)) {
    check_waited(lane, address, bytes, write, pc, false);
    check_global(lane, *std::prev(it), address, bytes, how_of(write, strong), pc);
    record(lane, address, bytes, write, pc, Space::global);
    return {true, Space::global, nullptr};
  }
  if (in_program_image(address)) {  // __constant__/__device__ variables and tables
    check_between_blocks(lane, nullptr, address, bytes, how_of(write, strong), pc);
    return {};
  }
  // The one-byte guard a `static thread_local` of class type is read (and set)
  // through on entry: the compiler's, not the kernel's, access. Only that exact
  // byte: a kernel's wider access overrunning an array into a guard is still out of bounds.
  if (bytes == 1 && std::find(guards_.begin(), guards_.end(), address) != guards_.end()) return {};
  // Static __shared__ lives in the TLS block, dynamic in the worker's own window.
  const auto tls = reinterpret_cast<uintptr_t>(tls_.begin);
  const auto window = reinterpret_cast<uintptr_t>(block_.dynamic_shared());
  const bool in_window = address >= window && address < window + SharedWindow::kBytes;
  out_of_bounds(lane, address, bytes, write, pc, (address >= tls && address < tls + tls_.bytes) || in_window);
}

void Checker::atomic(const Lane& lane, uintptr_t address, size_t bytes, const void* pc, bool block_scope,
                     const char* global_only) {
  if (Region* region = shared_region(address)) {
    // PTX: "atom with vector type may be used only with .global space", or a
    // generic address that points there; what a shared one does is undefined.
    if (global_only)
      throw LaunchError(cudaErrorIllegalAddress,
                        cat(block_.where(lane), ": a ", global_only, " on shared `", region->name, "`[byte ",
                            address - region->begin, "] (address ", hex_address(address), ")",
                            pc ? " at " + describe_code(pc) : std::string(),
                            ": the vector atomics work on global memory only (PTX: atom with a vector type takes "
                            ".global addresses); add the elements one at a time"));
    if (address + bytes > region->begin + region->bytes) out_of_bounds(lane, address, bytes, true, pc, true, true);
    // Atomics do not race with each other, but they read the word first: it must
    // have been written in this block. Against plain accesses of other threads
    // with no barrier between, they race like any write.
    const bool fresh = region->block_generation == generation_;
    for (size_t i = 0; i < bytes; ++i) {
      if (fresh && region->shadow[address - region->begin + i].writer.thread >= 0) continue;
      throw LaunchError(cudaErrorLaunchFailure,
                        cat(block_.where(lane), ": an atomic on `", region->name, "`[byte ", address - region->begin,
                            "] (address ", hex_address(address),
                            ") reads shared memory no thread of this block has written yet (uninitialized shared memory)"));
    }
    const Access mine = access_now(lane, pc, Kind::atomic);
    for (size_t i = 0; i < bytes; ++i) {
      Shadow& s = region->shadow[address - region->begin + i];
      check_byte(lane, *region, address + i, s, mine, true);
      keep_reader(s.readers, mine, lane);  // kept beside the reads: a plain access of another thread races with it
    }
    return;
  }
  const auto it =
      std::find_if(allocations_.begin(), allocations_.end(), [&](auto& a) { return a.contains(address, bytes); });
  if (it != allocations_.end()) {
    check_waited(lane, address, bytes, true, pc, true);
    check_global(lane, *it, address, bytes, block_scope ? How::block_atomic : How::atomic, pc);
  } else if (in_program_image(address)) {
    check_between_blocks(lane, nullptr, address, bytes, block_scope ? How::block_atomic : How::atomic,
                         pc);  // a __device__ counter
  } else {
    out_of_bounds(lane, address, bytes, true, pc, false, true);
  }
}

void Checker::async_copy_issued(const Lane& lane, uintptr_t address, size_t bytes, const void* pc) {
  Region* region = shared_region(address);
  if (!region) return;  // out of bounds: reported where the copy is made, with the store
  if (address + bytes > region->begin + region->bytes) out_of_bounds(lane, address, bytes, true, pc, true);
  if (region->block_generation != generation_) return;  // nothing touched it in this block yet
  // Checked, not recorded: the write is recorded where the copy is made, so
  // a read before it still finds the byte unwritten (uninitialized, or stale).
  const Access mine = access_now(lane, pc, Kind::cp_async);
  for (size_t i = 0; i < bytes; ++i)
    check_byte(lane, *region, address + i, region->shadow[address - region->begin + i], mine, true);
}

Checker::Access Checker::access_now(const Lane& lane, const void* pc, Kind kind) const {
  return {pc, block_.barrier_epoch(), block_.lane_clock(lane.warp, lane.lane), int16_t(lane.linear), kind};
}

void Checker::check_byte(const Lane& lane, const Region& region, uintptr_t address, const Shadow& s,
                         const Access& mine, bool write) {
  // Plain accesses race with a write or an atomic of another thread; atomics
  // with plain ones only.
  if (!ordered(s.writer, lane)) race(lane, region, address, mine, write, s.writer, true);
  for (const Access& r : s.readers) {
    const bool conflict = mine.kind == Kind::atomic ? r.kind != Kind::atomic : write || r.kind == Kind::atomic;
    if (conflict && !ordered(r, lane)) race(lane, region, address, mine, write, r, false);
  }
}

bool Checker::ordered(const Access& other, const Lane& lane) const {
  // Two accesses are ordered when the same thread made both, a __syncthreads
  // lies between them, they come from one warp with a chain of __syncwarps
  // leading from the one lane to the other between (lane clocks), or an
  // mbarrier's arrive after the one and a wait before the other lie between.
  if (other.thread < 0 || other.thread == int16_t(lane.linear) || other.epoch != block_.barrier_epoch()) return true;
  const unsigned other_warp = unsigned(other.thread) / 32;
  if (other_warp == lane.warp && block_.warp_ordered(lane.warp, unsigned(other.thread) % 32, other.sync, lane.lane))
    return true;
  return acquired_after(lane, other);
}

bool Checker::acquired_after(const Lane& lane, const Access& other) const {
  // The other thread's clock ticked at an arrive after its access, and the
  // lane's waits have acquired that tick (or a later one).
  if (acquired_.empty()) return false;
  return acquired_[size_t(lane.linear) * block_.lane_count() + unsigned(other.thread)] > other.sync;
}

void Checker::tma_copy_issued(const Lane& lane, uintptr_t address, size_t bytes, const void* pc,
                              std::vector<uint32_t>& phase) {
  Region* region = shared_region(address);
  if (!region) return;  // tma_load refuses a box outside the block's shared memory
  if (address + bytes > region->begin + region->bytes) out_of_bounds(lane, address, bytes, true, pc, true);
  check_shared(lane, *region, address, bytes, true, pc, Kind::tma);
  mbarrier_release(lane, phase);
}

void Checker::peer_copy_landed(uintptr_t address, size_t bytes) {
  Region* region = shared_region(address);
  if (!region) return;  // tma_load_multicast refuses a box outside shared memory
  if (region->block_generation != generation_) {
    region->shadow.assign(region->bytes, Shadow{});
    region->block_generation = generation_;
  }
  // A writer of no phase this block will reach: initialized, never a race.
  const Access landed{nullptr, UINT32_MAX, 0, 0, Kind::tma, 0};
  for (size_t i = 0; i < bytes && address + i < region->begin + region->bytes; ++i)
    region->shadow[address - region->begin + i] = Shadow{landed, {}};
}

void Checker::proxy_fence(const Lane& lane) {
  // A tick first, so that the thread's writes before the fence carry an
  // older clock than the fence, and its writes after it do not.
  block_.tick_lane_clock(lane.warp, lane.lane);
  if (proxy_fenced_.empty()) proxy_fenced_.assign(block_.lane_count(), {0, 0});
  proxy_fenced_[lane.linear] = {block_.barrier_epoch(), block_.lane_clock(lane.warp, lane.lane)};
}

void Checker::async_proxy_read(const Lane& lane, const std::vector<uintptr_t>& elements, size_t bytes,
                               const void* pc, const char* instruction) {
  const Access mine = access_now(lane, pc, Kind::plain);
  const auto reads = [&](const Region& region, uintptr_t address) {
    return cat(block_.where(lane), ": the ", instruction, " issued at ", describe_code(pc), " reads `", region.name,
               "`[byte ", address - region.begin, "] (address ", hex_address(address), ")");
  };
  for (uintptr_t element : elements) {
    Region* region = shared_region(element);
    if (!region) continue;  // outside the block's shared memory: refused where the operand is read
    for (uintptr_t address = element; address < element + bytes; ++address) {
      if (region->block_generation != generation_ || region->shadow[address - region->begin].writer.thread < 0)
        throw LaunchError(cudaErrorLaunchFailure,
                          cat(reads(*region, address), ", which no thread of the block has written before it: the "
                              "tile was never filled, or the stores that fill it are not ordered before the wgmma "
                              "(a __syncthreads() after them, or an mbarrier wait for the TMA copy)"));
      const Access& writer = region->shadow[address - region->begin].writer;
      // A TMA copy's write is the async proxy's own; one still in flight
      // is the wgmma unit's error (HopperUnits), naming the copy.
      if (writer.kind == Kind::tma) continue;
      if (!ordered(writer, lane)) race(lane, *region, address, mine, false, writer, true);
      const std::pair<uint32_t, uint32_t> written{writer.epoch, writer.sync};
      if (!proxy_fenced_.empty() && written < proxy_fenced_[size_t(writer.thread)]) continue;
      throw LaunchError(
          cudaErrorLaunchFailure,
          cat(reads(*region, address), ", which thread ", format_dim(block_.lane(unsigned(writer.thread)).tid),
              writer.kind == Kind::cp_async ? " copied in with a cp.async at " : " stored at ",
              describe_code(writer.pc), " with no fence.proxy.async after it: wgmma reads shared memory through the "
              "async proxy, which a thread's plain stores and cp.async copies reach only through that fence "
              "(fence_proxy_async_shared(), then the barrier that orders it before the wgmma)"));
    }
  }
}

void Checker::mbarrier_release(const Lane& lane, std::vector<uint32_t>& phase) {
  block_.tick_lane_clock(lane.warp, lane.lane);  // the lane's accesses so far are now before the arrive
  const unsigned threads = block_.lane_count();
  if (phase.empty()) phase.assign(threads, 0);
  const std::array<uint32_t, 32>& warp_knows = block_.lane_knows(lane.warp, lane.lane);
  for (unsigned l = 0; l < block_.lanes_in_warp(lane.warp); ++l)
    phase[lane.warp * 32 + l] = std::max(phase[lane.warp * 32 + l], warp_knows[l]);
  if (acquired_.empty()) return;
  // Cumulative, as a release is: what the lane acquired from others is before its arrive too.
  const uint32_t* knows = &acquired_[size_t(lane.linear) * threads];
  for (unsigned t = 0; t < threads; ++t) phase[t] = std::max(phase[t], knows[t]);
}

void Checker::mbarrier_acquire(const Lane& lane, const std::vector<uint32_t>& released) {
  if (released.empty()) return;  // its arrivals came before the block's first traced access: nothing to order
  const unsigned threads = block_.lane_count();
  if (acquired_.empty()) acquired_.assign(size_t(threads) * threads, 0);
  uint32_t* knows = &acquired_[size_t(lane.linear) * threads];
  for (unsigned t = 0; t < threads; ++t) knows[t] = std::max(knows[t], released[t]);
}

void Checker::warp_synced(unsigned warp, uint32_t mask) {
  if (acquired_.empty()) return;  // no wait has acquired anything in this block yet
  const unsigned threads = block_.lane_count(), count = block_.lanes_in_warp(warp);
  joined_.assign(threads, 0u);
  for (unsigned l = 0; l < count; ++l) {
    if (!(mask >> l & 1)) continue;
    const uint32_t* knows = &acquired_[size_t(warp * 32 + l) * threads];
    for (unsigned t = 0; t < threads; ++t) joined_[t] = std::max(joined_[t], knows[t]);
  }
  for (unsigned l = 0; l < count; ++l)
    if (mask >> l & 1) std::copy(joined_.begin(), joined_.end(), &acquired_[size_t(warp * 32 + l) * threads]);
}

void Checker::race(const Lane& lane, const Region& region, uintptr_t address, const Access& mine, bool write,
                   const Access& other, bool other_wrote) {
  const Lane& them = block_.lane(unsigned(other.thread));
  const auto how = [](const Access& a, bool wrote) {
    return a.kind == Kind::atomic ? cat("updated it with an atomic at ", describe_code(a.pc))
                                  : cat(wrote ? "wrote" : "read", " it at ", describe_code(a.pc));
  };
  const std::string this_does =
      mine.kind == Kind::atomic     ? cat("updates it with an atomic at ", describe_code(mine.pc))
      : mine.kind == Kind::cp_async ? cat("issues a cp.async into it (at ", describe_code(mine.pc),
                                          "), which may write it from then on,")
                                    : cat(verb(write), " it at ", describe_code(mine.pc));
  throw LaunchError(cudaErrorLaunchFailure,
                    cat(block_.where(lane), ": shared-memory race on `", region.name, "`[byte ",
                        address - region.begin, "] (address ", hex_address(address), "): this thread ", this_does,
                        " and thread ", format_dim(them.tid), " ", how(other, other_wrote),
                        " with no __syncthreads() between them", nor_mbarrier()));
}

std::string Checker::nor_mbarrier() {
  // In a block that uses mbarriers, the ordering the race lacks may be one's.
  if (block_.hopper().barriers.empty()) return "";
  return ", nor an mbarrier that thread arrived on after its access and this thread waited for since";
}

void Checker::check_global(const Lane& lane, const Allocation& allocation, uintptr_t address, size_t bytes, How how,
                           const void* pc) {
  check_between_blocks(lane, &allocation, address, bytes, how, pc);
  const bool atomic = how == How::atomic || how == How::block_atomic;  // within the block, both are
  const bool write = how == How::write || how == How::volatile_write || atomic;
  const bool strong = how == How::volatile_read || how == How::volatile_write;
  const Access mine = access_now(lane, pc, atomic ? Kind::atomic : Kind::plain);
  for (uintptr_t word = address / 4; word <= (address + bytes - 1) / 4; ++word) {
    const uintptr_t from = std::max(address, word * 4), to = std::min(address + bytes, word * 4 + 4);
    const auto mask = uint8_t(((1u << (to - from)) - 1) << (from % 4));
    if (strong) {  // checked against plain accesses, not kept
      if (const auto found = global_words_.find(word); found != global_words_.end())
        check_word(lane, allocation, word * 4, found->second, mine, mask, write, true);
      continue;
    }
    GlobalWord& w = global_words_[word];
    check_word(lane, allocation, word * 4, w, mine, mask, write, false);
    if (how != How::write) {
      Access read = mine;
      read.bytes = mask;
      keep_reader(w.readers, read, lane);
      continue;
    }
    // The write is ordered after the reads it met (or threw): whatever races
    // with them on these bytes races with it too.
    for (unsigned i = 0; i < 4; ++i)
      if (mask >> i & 1) w.writers[i] = mine;
    for (Access& r : w.readers)
      if ((r.bytes &= uint8_t(~mask)) == 0) r = {};
  }
}

void Checker::check_word(const Lane& lane, const Allocation& allocation, uintptr_t word_address,
                         const GlobalWord& word, const Access& mine, uint8_t bytes, bool write, bool strong) {
  for (unsigned i = 0; i < 4; ++i)
    if ((bytes >> i & 1) && !ordered(word.writers[i], lane))
      global_race(lane, allocation, word_address + i, mine, write, word.writers[i], true);
  for (const Access& r : word.readers) {
    // Reads race with a write; atomics with plain accesses; strong accesses
    // (atomics and volatile ones) not with each other.
    const bool conflict = r.kind == Kind::atomic ? !strong && mine.kind != Kind::atomic : write;
    if (!conflict || !(r.bytes & bytes) || ordered(r, lane)) continue;
    global_race(lane, allocation, word_address + unsigned(__builtin_ctz(r.bytes & bytes)), mine, write, r, false);
  }
}

void Checker::global_race(const Lane& lane, const Allocation& allocation, uintptr_t address, const Access& mine,
                          bool write, const Access& other, bool other_wrote) {
  const Lane& them = block_.lane(unsigned(other.thread));
  const bool atomics = mine.kind == Kind::atomic || other.kind == Kind::atomic;
  const std::string this_does = mine.kind == Kind::atomic ? "updates it with an atomic" : cat(verb(write), " it");
  const std::string they_did = other.kind == Kind::atomic ? "updated it with an atomic"
                               : other_wrote              ? "wrote it"
                                                          : "read it";
  // What the kernel should do instead, by the kind of conflict.
  const char* fix = atomics ? "plain accesses to a word threads update with atomics need a __syncthreads() between "
                              "them and the updates: a clear before them, a read of the result after them (a "
                              "compare-and-swap loop reads its first guess with a volatile load)"
                    : other_wrote ? "an update from several threads needs an atomic; several writing one value, a "
                                    "barrier or a single writer"
                                  : "a value other threads read must not be overwritten before a __syncthreads() "
                                    "after their reads; or write the result to another buffer";
  throw LaunchError(cudaErrorLaunchFailure,
                    cat(block_.where(lane), ": global-memory race on byte ", address - allocation.begin, " of a ",
                        allocation.bytes, "-byte allocation (address ", hex_address(address), "): this thread ",
                        this_does, " at ", describe_code(mine.pc),
                        " and thread ", format_dim(them.tid), " ", they_did, " at ", describe_code(other.pc),
                        " with no __syncthreads() between them", nor_mbarrier(), " (", fix, ")"));
}

void Checker::check_between_blocks(const Lane& lane, const Allocation* allocation, uintptr_t address,
                                   size_t bytes, How how, const void* pc) {
  // After its own __threadfence() a block may order itself after the others
  // through a flag or a counter (the last block summing the partials), which
  // the shadow cannot follow: its later accesses are neither checked nor kept.
  if (block_.fenced()) return;
  using U = GridShadow::Use;
  // Volatile is strong, like an atomic; a block-scoped atomic is, to other blocks, a plain write.
  const U use = how == How::read                                   ? U::kRead
                : how == How::write || how == How::block_atomic ? U::kWrite
                                                                   : U::kAtomic;
  const dim3 g = block_.shape().grid;
  const auto conflict = block_.grid_shadow().note(address, bytes, block_linear(block_.index(), g), use, pc);
  if (!conflict) return;
  const uint8_t theirs = conflict->uses;
  const auto uses = [](uint8_t u) {
    std::string s;
    for (auto [bit, word] : {std::pair{U::kRead, "read it"}, {U::kWrite, "wrote it"},
                             {U::kAtomic, "updated it with an atomic (or a volatile access)"}})
      if (u & bit) s += cat(s.empty() ? "" : " and ", word);
    return s;
  };
  const std::string other = conflict->several ? std::string("at least one other block")
                                              : cat("block ", format_dim(block_index(conflict->block, g)));
  const char* const mine[] = {"reads it", "writes it", "reads it with a volatile load",
                              "writes it with a volatile store", "updates it with an atomic",
                              "updates it with a block-scoped atomic (the _block family)"};
  // What the kernel should do instead, by the kind of conflict.
  const char* fix =
      how == How::block_atomic
          ? "a block-scoped atomic (atomicAdd_block and the rest) is atomic only among the threads of its own "
            "block: a word other blocks touch needs the device's atomic (atomicAdd)"
      : use == U::kAtomic || (theirs & U::kAtomic)
          ? "a word that blocks update with atomics (or volatile accesses) must be accessed only so within the "
            "launch: clear it before (cudaMemset, or an earlier kernel) and read it after (a compare-and-swap "
            "loop reads its first guess with a volatile load)"
      : (theirs & U::kRead) && (theirs & U::kWrite)
          ? "an update from several blocks (`x += v`) needs atomicAdd, or a partial result per block added by a "
            "second kernel (kernels/common/sum_splits.hpp)"
      : use == U::kRead ? "a value other blocks read must be written by an earlier launch"
      : theirs == U::kRead ? "a value other blocks read must not change during the launch: write it in a later one"
                           : "each byte must have one writer in a launch (a GPU keeps one of the writes, in no "
                             "fixed order)";
  // Where the other block's access was: the one that added the last of its uses.
  const std::string their_code =
      !conflict->pc                    ? std::string()
      : std::has_single_bit(theirs) ? cat(" (at ", describe_code(conflict->pc), ")")
                                       : cat(" (the last of these at ", describe_code(conflict->pc), ")");
  const std::string where_in =
      allocation ? cat("byte ", conflict->address - allocation->begin, " of a ", allocation->bytes, "-byte allocation")
                 : describe_variable(conflict->address);
  throw LaunchError(cudaErrorLaunchFailure,
                    cat(block_.where(lane), ": global-memory race between blocks on ", where_in, " (address ",
                        hex_address(conflict->address), "): this thread ", mine[int(how)], " at ",
                        describe_code(pc), ", and ", other, " ", uses(theirs), " in this launch",
                        their_code, ". A grid's blocks run in any order or at once, and nothing orders one "
                        "block's accesses against another's: ",
                        fix));
}

void Checker::keep_reader(std::array<Access, 2>& readers, const Access& read, const Lane& lane) {
  // A read ordered after a kept read replaces it, an atomic an atomic, if it
  // touched every byte the kept one did (`bytes`, global words only):
  // whatever races with the old one races with the new (ordering is
  // transitive). A read never replaces an atomic nor the reverse: they race
  // with different things. Kept are up to two, the second preferably from
  // another warp than the first; a third unordered one is not kept.
  const auto free = [&](const Access& r) {
    return r.thread < 0 || r.epoch != read.epoch ||
           (r.kind == read.kind && (r.bytes & read.bytes) == r.bytes && ordered(r, lane));
  };
  if (free(readers[0])) {
    readers[0] = read;
    return;
  }
  const auto warp_of = [](const Access& r) { return unsigned(r.thread) / 32; };
  const bool same_kinds = readers[0].kind == read.kind && readers[1].kind == read.kind;
  if (free(readers[1]) ||
      (same_kinds && warp_of(readers[1]) == warp_of(readers[0]) && lane.warp != warp_of(readers[0])))
    readers[1] = read;
}

void Checker::check_shared(const Lane& lane, Region& region, uintptr_t address, size_t bytes, bool write,
                           const void* pc, Kind kind) {
  if (region.block_generation != generation_) {
    region.shadow.assign(region.bytes, Shadow{});
    region.block_generation = generation_;
  }
  const Access mine = access_now(lane, pc, kind);
  for (size_t i = 0; i < bytes; ++i) {
    Shadow& s = region.shadow[address - region.begin + i];
    // A read of a byte nobody wrote yet is a race if another thread writes it
    // before the next barrier (threads run one after another here, a GPU could
    // have run the writer first), otherwise an uninitialized read: decided at the barrier.
    if (!write && s.writer.thread < 0 && !uninitialized_)
      uninitialized_ = UninitializedRead{&region, address + i - region.begin, lane.linear, pc};
    check_byte(lane, region, address + i, s, mine, write);
    if (write) {
      s.writer = mine;
      s.readers = {};
    } else {
      keep_reader(s.readers, mine, lane);
    }
  }
}

void Checker::check_waited(const Lane& lane, uintptr_t address, size_t bytes, bool write, const void* pc,
                           bool atomic) const {
  if (!block_.shape().programmatic || lane.waited_for_prior_grids) return;
  throw LaunchError(
      cudaErrorLaunchFailure,
      cat(block_.where(lane), ": global-memory ", atomic ? "atomic " : "", write ? "write" : "read", " of ", bytes,
          " bytes at ", hex_address(address), pc ? " at " + describe_code(pc) : std::string(),
          " before wait_for_prior_grids(): the kernel was launched as a programmatic dependent "
          "(warpnet::launch_dependent_kernel while programmatic launches are on), so on a GPU it may run while the "
          "kernel before it still does"));
}

void Checker::out_of_bounds(const Lane& lane, uintptr_t address, size_t bytes, bool write, const void* pc,
                            bool shared, bool atomic) {
  const std::string what = cat(atomic ? "atomic " : "", write ? "write" : "read", " of ", bytes, " bytes at ",
                               hex_address(address), pc ? " at " + describe_code(pc) : std::string());
  if (shared) {
    throw LaunchError(cudaErrorIllegalAddress, cat(block_.where(lane), ": out-of-bounds shared-memory ", what, ": ",
                                                   describe_shared(address, bytes)));
  }
  throw LaunchError(cudaErrorIllegalAddress, cat(block_.where(lane), ": out-of-bounds global-memory ", what, ": ",
                                                 describe_near(allocations_, address, bytes)));
}

std::string Checker::describe_shared(uintptr_t address, size_t bytes) const {
  // Relative to the nearest of the kernel's shared variables.
  const Region* nearest = nullptr;
  uintptr_t best = UINTPTR_MAX;
  for (const Region& r : regions_) {
    const uintptr_t end = r.begin + r.bytes;
    if (address >= r.begin && address < end) return cat("crosses the end of `", r.name, "` (", r.bytes, " bytes)");
    const uintptr_t distance = address >= end ? address - end : r.begin - address;
    if (distance < best) best = distance, nearest = &r;
  }
  // Dynamic shared memory the launch did not size: its third <<<>>> argument left at 0.
  const auto dynamic = reinterpret_cast<uintptr_t>(block_.dynamic_shared());
  if (block_.shape().dynamic_shared == 0 && address >= dynamic && address - dynamic < SharedWindow::kBytes)
    return cat("byte ", address - dynamic, " of the dynamic shared memory (extern __shared__, dynamic_shared<T>()), "
               "but the launch gave it 0 bytes: the third <<<grid, block, bytes>>> argument sizes it");
  if (!nearest) return "the kernel declares no __shared__ variables (the checker knows only the kernel's own)";
  return address >= nearest->begin ? cat(best, " bytes past the end of `", nearest->name, "` (", nearest->bytes, " bytes)")
                                   : cat(best, " bytes before `", nearest->name, "`");
}

void Checker::record(const Lane& lane, uintptr_t address, size_t bytes, bool write, const void* pc, Space space) {
  auto [it, fresh] = pending_.try_emplace(pc);
  Pending& p = it->second;
  if (fresh || p.warps.empty()) {
    p.write = write;
    p.space = space;
    p.warps.resize((block_.shape().block.x * block_.shape().block.y * block_.shape().block.z + 31) / 32);
  }
  WarpPending& w = p.warps[lane.warp];
  const uint32_t k = w.count[lane.lane]++;  // this lane's k-th execution joins the warp's k-th request
  if (k >= w.requests.size()) {
    w.requests.resize(k + 1, {0u, {}});
    if (issued_.size() <= lane.warp) issued_.resize(lane.warp + 1);
    issued_[lane.warp].emplace_back(pc, k);
  }
  w.requests[k].first |= 1u << lane.lane;
  w.requests[k].second[lane.lane] = address;
  p.bytes = std::max(p.bytes, unsigned(bytes));
}

void Checker::end_phase() {
  if (uninitialized_) {
    const UninitializedRead& u = *uninitialized_;
    const uintptr_t a = u.region->begin + u.offset;
    throw LaunchError(cudaErrorLaunchFailure,
                      cat(block_.where(block_.lane(u.lane)), ": reads `", u.region->name, "`[byte ", u.offset,
                          "] (address ", hex_address(a), ") at ", describe_code(u.pc),
                          ", but no thread of this block has written it (uninitialized shared memory)"));
  }
  for (unsigned warp = 0; warp < issued_.size(); ++warp) {
    for (const auto& [pc, k] : issued_[warp]) {
      const Pending& p = pending_[pc];
      const auto& [mask, addresses] = p.warps[warp].requests[k];
      InstructionStats& s = stats_[pc];
      s.pc = pc;
      s.write = p.write;
      s.space = p.space;
      s.bytes = p.bytes;
      WarpAccess a{block_.index(), warp, pc, p.write, p.space, p.bytes, mask, addresses, 0, 0};
      ++s.requests;
      s.active_lanes += unsigned(__builtin_popcount(mask));
      // Lanes past the end of a partial last warp do not exist: they are not inactive.
      s.inactive_lanes += block_.lanes_in_warp(warp) - unsigned(__builtin_popcount(mask));
      if (p.space == Space::global) {
        a.sectors = sectors_touched(addresses, mask, p.bytes);
        s.sectors += a.sectors;
        s.ideal_sectors += ideal_sectors(addresses, mask, p.bytes);
      } else {
        a.wavefronts = shared_wavefronts(addresses, mask, p.bytes);
        s.wavefronts += a.wavefronts;
        s.ideal_wavefronts += ideal_shared_wavefronts(mask, p.bytes);
        s.worst_wavefronts = std::max(s.worst_wavefronts, a.wavefronts);
      }
      if (samples_.size() < KernelTrace::kMaxSamples) samples_.push_back(a);
    }
    issued_[warp].clear();
  }
  for (auto& [pc, p] : pending_) {
    for (WarpPending& w : p.warps) {
      w.requests.clear();
      w.count.fill(0);
    }
  }
}

void Checker::end_block() {
  end_phase();
  std::vector<InstructionStats> stats;
  stats.reserve(stats_.size());
  for (auto& [pc, s] : stats_) stats.push_back(s);
  sink_.add(stats, samples_);
  stats_.clear();
  samples_.clear();
}

}  // namespace warpnet::simt
