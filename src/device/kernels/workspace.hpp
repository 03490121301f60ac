// Device scratch memory for one launch, for the registrations whose kernels
// need more than the op's buffers (conv im2col's column matrix, conv wgrad's
// and the bias gradient's partial sums): one mechanism, shared by every op.
// An anonymous namespace although this is a header: it is private to the
// registration files, each compiled as three copies (plain, traced, nvcc; see
// copy.hpp) whose helpers must not be merged by the linker, and on a GPU each
// registration file keeps a buffer of its own.
#pragma once
#include "device/kernels/copy.hpp"

namespace warpnet::device {
namespace {

// Kernel::launch gets only the op's buffers, so a version that needs
// scratch memory asks for it here, for the length of one launch.
//
// Slots: on a GPU a registration file has one buffer per slot, so two
// workspaces alive at once in one launch (v18's packed fp8 operands and its
// stream-K partial sums) must take different slots, or the second would be
// the first's memory. Both copies refuse a slot already in use on this
// thread, so the emulator's tests catch what on a GPU would be a silent
// overlap (or, with stream-K's flags, a hang).
constexpr int kWorkspaceSlots = 2;

class WorkspaceSlot {
 public:
  explicit WorkspaceSlot(int slot) : slot_(slot) {
    if (slot < 0 || slot >= kWorkspaceSlots) fail("workspace slot ", slot, " of ", kWorkspaceSlots);
    if (in_use()[slot]) fail("workspace slot ", slot, " is already in use in this launch: give the second its own");
    in_use()[slot] = true;
  }
  ~WorkspaceSlot() { in_use()[slot_] = false; }
  WorkspaceSlot(const WorkspaceSlot&) = delete;
  WorkspaceSlot& operator=(const WorkspaceSlot&) = delete;
  int index() const { return slot_; }

 private:
  static bool (&in_use())[kWorkspaceSlots] {
    static thread_local bool slots[kWorkspaceSlots] = {};
    return slots;
  }
  int slot_;
};

#if defined(__CUDACC__)
// On a GPU one buffer per registration file and slot serves every launch,
// grown when a launch needs more: cudaFree waits for the whole device, so
// freeing after each launch would stall training and be timed by the bench.
// Reuse is safe: launches run in order (the legacy stream, or a blocking
// stream ordered with it). A buffer outgrown is kept, not freed: a captured
// graph (device/graph.hpp) may still read it at every replay.
class Workspace {
 public:
  explicit Workspace(size_t bytes, int slot = 0) : slot_(slot) {
    static void* buffers[kWorkspaceSlots] = {};
    static size_t capacities[kWorkspaceSlots] = {};
    void*& buffer = buffers[slot];
    size_t& capacity = capacities[slot];
    if (bytes > capacity) {
      buffer = nullptr, capacity = 0;
      check_cuda(cudaMalloc(&buffer, bytes), "workspace of ", bytes, " bytes: cudaMalloc");
      capacity = bytes;
      created_ = true;
    }
    data_ = buffer;
  }
  float* floats() const { return static_cast<float*>(data_); }
  void* data() const { return data_; }
  // Made by this launch, not reused from an earlier one: what it holds is not
  // what an earlier launch left (a kernel that keeps state there, such as
  // stream-K's flags, sets it).
  bool created() const { return created_; }

 private:
  WorkspaceSlot slot_;
  void* data_ = nullptr;
  bool created_ = false;
};
#else
// On the emulator exactly the bytes asked for, freed after the launch, so the
// checker catches a kernel that reads or writes past them. Stream-ordered
// (cudaMallocAsync on the launch stream): in a captured graph the buffer
// then belongs to the graph and outlives the capture, as on a GPU.
class Workspace {
 public:
  explicit Workspace(size_t bytes, int slot = 0) : slot_(slot) {
    check_cuda(cudaMallocAsync(&data_, bytes, launch_stream()), "workspace of ", bytes, " bytes: cudaMallocAsync");
  }
  ~Workspace() { cudaFreeAsync(data_, launch_stream()); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  float* floats() const { return static_cast<float*>(data_); }
  void* data() const { return data_; }
  bool created() const { return true; }  // every launch's is new

 private:
  WorkspaceSlot slot_;
  void* data_ = nullptr;
};
#endif

}  // namespace
}  // namespace warpnet::device
