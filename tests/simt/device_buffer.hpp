// A cudaMalloc'ed buffer for the emulator's tests: owns the allocation,
// copies to and from std::vector.
#pragma once
#include <doctest/doctest.h>

#include <vector>

#include "kernels/common/cuda_compat.hpp"

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count) : count_(count) { REQUIRE(cudaMalloc(&data_, count * sizeof(T)) == cudaSuccess); }
  explicit DeviceBuffer(const std::vector<T>& values) : DeviceBuffer(values.size()) { upload(values); }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }
  size_t size() const { return count_; }
  void upload(const std::vector<T>& values) {
    REQUIRE(values.size() == count_);
    REQUIRE(cudaMemcpy(data_, values.data(), count_ * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> out(count_);
    REQUIRE(cudaMemcpy(out.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return out;
  }

 private:
  T* data_ = nullptr;
  size_t count_;
};

// Runs the enclosing test's launches in the deterministic mode (one worker,
// blocks in order) and restores the default afterwards.
struct DeterministicScope {
  DeterministicScope() { warpnet::simt::set_workers(1); }
  ~DeterministicScope() { warpnet::simt::set_workers(0); }
};
