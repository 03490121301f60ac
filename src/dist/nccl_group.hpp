// The gradient all-reduce of data-parallel training when the model lives on
// GPUs: NCCL (ncclAllReduce) over NVLink/PCIe between the ranks' GPUs,
// started through MPI — rank 0 makes the group's id (ncclGetUniqueId), MPI
// broadcasts it (dist::broadcast), and every rank joins (ncclCommInitRank).
//
// Built only when CMake finds NCCL beside the CUDA toolkit (nccl.h and
// libnccl: src/CMakeLists.txt says which it found). Without it,
// nccl_available() is false and data-parallel training on cuda all-reduces
// host copies of the gradients over MPI, as on the CPU.
//
// Status: compiled against NCCL 2 (CUDA 13 toolkit) on the CI machine, which
// has no GPU: NOT yet run on a GPU (unverified).
#pragma once
#include <cstdint>

namespace warpnet::dist {

// Whether this build has NCCL.
bool nccl_available();

// Whether this build has NCCL and this machine a GPU it can use.
bool nccl_gpus_present();

// Makes this rank use GPU `local_rank() % (GPUs it sees)` for everything
// CUDA it does next, refusing two ranks on one GPU (compared by PCI bus and
// host over MPI: a collective, every rank calls it); call before any tensor
// goes to the GPU. Returns the GPU's index, or -1 without NCCL (the CUDA
// default device, GPU 0, stays for every rank).
int use_local_gpu();

// The ranks' GPUs as one NCCL communicator, for the life of the object.
// Needs a dist::Session. Every call is on one CUDA stream of the group's.
class NcclGroup {
 public:
  NcclGroup();
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  // Device-to-device copy, in order with the all-reduces (the group's stream).
  void copy(void* device_dst, const void* device_src, int64_t bytes);
  // In place on device memory: data ← Σ_r data_r over all ranks. Starts
  // the work; synchronize() completes it.
  void start_sum(float* device_data, int64_t count);
  // Waits for everything started, within dist::timeout_s(); past it (a rank
  // died or hangs) aborts the NCCL communicator and ends the job naming
  // what this rank was doing.
  void synchronize();

 private:
  struct Impl;
  Impl* impl_ = nullptr;
};

}  // namespace warpnet::dist
