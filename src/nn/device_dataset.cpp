#include "nn/device_dataset.hpp"

#include "core/error.hpp"
#include "core/memory.hpp"
#include "device/backend.hpp"

namespace warpnet::nn {

DeviceDataset::DeviceDataset(const data::Dataset& data, Device device) {
  WN_CHECK(device != Device::cpu, "DeviceDataset: the CPU reads the data set where it is");
  WN_CHECK(data.inputs.dtype() == DType::f32 && data.labels.dtype() == DType::i32 && data.size() > 0,
           "DeviceDataset: '", data.name, "' has inputs ", data.inputs.describe(), " and labels ",
           data.labels.describe(), "; f32 inputs and i32 labels with at least one row are needed");
  MemoryScope scope(MemTag::other, "training set");
  inputs_ = data.inputs.contiguous().to(device);
  labels_ = data.labels.contiguous().to(device);
}

Tensor DeviceDataset::indices_of(std::span<const int64_t> rows) const {
  const int64_t n = labels_.dim(0);
  Tensor indices = Tensor::empty({static_cast<int64_t>(rows.size())}, DType::i32);
  int32_t* out = indices.data<int32_t>();
  for (size_t i = 0; i < rows.size(); ++i) {
    WN_CHECK(rows[i] >= 0 && rows[i] < n, "DeviceDataset: row ", rows[i], " of a batch is outside the set's ", n,
             " rows");
    out[i] = static_cast<int32_t>(rows[i]);
  }
  return indices;
}

void DeviceDataset::gather(const Tensor& indices, Tensor& inputs, Tensor& labels) const {
  device::gather_rows(inputs_, indices, inputs);
  device::gather_rows(labels_, indices, labels);
}

data::Batch DeviceDataset::batch(const Tensor& indices) const {
  const int64_t b = indices.dim(0);
  std::vector<int64_t> dims = inputs_.shape().dims();
  dims[0] = b;
  data::Batch out{Tensor::empty(Shape(dims), DType::f32, device()), Tensor::empty({b}, DType::i32, device())};
  gather(indices, out.inputs, out.labels);
  return out;
}

}  // namespace warpnet::nn
