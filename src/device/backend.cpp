#include "device/backend.hpp"

#include <array>

#include "core/error.hpp"
#include "device/run.hpp"

namespace warpnet::device {

Copy copy_for(Device device) {
  WN_CHECK(device != Device::cpu, "device backend: the CPU runs cpu:: ops, not registry kernels");
  return device == Device::emu ? Copy::emulator : Copy::cuda;
}

const Kernel& best_kernel(const std::string& op, Device device) {
  const Copy copy = copy_for(device);
  const Kernel* best = nullptr;
  for (const Kernel* k : kernels(copy))
    if (k->op == op && !k->input_format && (copy == Copy::cuda || k->emulator)) best = k;  // sorted by version
  WN_CHECK(best, "device backend: no fp32 ", op, " kernel is registered for ", name_of(device),
           device == Device::cuda ? " (this build has no CUDA copy of the kernels)" : "");
  return *best;
}

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, const Kernel* kernel) {
  const cpu::MatmulDims d = cpu::matmul_dims("device::matmul", a, b, trans_a, trans_b);
  WN_CHECK(a.dtype() == DType::f32, "device::matmul: the kernels take f32, got ", a.describe());
  WN_CHECK(a.device() == b.device() && a.device() != Device::cpu, "device::matmul: A is ", a.describe(), ", B is ",
           b.describe(), "; both must be on one device (emu or cuda)");
  const Kernel& k = kernel ? *kernel : best_kernel("matmul", a.device());
  WN_CHECK(k.op == "matmul" && k.copy == copy_for(a.device()) && !k.input_format, "device::matmul: ", k.id(),
           " (", to_string(k.copy), ", ", k.precision, ") cannot run an fp32 matmul on ", name_of(a.device()));
  Tensor c = Tensor::empty({d.m, d.n}, DType::f32, a.device());
  if (d.m == 0 || d.n == 0) return c;
  if (d.k == 0) return Tensor::zeros({d.m, d.n}).to(a.device());  // an empty sum; no kernel handles K = 0
  const Sizes sizes{d.m, d.n, d.k, trans_a, trans_b};
  const std::array<void*, 3> buffers{const_cast<void*>(a.raw()), const_cast<void*>(b.raw()), c.raw()};
  launch(k, sizes, buffers);
  return c;
}

cpu::MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc, bool trans_a, bool trans_b,
                            bool need_da, bool need_db, const Kernel* kernel) {
  const cpu::MatmulDims d = cpu::matmul_dims("device::matmul_backward", a, b, trans_a, trans_b);
  WN_CHECK(dc.shape() == Shape({d.m, d.n}), "device::matmul_backward: dC is ", dc.shape(),
           " but op(A)·op(B) is (", d.m, ",", d.n, ")");
  // The same identities as cpu::matmul_backward; each product a kernel launch.
  cpu::MatmulGrads g;
  if (need_da)
    g.da = trans_a ? matmul(b, dc, trans_b, true, kernel)     // dA(K,M) = op(B)·dCᵀ
                   : matmul(dc, b, false, !trans_b, kernel);  // dA(M,K) = dC·op(B)ᵀ
  if (need_db)
    g.db = trans_b ? matmul(dc, a, true, trans_a, kernel)     // dB(N,K) = dCᵀ·op(A)
                   : matmul(a, dc, !trans_a, false, kernel);  // dB(K,N) = op(A)ᵀ·dC
  return g;
}

}  // namespace warpnet::device
