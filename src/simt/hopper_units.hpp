// The per-block state of the emulator's Hopper units (hopper.hpp says the
// model): mbarriers by address, queued TMA copies, each warp's wgmma queue.
// Internal to src/simt.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include "simt/hopper.hpp"

namespace warpnet::simt {

struct MBarrier {
  uint32_t expected = 0, pending = 0;  // arrivals per phase, and still missing in this one
  int64_t tx = 0;                      // transaction bytes expected and not yet completed
  uint32_t completed = 0;              // phases completed so far: phase p's parity is p & 1
  // Who initialized it, in which barrier phase of the block: another thread
  // may use it only after a __syncthreads() (PTX: mbarrier.init must be
  // ordered before other threads' operations on the object).
  unsigned init_thread = 0;
  unsigned init_epoch = 0;
  // The cluster barriers released before it (Cluster::phases): a peer CTA may
  // use it only after one more, the cluster_sync() that publishes it.
  unsigned init_cluster_phase = 0;
  // For the traced build's race checker (Checker::mbarrier_release/acquire),
  // by thread: the clocks this phase's arrivals released so far, and those of
  // the last completed phase, which a wait that returns for it acquires.
  // Empty in untraced launches.
  std::vector<uint32_t> arriving, released;
};

struct TmaCopy {
  TensorMapFields map;
  unsigned char* dst;  // host pointer into the shared window
  uint32_t dst_address;
  uint32_t bytes;      // the box's
  int coords[5];
  int offsets[3];  // im2col: the filter tap's offset in each spatial dimension
  uint64_t* bar;
  // Issued by another CTA of the cluster (a multicast): its bytes are not the
  // writes of any thread here (Checker::peer_copy_landed).
  bool from_peer = false;
  // Counted in the block's TMA traffic (copies_made, bytes_copied): a
  // multicast reads global memory once, however many CTAs it lands in.
  bool counted = true;
};

// Shared addresses [begin, end).
struct SharedSpan {
  uint32_t begin = 0, end = 0;
  bool overlaps(const SharedSpan& o) const { return begin < o.end && o.begin < end; }
};

struct WgmmaOp {
  WgmmaShape shape;
  uint64_t desc_a, desc_b;
  float* d[32];      // each lane's accumulators
  uint32_t group;    // 0 until wgmma.commit_group
  SharedSpan a, b;   // the shared bytes it reads: this warp's 16 rows of a, all of b
  const void* site;  // where it was issued, for errors
  // The accumulators' values when the first wgmma of a chain on them was
  // issued (lane-major, shape.n / 2 per lane); the registers themselves hold
  // kInFlight until the wait. Empty for a wgmma issued into accumulators a
  // wgmma in flight already holds: it adds to that one's result.
  std::vector<float> c;
};

// What a thread's accumulators read while a wgmma on them is in flight (a
// NaN): on a GPU, touching them before wgmma.wait_group is undefined.
inline constexpr uint32_t kInFlight = 0x7fc0d00du;

class Block;
struct Lane;

// What hopper.cpp (mbarriers, TMA) and wgmma.cpp share, defined in hopper.cpp.
std::string hex32(uint32_t v);  // "0x1a0"
// A kernel's misuse of an instruction, as the launch's error (cudaErrorLaunchFailure)
// naming the thread, or from the scheduler (a warp's wgmma runs there) the warp.
[[noreturn]] void hopper_misuse(const Lane& lane, const char* instruction, const std::string& why);
[[noreturn]] void hopper_warp_misuse(unsigned warp, const char* instruction, const std::string& why);
// The bytes [address, address + bytes) of the running block's shared window, as a host pointer; null when outside.
unsigned char* shared_bytes(uint32_t address, size_t bytes);
// The 128-byte swizzle on a shared address: the 16-byte chunk c of a 128-byte
// row r moves to chunk c ^ (r % 8). TMA writes and wgmma reads through it alike.
uint32_t swizzle128(uint32_t address);

// The shared address of a pointer into `block`'s dynamic shared memory (from the scheduler).
uint32_t shared_address_of(const Block& block, const void* pointer);

// Per running block: reset when a block starts, checked empty when it ends.
class HopperUnits {
 public:
  void start(unsigned warps);
  // No thread can run: make the queued copies and wake the threads whose
  // mbarrier phase has completed; true when one did.
  bool settle(Block& block);
  // The block ended: copies or wgmmas still in flight are an error.
  void finish(const Block& block);
  // "waits on the mbarrier at shared address 0x..., which still lacks ...": a stuck lane, for the deadlock error.
  std::string describe_wait(const Block& block, const Lane& lane) const;

  std::unordered_map<const void*, MBarrier> barriers;
  std::vector<TmaCopy> copies;
  uint64_t copies_made = 0, bytes_copied = 0, largest_copy = 0;  // this block's TMA traffic, for a traced launch
  // What PTX asks of wgmma.fence: one before the warpgroup's first
  // wgmma.mma_async, and one between a thread's access to registers and a
  // wgmma that uses them (accumulators zeroed, or read for the epilogue, and
  // then accumulated into again). Without it the wgmma may read them first.
  struct Returned {  // a lane's accumulators, given back by wgmma.wait_group
    const float* begin = nullptr;
    const float* end = nullptr;
    const void* touched_at = nullptr;  // the thread's first access since the warp's last wgmma.fence
  };
  // The wgmma instructions, each warpgroup-wide (.sync.aligned): the four
  // warps of a warpgroup issue each one together, with the same operands.
  // Each warp issues its own here, one warp after another, so a warp's n-th
  // is compared with the n-th its warpgroup's first warp there issued: at
  // the instruction where they part, or, for a warp that stopped short, at
  // the block's end.
  enum class Collective : uint8_t { fence, mma, commit, wait };
  struct CollectiveIssued {
    Collective kind;
    std::array<uint64_t, 6> operands{};  // descriptors, shape, wait depth; zeros past those the kind has
    const void* site;                    // where it was issued
    unsigned warp;                       // the warp that issued it first
  };
  struct Warpgroup {
    // Each warp's (first + i)-th collective is unmatched[i]: those not all
    // four warps have issued yet (earlier ones are dropped as they are).
    std::deque<CollectiveIssued> unmatched;
    uint64_t first = 0;
  };
  struct Warp {
    std::vector<WgmmaOp> ops;
    uint32_t committed = 0;
    bool fenced = false;  // a wgmma.fence since the block started
    std::array<Returned, 32> returned{};  // per lane: the accumulators of the last wgmma retired
    std::array<uint32_t, 4> collectives{};  // how many of each Collective the warp issued
    uint64_t issued = 0;                    // of them all
    // The warp's last wgmma.mma_async: lane 0's accumulators, its shape,
    // where it was issued and the wgmma.fence count then (PTX orders
    // wgmmas on the same accumulators without a fence only at one shape).
    struct Issued {
      const float* d = nullptr;
      WgmmaShape shape{};
      const void* site = nullptr;
      uint32_t fences = 0;
    } last;
  };
  std::vector<Warp> warps;
  std::vector<Warpgroup> warpgroups;
  // The warp issued `kind` at `site`, with `operands` (descriptors, shape,
  // wait depth): counted, and compared with its warpgroup's other warps'
  // instruction of the same rank; a difference is the launch's error.
  void note_collective(unsigned warp, Collective kind, std::initializer_list<uint64_t> operands, const void* site);
  // A traced thread's load or store on its own stack, where its accumulators
  // live (Checker::access): an access to returned ones is kept.
  void note_stack_access(unsigned warp, unsigned lane, uintptr_t address, const void* pc) {
    Returned& r = warps[warp].returned[lane];
    if (!r.touched_at && address >= uintptr_t(r.begin) && address < uintptr_t(r.end)) r.touched_at = pc;
  }
};

}  // namespace warpnet::simt
