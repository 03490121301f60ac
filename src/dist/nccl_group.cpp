// dist/nccl_group.hpp: NCCL when the build has it (WARPNET_HAS_NCCL), a
// stand-in that says so when not. Unverified on a GPU (see the header).
#include "dist/nccl_group.hpp"

#include "core/error.hpp"
#include "dist/communicator.hpp"

#if WARPNET_HAS_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace warpnet::dist {

namespace {

void cuda_check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) abort_job(cat(call, " failed: ", cudaGetErrorName(e), ": ", cudaGetErrorString(e)));
}

void nccl_check(ncclResult_t r, const char* call) {
  if (r != ncclSuccess && r != ncclInProgress) abort_job(cat(call, " failed: ", ncclGetErrorString(r)));
}

}  // namespace

struct NcclGroup::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

bool nccl_available() { return true; }

bool nccl_gpus_present() {
  int count = 0;
  // No driver (a build machine) reads as no GPU, as everywhere in warpnet.
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

int use_local_gpu() {
  int count = 0;
  cuda_check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  WN_CHECK(count > 0, "dist: no GPU for this rank");
  // The rank's number on its machine (not world rank mod local size, which
  // repeats when mpirun maps ranks round-robin over machines) picks among
  // the GPUs it sees: all of the machine's, or the one a launcher left it
  // (CUDA_VISIBLE_DEVICES per rank, SLURM's --gpus-per-task=1).
  const int gpu = local_rank() % count;
  cuda_check(cudaSetDevice(gpu), "cudaSetDevice");
  // One GPU per rank: NCCL refuses two ranks on one (ncclInvalidUsage), and
  // only after the MPI work before it. The ranks compare their devices here.
  char bus[32] = {}, host[256] = {};
  cuda_check(cudaDeviceGetPCIBusId(bus, sizeof bus, gpu), "cudaDeviceGetPCIBusId");
  ::gethostname(host, sizeof host - 1);
  uint64_t mine = 1469598103934665603ull;  // FNV-1a of "host/bus"
  for (const char c : std::string(host) + "/" + bus) mine = (mine ^ uint8_t(c)) * 1099511628211ull;
  const std::vector<uint64_t> devices = allgather(mine);
  for (int r = 0; r < int(devices.size()); ++r)
    WN_CHECK(r == rank() || devices[size_t(r)] != mine, "dist: ranks ", r, " and ", rank(), " would share GPU ", bus,
             " on ", host, ": NCCL needs a GPU per rank (start at most as many ranks per machine as it has GPUs)");
  return gpu;
}

NcclGroup::NcclGroup() : impl_(new Impl) {
  WN_CHECK(active(), "dist: an NCCL group needs a dist::Session (MPI carries its id)");
  set_activity("NCCL setup (ncclCommInitRank)");
  ncclUniqueId id;
  if (rank() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  broadcast(&id, sizeof id, 0);
  nccl_check(ncclCommInitRank(&impl_->comm, size(), id, rank()), "ncclCommInitRank");
  // A blocking stream: its work waits for the kernels already launched on
  // the default stream (backward's gradients), and the default stream's
  // next kernels (the optimizer) wait for it.
  cuda_check(cudaStreamCreate(&impl_->stream), "cudaStreamCreate");
}

NcclGroup::~NcclGroup() {
  if (impl_->stream) cudaStreamSynchronize(impl_->stream);
  if (impl_->comm) ncclCommDestroy(impl_->comm);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
  delete impl_;
}

void NcclGroup::copy(void* device_dst, const void* device_src, int64_t bytes) {
  cuda_check(cudaMemcpyAsync(device_dst, device_src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, impl_->stream),
             "cudaMemcpyAsync");
}

void NcclGroup::start_sum(float* device_data, int64_t count) {
  nccl_check(ncclAllReduce(device_data, device_data, static_cast<size_t>(count), ncclFloat32, ncclSum, impl_->comm,
                           impl_->stream),
             "ncclAllReduce");
}

void NcclGroup::synchronize() {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t state = cudaStreamQuery(impl_->stream);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) cuda_check(state, "cudaStreamQuery");
    ncclResult_t async = ncclSuccess;
    nccl_check(ncclCommGetAsyncError(impl_->comm, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) {
      ncclCommAbort(impl_->comm);
      impl_->comm = nullptr;
      abort_job(cat("NCCL failed during the all-reduce: ", ncclGetErrorString(async)));
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s()) {
      // A peer that died or hangs never joins: NCCL would spin forever.
      ncclCommAbort(impl_->comm);
      impl_->comm = nullptr;
      abort_job(cat("waited ", timeout_s(), " s for an NCCL all-reduce; another rank has died or hangs; ending the job"));
    }
  }
}

}  // namespace warpnet::dist

#else  // no NCCL in this build

namespace warpnet::dist {

struct NcclGroup::Impl {};

bool nccl_available() { return false; }
bool nccl_gpus_present() { return false; }
int use_local_gpu() { return -1; }

NcclGroup::NcclGroup() {
  fail("dist: this warpnet was built without NCCL (CMake looked for nccl.h and libnccl beside the CUDA toolkit); "
       "data-parallel training on cuda all-reduces host copies over MPI instead");
}
NcclGroup::~NcclGroup() = default;
void NcclGroup::copy(void*, const void*, int64_t) {}
void NcclGroup::start_sum(float*, int64_t) {}
void NcclGroup::synchronize() {}

}  // namespace warpnet::dist

#endif  // WARPNET_HAS_NCCL
