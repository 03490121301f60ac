// Warp collectives: shuffles, votes, __syncwarp and __activemask. Lanes run
// one after another, so a collective is a rendezvous: each lane parks with its
// operands, and once every lane its mask names has parked at a collective with
// the same mask, all results are computed at once.
#include <algorithm>
#include <cstring>
#include <map>

#include "simt/block.hpp"
#include "simt/symbols.hpp"
#include "simt/tensor_cores.hpp"

namespace warpnet::simt {

const char* warp_op_name(WarpOp op) {
  switch (op) {
    case WarpOp::syncwarp: return "__syncwarp";
    case WarpOp::shfl: return "__shfl_sync";
    case WarpOp::shfl_up: return "__shfl_up_sync";
    case WarpOp::shfl_down: return "__shfl_down_sync";
    case WarpOp::shfl_xor: return "__shfl_xor_sync";
    case WarpOp::ballot: return "__ballot_sync";
    case WarpOp::any: return "__any_sync";
    case WarpOp::all: return "__all_sync";
    case WarpOp::activemask: return "__activemask";
    case WarpOp::matrix: return "a warp matrix instruction";
    case WarpOp::reduce_add: return "__reduce_add_sync";
    case WarpOp::reduce_min: return "__reduce_min_sync";
    case WarpOp::reduce_max: return "__reduce_max_sync";
    case WarpOp::reduce_and: return "__reduce_and_sync";
    case WarpOp::reduce_or: return "__reduce_or_sync";
    case WarpOp::reduce_xor: return "__reduce_xor_sync";
    case WarpOp::match_any: return "__match_any_sync";
    case WarpOp::match_all: return "__match_all_sync";
  }
  return "?";
}

namespace {

// The lane a shuffle reads, or `lane` itself where CUDA returns the caller's
// own value (a source outside the lane's width-sized segment). The hardware
// takes the lane operand's low 5 bits (PTX shfl: bval = b[4:0]): a delta of
// 33 is a delta of 1.
unsigned shuffle_source(WarpOp op, unsigned lane, int arg, unsigned width) {
  const unsigned segment = lane & ~(width - 1), offset = lane & (width - 1), b = unsigned(arg) & 31u;
  switch (op) {
    case WarpOp::shfl: return segment + (b & (width - 1));
    case WarpOp::shfl_up: return offset >= b ? lane - b : lane;
    case WarpOp::shfl_down: return offset + b < width ? lane + b : lane;
    case WarpOp::shfl_xor: {
      const unsigned source = lane ^ b;
      return source < segment + width ? source : lane;  // earlier segments may be read, later ones not
    }
    default: return lane;
  }
}

std::string hex(unsigned mask) { return cat("0x", std::hex, mask); }

bool is_reduction(WarpOp op) {
  return op == WarpOp::reduce_add || op == WarpOp::reduce_min || op == WarpOp::reduce_max ||
         op == WarpOp::reduce_and || op == WarpOp::reduce_or || op == WarpOp::reduce_xor;
}

// The reduction `op` of the 32-bit values of the lanes in `mask` (min and
// max signed when `is_signed`).
uint64_t reduce(WarpOp op, bool is_signed, const Lane* group, unsigned count, unsigned mask) {
  bool first = true;
  uint32_t r = 0;
  for (unsigned l = 0; l < count; ++l) {
    if (!(mask >> l & 1)) continue;
    const uint32_t v = uint32_t(group[l].value);
    if (first) {
      r = v;
      first = false;
      continue;
    }
    switch (op) {
      case WarpOp::reduce_add: r += v; break;  // wraps modulo 2^32, as the hardware's
      case WarpOp::reduce_min: r = is_signed ? uint32_t(std::min(int32_t(r), int32_t(v))) : std::min(r, v); break;
      case WarpOp::reduce_max: r = is_signed ? uint32_t(std::max(int32_t(r), int32_t(v))) : std::max(r, v); break;
      case WarpOp::reduce_and: r &= v; break;
      case WarpOp::reduce_or: r |= v; break;
      default: r ^= v; break;
    }
  }
  return r;
}

// The lanes of `mask` whose value equals lane `l`'s.
uint64_t matching(const Lane* group, unsigned count, unsigned mask, unsigned l) {
  uint32_t same = 0;
  for (unsigned o = 0; o < count; ++o)
    if ((mask >> o & 1) && group[o].value == group[l].value) same |= 1u << o;
  return same;
}

const WarpMatrixOp& matrix_op(const Lane& lane) { return *reinterpret_cast<const WarpMatrixOp*>(lane.value); }

}  // namespace

bool Block::resolve_warp_ops(unsigned warp) {
  const unsigned begin = warp * 32, end = begin + lanes_in_warp(warp);
  bool progressed = false, activemask = false;
  for (unsigned i = begin; i < end; ++i) {
    Lane& lane = lanes_[i];
    if (lane.state != LaneState::at_warp_op) continue;
    if (lane.op == WarpOp::activemask)
      activemask = true;
    else if (resolve_masked_group(warp, lane))
      progressed = true;
  }
  // Lanes at __activemask see which lanes reached the same instruction. Only once
  // nothing else can move does that set stop growing.
  if (progressed || !activemask) return progressed;
  resolve_activemask(warp);
  return true;
}

bool Block::resolve_masked_group(unsigned warp, Lane& first) {
  const unsigned count = lanes_in_warp(warp);
  const unsigned exists = count == 32 ? ~0u : (1u << count) - 1;
  Lane* group = &lanes_[warp * 32];
  // Lanes past the end of a partial warp do not exist, and exited lanes take
  // no part: "all non-exited threads named in mask must execute the same
  // intrinsic" (CUDA C++ Programming Guide, warp shuffle and vote functions).
  unsigned exited = 0;
  for (unsigned l = 0; l < count; ++l)
    if (group[l].state == LaneState::done) exited |= 1u << l;
  const unsigned mask = first.mask & exists & ~exited;
  if (first.op == WarpOp::matrix && exited) {  // .sync.aligned: the whole warp, none of it gone
    const unsigned gone = unsigned(__builtin_ctz(exited));
    throw LaunchError(cudaErrorLaunchFailure,
                      cat(where(first), ": ", matrix_op(first).name, " at ", describe_code(first.site),
                          " needs all 32 lanes of the warp, but lane ", gone,
                          " has exited (on a GPU: undefined behaviour)"));
  }
  for (unsigned l = 0; l < count; ++l) {
    if (!(mask >> l & 1)) continue;
    const Lane& other = group[l];
    if (other.state != LaneState::at_warp_op || other.op == WarpOp::activemask || other.mask != first.mask)
      return false;  // not there yet; if it never arrives, release_barrier() reports the deadlock
    if (other.op != first.op) {
      throw LaunchError(cudaErrorLaunchFailure,
                        cat(where(first), ": lanes of warp ", warp, " disagree: this lane is in ",
                            warp_op_name(first.op), " at ", describe_code(first.site), ", lane ", l, " in ",
                            warp_op_name(other.op), " at ", describe_code(other.site), " with the same mask ",
                            hex(first.mask)));
    }
  }
  if (first.op == WarpOp::matrix) {
    run_matrix_op(warp, first);
    return true;
  }
  if (first.op != WarpOp::syncwarp) ++warp_collectives_;  // one warp-level instruction, whatever its lanes
  if (is_reduction(first.op)) {
    for (unsigned l = 0; l < count; ++l)
      if ((mask >> l & 1) && group[l].arg != first.arg)
        throw LaunchError(cudaErrorLaunchFailure,
                          cat(where(first), ": lanes of warp ", warp, " disagree: this lane is in the ",
                              first.arg ? "int" : "unsigned", " ", warp_op_name(first.op), " at ",
                              describe_code(first.site), ", lane ", l, " in the ", group[l].arg ? "int" : "unsigned",
                              " one at ", describe_code(group[l].site)));
  }
  const uint64_t reduced = is_reduction(first.op) ? reduce(first.op, first.arg != 0, group, count, mask) : 0;
  uint64_t votes = 0;
  for (unsigned l = 0; l < count; ++l)
    if ((mask >> l & 1) && group[l].value != 0) votes |= uint64_t(1) << l;
  for (unsigned l = 0; l < count; ++l) {
    if (!(mask >> l & 1)) continue;
    Lane& lane = group[l];
    switch (first.op) {
      case WarpOp::syncwarp: lane.result = 0; break;
      case WarpOp::ballot: lane.result = votes; break;
      case WarpOp::any: lane.result = votes != 0; break;
      case WarpOp::all: lane.result = votes == mask; break;
      case WarpOp::reduce_add:
      case WarpOp::reduce_min:
      case WarpOp::reduce_max:
      case WarpOp::reduce_and:
      case WarpOp::reduce_or:
      case WarpOp::reduce_xor: lane.result = reduced; break;
      case WarpOp::match_any: lane.result = matching(group, count, mask, l); break;
      case WarpOp::match_all: lane.result = matching(group, count, mask, l) == mask ? mask : 0; break;
      default: {
        const unsigned source = shuffle_source(lane.op, l, lane.arg, unsigned(lane.width));
        // A lane that has exited, is not in the mask or does not exist: on a
        // GPU the value is undefined, not the program ("the retrieved value
        // is undefined", the Programming Guide), so a kernel that discards
        // it (a guarded tail of a reduction) is correct. All-ones bits, a NaN
        // as a float, make a kernel that uses it fail its check.
        const bool undefined = source != l && ((exited >> source & 1) || !(mask >> source & 1));
        lane.result = undefined ? ~uint64_t(0) : group[source].value;
      }
    }
  }
  for (unsigned l = 0; l < count; ++l)
    if (mask >> l & 1) group[l].state = LaneState::ready;
  if (first.op == WarpOp::syncwarp) warp_sync(warp, mask);
  return true;
}

// Every lane of the warp is parked at a matrix instruction (mask 0xffffffff):
// check that it is one instruction on a whole warp, then run it once for all.
void Block::run_matrix_op(unsigned warp, const Lane& first) {
  const WarpMatrixOp& op = matrix_op(first);
  const unsigned count = lanes_in_warp(warp);
  if (count != 32) {
    throw LaunchError(cudaErrorLaunchFailure,
                      cat(where(first), ": ", op.name, " at ", describe_code(first.site),
                          " needs all 32 lanes of a warp, but warp ", warp, " has only ", count,
                          " (the block size is not a multiple of 32; on a GPU: undefined behaviour)"));
  }
  Lane* group = &lanes_[warp * 32];
  void* operands[32];
  for (unsigned l = 0; l < 32; ++l) {
    const WarpMatrixOp& other = matrix_op(group[l]);
    if (other.run != op.run || std::strcmp(other.name, op.name) != 0) {
      throw LaunchError(cudaErrorLaunchFailure,
                        cat(where(first), ": lanes of warp ", warp, " disagree: this lane is in ", op.name, " at ",
                            describe_code(first.site), ", lane ", l, " in ", other.name, " at ",
                            describe_code(group[l].site), " (.sync.aligned: every lane must run the same one)"));
    }
    operands[l] = other.operands;
  }
  try {
    op.run(operands);
  } catch (const WarpOperandError& e) {
    throw LaunchError(cudaErrorLaunchFailure, cat(where(first), ": ", op.name, " at ", describe_code(first.site), ": ",
                                                  e.what(), "; on a GPU: undefined behaviour"));
  }
  for (unsigned l = 0; l < 32; ++l) {
    group[l].result = 0;
    group[l].state = op.yields ? LaneState::yielded : LaneState::ready;
  }
  warp_sync(warp, ~0u);  // a .sync instruction orders the warp's shared-memory accesses, as __syncwarp does
}

void Block::resolve_activemask(unsigned warp) {
  std::map<const void*, unsigned> masks;  // instruction -> lanes parked there
  const unsigned begin = warp * 32, end = begin + lanes_in_warp(warp);
  for (unsigned i = begin; i < end; ++i)
    if (lanes_[i].state == LaneState::at_warp_op && lanes_[i].op == WarpOp::activemask)
      masks[lanes_[i].site] |= 1u << lanes_[i].lane;
  for (unsigned i = begin; i < end; ++i) {
    Lane& lane = lanes_[i];
    if (lane.state != LaneState::at_warp_op || lane.op != WarpOp::activemask) continue;
    lane.result = masks[lane.site];
    lane.state = LaneState::ready;
  }
}

void Block::deadlock() {
  // A lane is parked in a collective that cannot complete: find a lane its mask
  // names that is somewhere else, and say where.
  for (const Lane& lane : lanes_) {
    if (lane.state != LaneState::at_warp_op) continue;
    const Lane* group = &lanes_[lane.warp * 32];
    for (unsigned l = 0; l < lanes_in_warp(lane.warp); ++l) {
      const Lane& other = group[l];
      if (!(lane.mask >> l & 1) || (other.state == LaneState::at_warp_op && other.mask == lane.mask)) continue;
      const std::string elsewhere =
          other.state == LaneState::at_barrier
              ? cat("waits at __syncthreads() (", describe_code(other.site), ")")
              : cat("waits in ", warp_op_name(other.op), " with mask ", hex(other.mask), " (",
                    describe_code(other.site), ")");
      throw LaunchError(cudaErrorLaunchTimeout,
                        cat(where(lane), ": deadlock: this thread waits in ", warp_op_name(lane.op), " (",
                            describe_code(lane.site), ") for lane ", l, " of mask ", hex(lane.mask),
                            ", but thread ", format_dim(other.tid), " ", elsewhere,
                            " (on a GPU: a hang or undefined behaviour)"));
    }
  }
  throw LaunchError(cudaErrorLaunchTimeout, cat(where(), ": deadlock: no thread can make progress"));
}

}  // namespace warpnet::simt
