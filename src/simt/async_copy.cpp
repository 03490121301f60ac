// cp.async for the emulator: each thread keeps its issued copies in its Lane;
// commit_group closes a group; wait_group N hands the copies of every group but
// the newest N back to the kernel's inline code, which makes them.
#include <algorithm>
#include <cstdint>

#include "simt/block.hpp"
#include "simt/checker.hpp"
#include "simt/device.hpp"
#include "simt/trace_hooks.hpp"

namespace warpnet::simt {

void async_copy_issue(const char* instruction, void* dst, const void* src, unsigned bytes, unsigned src_bytes) {
  LibraryScope scope;
  Lane& lane = this_lane(instruction);
  // PTX: both addresses aligned to the copy size; src-size at most cp-size.
  if (reinterpret_cast<uintptr_t>(dst) % bytes != 0) device_misuse(instruction, "shared address not aligned to the copy size", dst);
  if (reinterpret_cast<uintptr_t>(src) % bytes != 0) device_misuse(instruction, "global address not aligned to the copy size", src);
  if (src_bytes > bytes) device_misuse(instruction, "src-size larger than cp-size", src);
  if (Checker* checker = current_block->checker_if_traced())
    checker->async_copy_issued(lane, reinterpret_cast<uintptr_t>(dst), bytes, __builtin_return_address(0));
  lane.async_copies.push_back({dst, src, bytes, src_bytes, 0});
}

void async_copy_commit() {
  LibraryScope scope;
  Lane& lane = this_lane("cp.async.commit_group");
  // An empty group is legal (PTX) and still counts for wait_group.
  ++lane.async_groups;
  for (AsyncCopy& copy : lane.async_copies)
    if (copy.group == 0) copy.group = lane.async_groups;
}

bool async_copy_next(unsigned pending, AsyncCopy* copy) {
  LibraryScope scope;
  Lane& lane = this_lane("cp.async.wait_group");
  const uint32_t newest_done = lane.async_groups > pending ? lane.async_groups - pending : 0;
  const auto ready = std::find_if(lane.async_copies.begin(), lane.async_copies.end(), [&](const AsyncCopy& c) {
    return c.group != 0 && c.group <= newest_done;
  });
  if (ready == lane.async_copies.end()) return false;
  *copy = *ready;
  lane.async_copies.erase(ready);
  return true;
}

}  // namespace warpnet::simt
