// Tensor ops on a device backend (Device::emu or Device::cuda) with the
// kernel registry's versions: what layers call when a model runs on a device.
// The tensors live on the device (Tensor::to(Device)); results stay there.
#pragma once
#include <string>

#include "core/tensor.hpp"
#include "cpu/ops.hpp"
#include "device/registry.hpp"

namespace warpnet::device {

// The registry copy that launches on `device`: emulator for emu, cuda for cuda.
Copy copy_for(Device device);

// The version layers use by default: the highest-numbered fp32 version the
// device can run (the ladder is in order of speed; tensor-core versions round
// inputs to 16 bits and are chosen explicitly). Throws if the op has none.
const Kernel& best_kernel(const std::string& op, Device device);

// C = op(A) @ op(B) on A's device with `kernel` (default: best_kernel). A and
// B are f32, contiguous and on the same device; shapes follow cpu::matmul.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false,
              const Kernel* kernel = nullptr);

// The gradients of C = op(A) @ op(B), as cpu::matmul_backward, each one
// matmul on the device with the transposed layouts the kernels take.
cpu::MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc, bool trans_a = false,
                            bool trans_b = false, bool need_da = true, bool need_db = true,
                            const Kernel* kernel = nullptr);

}  // namespace warpnet::device
