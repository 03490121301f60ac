// The emulator's wgmma unit (hopper.hpp says the model): wgmma.mma_async
// issued by a warpgroup's warps, queued per warp, run at wgmma.wait_group
// from the shared bytes its descriptors name, with the hazard checks against
// TMA copies in flight and the accumulators' registers, a warpgroup's warps
// kept to the same instructions (HopperUnits::note_collective) and, for a
// traced kernel, its operands' writers (Checker::async_proxy_read). The
// mbarriers and TMA copies are hopper.cpp's.
#include <algorithm>
#include <cstring>

#include "simt/block.hpp"
#include "simt/checker.hpp"
#include "simt/hopper_units.hpp"
#include "simt/minifloat.hpp"
#include "simt/symbols.hpp"
#include "simt/tensor_cores.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {
namespace {

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
    hopper_warp_misuse(warp, name, cat("descriptor ", cat("0x", std::hex, desc), " has swizzle mode ", mode, " and base offset ",
                                base_offset, "; the emulator models the 128-byte swizzle (mode 1) with base offset 0"));
  // Base offset 0 says the swizzle's 8-row pattern starts at the tile: the
  // start's bits 7-9 (its 128-byte row within a 1024-byte repeat) must be 0.
  // TMA swizzles by the absolute address, so a tile off that boundary is
  // read on a GPU with the pattern shifted against how it was written; the
  // emulator, which swizzles absolute addresses on both sides, would not
  // see it. (Moving the start by a k-slice within a row, under 128 bytes,
  // or by whole 1024-byte groups keeps those bits.)
  if ((start >> 7) & 7u)
    hopper_warp_misuse(warp, name,
                       cat("descriptor ", cat("0x", std::hex, desc), " starts at shared address ", hex32(start),
                           ", row ", (start >> 7) & 7u, " of the 128-byte swizzle's 1024-byte pattern, with base "
                           "offset 0: a GPU would read the tile with its rows' swizzle shifted; start the tile at a "
                           "1024-byte boundary"));
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
    hopper_warp_misuse(warp, name, cat("operand element (", mn, ", ", k, ") at shared address ", hex32(address),
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
      hopper_warp_misuse(warp, name,
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
          hopper_warp_misuse(warp, name,
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
  bool traced;  // a traced kernel's: its operands are checked against the stores the checker saw
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
      hopper_warp_misuse(first.warp, wgmma_name(op.shape),
                  cat("lane ", l, " gives other descriptors than lane 0 (every thread of a warpgroup passes the same)"));
    op.d[l] = lane.d;
  }
  if (Checker* checker = first.traced ? current_block->checker_if_traced() : nullptr) {
    // As read by the warp's lane 0 at issue: what a GPU's wgmma reads from
    // then until its wait must be in shared memory, in order, by then.
    const uint32_t e = element_bytes(shape.input);
    std::vector<uintptr_t> elements;
    const auto add = [&](uint64_t desc, bool mn_major, int mn, int k) {
      if (const unsigned char* p = shared_bytes(operand_address(first.warp, name, desc, mn_major, e, mn, k), e))
        elements.push_back(reinterpret_cast<uintptr_t>(p));
    };
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < shape.k; ++k) add(op.desc_a, shape.mn_major_a, 16 * int(first.warp % 4) + r, k);
    for (int n = 0; n < shape.n; ++n)
      for (int k = 0; k < shape.k; ++k) add(op.desc_b, shape.mn_major_b, n, k);
    checker->async_proxy_read(current_block->lane(first.warp * 32), elements, e, first.site, name);
  }
  HopperUnits::Warp& w = current_block->hopper().warps[first.warp];
  const uint32_t fences = w.collectives[size_t(HopperUnits::Collective::fence)];
  const HopperUnits::Warp::Issued& last = w.last;
  if (last.d && op.d[0] < last.d + last.shape.n / 2 && op.d[0] + shape.n / 2 > last.d && last.fences == fences &&
      (last.shape.n != shape.n || last.shape.k != shape.k))
    hopper_warp_misuse(first.warp, name,
                       cat("the wgmma at ", describe_code(first.site), " (n = ", shape.n, ", k = ", shape.k,
                           ") accumulates into registers of the one at ", describe_code(last.site), " (n = ",
                           last.shape.n, ", k = ", last.shape.k, ") with no wgmma.fence between: PTX orders "
                           "wgmmas on the same accumulators by themselves only when their shapes match"));
  w.last = {op.d[0], shape, first.site, fences};
  if (!w.fenced)
    hopper_warp_misuse(first.warp, name,
                cat("the wgmma at ", describe_code(first.site), " is the warpgroup's first, and no wgmma.fence came "
                    "before it: PTX requires one, to order the threads' earlier register accesses (the "
                    "accumulators' zeros) before the wgmma reads the registers"));
  for (unsigned l = 0; l < 32; ++l) {
    const HopperUnits::Returned& r = w.returned[l];
    if (r.touched_at && op.d[l] < r.end && op.d[l] + shape.n / 2 > r.begin)
      hopper_warp_misuse(first.warp, name,
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
  current_block->hopper().note_collective(first.warp, HopperUnits::Collective::mma,
                                          {op.desc_a, op.desc_b, uint64_t(shape.n), uint64_t(shape.k),
                                           uint64_t(shape.input), uint64_t(shape.mn_major_a) * 2 + shape.mn_major_b},
                                          first.site);
}

struct WarpLane {
  unsigned warp;
  unsigned pending;
  const void* site;  // where the thread issued the instruction
};

void wgmma_commit_warp(void* const* lanes) {
  const auto& first = *static_cast<const WarpLane*>(lanes[0]);
  HopperUnits::Warp& w = current_block->hopper().warps[first.warp];
  current_block->hopper().note_collective(first.warp, HopperUnits::Collective::commit, {}, first.site);
  ++w.committed;  // an empty group is legal, and counts
  for (WgmmaOp& op : w.ops)
    if (op.group == 0) op.group = w.committed;
}

void wgmma_wait_warp(void* const* lanes) {
  const auto& first = *static_cast<const WarpLane*>(lanes[0]);
  HopperUnits::Warp& w = current_block->hopper().warps[first.warp];
  current_block->hopper().note_collective(first.warp, HopperUnits::Collective::wait, {first.pending}, first.site);
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

void wgmma_issue(const char* instruction, const WgmmaShape& shape, float* d, uint64_t desc_a, uint64_t desc_b,
                 bool traced) {
  unsigned warp;
  {
    LibraryScope scope;
    const Lane& lane = this_lane(instruction);
    warp = lane.warp;
    if (current_block->shape().block.x * current_block->shape().block.y * current_block->shape().block.z < (warp / 4 + 1) * 128)
      hopper_misuse(lane, instruction, "the thread's warpgroup (4 warps, 128 threads) is not complete in this block");
  }
  IssueLane lane{&shape, d, desc_a, desc_b, warp, __builtin_return_address(0), traced};
  warp_op(instruction, &wgmma_issue_warp, &lane);
}

void wgmma_fence_warp(void* const* lanes) {
  const auto& first = *static_cast<const WarpLane*>(lanes[0]);
  const unsigned warp = first.warp;
  current_block->hopper().note_collective(warp, HopperUnits::Collective::fence, {}, first.site);
  HopperUnits::Warp& w = current_block->hopper().warps[warp];
  w.fenced = true;
  for (HopperUnits::Returned& r : w.returned) r.touched_at = nullptr;  // ordered before what follows
}

void wgmma_fence() {
  WarpLane lane{this_lane("wgmma.fence").warp, 0, __builtin_return_address(0)};
  warp_op("wgmma.fence.sync.aligned", &wgmma_fence_warp, &lane);
}

void fence_proxy_async() {
  LibraryScope scope;
  const Lane& lane = this_lane("fence.proxy.async");
  if (Checker* checker = current_block->checker_if_traced()) checker->proxy_fence(lane);
}

void wgmma_commit() {
  WarpLane lane{this_lane("wgmma.commit_group").warp, 0, __builtin_return_address(0)};
  warp_op("wgmma.commit_group.sync.aligned", &wgmma_commit_warp, &lane);
}

void wgmma_wait(unsigned pending) {
  WarpLane lane{this_lane("wgmma.wait_group").warp, pending, __builtin_return_address(0)};
  // A yield: the warp's wgmmas in flight stay queued while the rest of the
  // block (a TMA producer above all) runs as far as it can, as on a GPU where
  // the wait takes a while. A stage released before its wgmma was retired is
  // then refilled under it, and tma_load reports the overlap.
  warp_op("wgmma.wait_group.sync.aligned", &wgmma_wait_warp, &lane, true);
}

}  // namespace warpnet::simt
