// The checks and tracing of a traced kernel, for one block at a time on one
// worker. Every load and store of the kernel arrives here (from the
// instrumentation callbacks in hooks.cpp) with the lane that made it.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "simt/allocations.hpp"
#include "simt/symbols.hpp"
#include "simt/trace.hpp"

namespace warpnet::simt {

class Block;
struct Lane;

// What one access touched: device memory (global, or shared with the
// variable's name) or not (the lane's stack, the kernel's arguments, constants).
struct Touched {
  bool device = false;
  Space space = Space::global;
  const std::string* variable = nullptr;  // shared: "As", "dynamic shared memory"
};

class Checker {
 public:
  // How one access used a global byte, for the check between blocks.
  // block_atomic: an atomic within its block, a plain write to the others.
  enum class How : uint8_t { read, write, volatile_read, volatile_write, atomic, block_atomic };

  Checker(Block& block, TraceSink& sink);

  void start_block();
  // One lane's access of `bytes` at `address` by the instruction `pc`; throws
  // LaunchError for an out-of-bounds access, a race or an uninitialized read.
  // `strong`: a volatile access, which PTX makes a relaxed strong operation:
  // like an atomic, it does not race with other strong ones (a flag one
  // block sets and others poll).
  Touched access(const Lane& lane, uintptr_t address, size_t bytes, bool write, const void* pc, bool strong = false);
  // `block_scope`: atomicAdd_block & co., atomic among this block's threads
  // only: to other blocks its update is a plain write (a race with any
  // access of theirs), as the PTX memory model's .cta scope makes it.
  // `global_only`: the name of an atomic PTX allows on global memory only
  // (note_atomic), which a shared address fails.
  void atomic(const Lane& lane, uintptr_t address, size_t bytes, const void* pc, bool block_scope = false,
              const char* global_only = nullptr);
  // A cp.async into shared memory, at its issue: the GPU may write the bytes
  // any time until the wait_group, so reads of them by other threads not yet
  // ordered before the issue race with it (a stage refilled while others still
  // read it). Checked as a write, not counted: the store is counted where the
  // copy is made.
  void async_copy_issued(const Lane& lane, uintptr_t address, size_t bytes, const void* pc);
  // A TMA copy's box of shared bytes, at its issue. The copy engine writes
  // them before it completes the copy's transaction bytes on its mbarrier,
  // so they are checked and recorded as writes of the issuing thread,
  // released into `phase`, the clocks of the barrier phase the copy
  // completes: a thread whose wait returns for that phase reads them in
  // order (ldmatrix from a TMA-filled stage); one that reads them without
  // that wait, or a refill of a stage other threads still read, races. Not
  // counted among the thread's stores: no instruction of its own made them.
  void tma_copy_issued(const Lane& lane, uintptr_t address, size_t bytes, const void* pc,
                       std::vector<uint32_t>& phase);
  // Shared bytes a peer CTA's multicast copy wrote, as it lands: written,
  // and ordered before every access of this block's threads (the checker
  // follows orders within a CTA only; cluster.hpp).
  void peer_copy_landed(uintptr_t address, size_t bytes);
  // fence.proxy.async by `lane`: its plain stores and cp.async copies into
  // shared memory so far become visible to the async proxy (TMA, wgmma).
  void proxy_fence(const Lane& lane);
  // The operand elements (`bytes` each, at host addresses `elements`) a
  // wgmma issued by `lane`'s warp reads through the async proxy
  // (`instruction`, issued at `pc`). Each must be written, and in order
  // before the issue (unwritten, or a race); and one a thread wrote by the
  // generic proxy (a plain store or a cp.async) needs that thread's
  // fence.proxy.async after the write, or the wgmma may read it stale.
  void async_proxy_read(const Lane& lane, const std::vector<uintptr_t>& elements, size_t bytes, const void* pc,
                        const char* instruction);
  // An mbarrier's arrive and a wait returning for the phase it completed, as
  // release and acquire: the arriving thread's accesses before its arrive are
  // ordered before the waiting thread's after its wait. Release ticks the
  // lane's clock and joins what it knows — its own clock, its warp's through
  // __syncwarp, what its own waits acquired — into `phase`, the clocks the
  // barrier's current phase collects (by thread); acquire joins `released`,
  // a completed phase's, into what the lane knows (Checker::ordered).
  void mbarrier_release(const Lane& lane, std::vector<uint32_t>& phase);
  void mbarrier_acquire(const Lane& lane, const std::vector<uint32_t>& released);
  // The lanes of `warp` in `mask` passed a __syncwarp (or a .sync matrix
  // instruction) together (Block::warp_sync): each now knows what any of them
  // acquired, as the sync orders a lane's wait before the others' later
  // accesses (one lane waits for the producer, then __syncwarp, then the
  // whole warp reads) and before their later arrives.
  void warp_synced(unsigned warp, uint32_t mask);
  // At each barrier and at the end of the block: warp-level accesses are complete.
  void end_phase();
  void end_block();

 private:
  // One access a later one may race with: which thread, in which barrier
  // phase, at which of its lane's clock (Block::lane_clock), where, and what.
  // tma: a TMA copy's write, made by the async proxy (the others are the generic proxy's).
  enum class Kind : uint8_t { plain, atomic, cp_async, tma };
  struct Access {
    const void* pc = nullptr;
    uint32_t epoch = 0, sync = 0;
    int16_t thread = -1;  // -1: none
    Kind kind = Kind::plain;
    uint8_t bytes = 0;  // a global word's reader: which of its bytes (bit i: byte i); 0 elsewhere
  };
  // Who last wrote one byte of shared memory (a plain store), and up to two
  // reads or atomics since, by threads unordered with each other: with two, a
  // write by either one's thread still meets the other (one slot missed those
  // races). Atomics do not race with each other, only with plain accesses.
  struct Shadow {
    Access writer;
    std::array<Access, 2> readers;
  };
  struct Region {
    uintptr_t begin;
    size_t bytes;
    std::string name;
    std::vector<Shadow> shadow;
    unsigned block_generation = 0;  // shadow is stale when it differs from the checker's
  };
  struct WarpPending {
    std::array<uint32_t, 32> count{};  // executions so far per lane: the k of the k-th request
    std::vector<std::pair<unsigned, std::array<uintptr_t, 32>>> requests;  // mask, addresses
  };
  struct Pending {
    bool write;
    Space space;
    unsigned bytes = 0;  // the widest access seen (a cp.async at an edge reads fewer than its width)
    std::vector<WarpPending> warps;
  };

  struct UninitializedRead {
    Region* region;
    size_t offset;
    unsigned lane;
    const void* pc;
  };

  // Global memory in this block, by 4-byte word: who last wrote each byte
  // (a plain store), and up to two reads or atomics since by threads
  // unordered with each other, as shared memory's shadow keeps them but per
  // word, each with the bytes it touched (kept per byte they would cost
  // about 200 bytes per byte read). A plain access of a byte another thread
  // of the block wrote, a write of one another read, or a plain access
  // against another's atomic, with nothing between to order them (a
  // __syncthreads(), an mbarrier's arrive and wait: Checker::ordered), is a race:
  // `*sum += x` from many threads, a forgotten atomicAdd, an in-place shift
  // `x[i] = x[i + 1]`. Volatile accesses are checked against plain ones but
  // not kept (strong accesses do not race with each other). Between blocks,
  // the launch's GridShadow keeps which blocks touched each byte and how.
  struct GlobalWord {
    std::array<Access, 4> writers;
    std::array<Access, 2> readers;
  };
  void check_global(const Lane& lane, const Allocation& allocation, uintptr_t address, size_t bytes, How how,
                    const void* pc);
  // Against the other blocks of the launch (GridShadow). `allocation`: null
  // for a __device__ variable of the program's image.
  void check_between_blocks(const Lane& lane, const Allocation* allocation, uintptr_t address, size_t bytes, How how,
                            const void* pc);
  // Throws when `mine`, touching `bytes` (a mask) of `word`, races with what it holds.
  void check_word(const Lane& lane, const Allocation& allocation, uintptr_t word_address, const GlobalWord& word,
                  const Access& mine, uint8_t bytes, bool write, bool strong);
  [[noreturn]] void global_race(const Lane& lane, const Allocation& allocation, uintptr_t address,
                                const Access& mine, bool write, const Access& other, bool other_wrote);
  Region* shared_region(uintptr_t address);
  std::string describe_shared(uintptr_t address, size_t bytes) const;
  void check_shared(const Lane& lane, Region& region, uintptr_t address, size_t bytes, bool write, const void* pc,
                    Kind kind = Kind::plain);
  // Throws when `mine`, a read or a write of one byte, races with what its shadow holds.
  void check_byte(const Lane& lane, const Region& region, uintptr_t address, const Shadow& s, const Access& mine,
                  bool write);
  Access access_now(const Lane& lane, const void* pc, Kind kind) const;
  bool ordered(const Access& other, const Lane& lane) const;
  // Out of line, so that ordered() stays small enough to be inlined into the
  // per-byte checks: it is reached only when nothing cheaper orders the two.
  [[gnu::noinline]] bool acquired_after(const Lane& lane, const Access& other) const;
  void keep_reader(std::array<Access, 2>& readers, const Access& read, const Lane& lane);
  [[noreturn]] void race(const Lane& lane, const Region& region, uintptr_t address, const Access& mine,
                         bool write, const Access& other, bool other_wrote);
  std::string nor_mbarrier();  // what else a race message says lacks between the accesses
  [[noreturn]] void out_of_bounds(const Lane& lane, uintptr_t address, size_t bytes, bool write, const void* pc,
                                  bool shared, bool atomic = false);
  // A global access of a programmatic launch's thread that has not yet
  // called wait_for_prior_grids() (LaunchShape::programmatic): throws.
  void check_waited(const Lane& lane, uintptr_t address, size_t bytes, bool write, const void* pc, bool atomic) const;
  void record(const Lane& lane, uintptr_t address, size_t bytes, bool write, const void* pc, Space space);

  Block& block_;
  TraceSink& sink_;
  std::vector<Allocation> allocations_;
  TlsBlock tls_;
  std::vector<Region> regions_;  // __shared__ variables and the dynamic shared buffer
  std::vector<uintptr_t> guards_;  // guard bytes of the kernel's dynamically initialized __shared__ variables
  unsigned generation_ = 0;
  std::unordered_map<const void*, Pending> pending_;
  // Per warp, its requests (pc, k) in the order the warp issued them.
  std::vector<std::vector<std::pair<const void*, uint32_t>>> issued_;
  std::unordered_map<const void*, InstructionStats> stats_;
  std::vector<WarpAccess> samples_;
  std::optional<UninitializedRead> uninitialized_;  // the phase's first read of a never-written byte
  std::unordered_map<uintptr_t, GlobalWord> global_words_;  // by address / 4, this block's
  // Row t, column u: the latest clock of thread u (Block::lane_clock) that
  // thread t has acquired through mbarrier waits, its own or, through a
  // __syncwarp since, a lane of its warp's. threads x threads, made at the
  // block's first acquire: empty in blocks that wait on no mbarrier.
  std::vector<uint32_t> acquired_;
  std::vector<uint32_t> joined_;  // warp_synced's scratch row
  // Per thread, (barrier epoch, lane clock) just after its last
  // fence.proxy.async: a generic-proxy write of the thread's is visible to
  // the async proxy when it came before. Empty until a thread fences.
  std::vector<std::pair<uint32_t, uint32_t>> proxy_fenced_;
};

}  // namespace warpnet::simt
