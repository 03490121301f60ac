// A training set held on the device (emu or cuda), uploaded once; each
// batch is gathered there from its row numbers (device::gather_rows), so a
// step sends the device B indices instead of B copied rows.
//
// Made on the host, a Fashion-MNIST batch of 256 is 256 rows of 784 floats
// copied into a fresh tensor (116 us on the 2-core CI VM, 27 ms an epoch:
// datasets/dataset.cpp's gather_rows) and then 800 KB sent to the device;
// on a GPU both happen between two steps while the GPU waits. The whole set
// is 188 MB, nothing to an H200's memory, and the gather runs at device
// bandwidth.
#pragma once
#include <span>

#include "core/tensor.hpp"
#include "datasets/dataset.hpp"

namespace warpnet::nn {

class DeviceDataset {
 public:
  // Copies data's inputs (f32) and labels (i32) to `device`, charged to the
  // memory tracker's "other" tag as "training set".
  DeviceDataset(const data::Dataset& data, Device device);

  // The rows as an i32 (B) tensor on the host, each checked against the set's
  // size (the kernel cannot report a bad index): what gather() reads once it
  // is copied to the device.
  Tensor indices_of(std::span<const int64_t> rows) const;
  // inputs, labels (on the device, B rows of the set's shapes) = the rows
  // `indices` (i32 (B), on the device) names.
  void gather(const Tensor& indices, Tensor& inputs, Tensor& labels) const;
  // The same into new tensors.
  data::Batch batch(const Tensor& indices) const;

  Device device() const { return inputs_.device(); }

 private:
  Tensor inputs_, labels_;
};

}  // namespace warpnet::nn
