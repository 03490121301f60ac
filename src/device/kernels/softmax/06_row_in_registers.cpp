// Softmax v6's registration: picks the threads per row T and the float4s
// per thread V from C (kernels/softmax/06_row_in_registers.cu says why), and
// launches v5's kernel for rows longer than the registers hold.
#include "device/kernels/softmax/softmax_registration.hpp"

namespace {
#include "kernels/softmax/05_vectorized.cu"  // rows past kMaxColumns
#include "kernels/softmax/06_row_in_registers.cu"
}  // namespace

namespace warpnet::device::softmax_kernels {
namespace {

constexpr int kWarpRowsBlock = 256;  // the block when a row fits in a warp (several rows per block), as v5
constexpr int kMaxV = 8;             // float4s per thread at most: 32 registers of the row
constexpr int kMaxColumns = 1024 * 4 * kMaxV;  // 32768: a 1024-thread block's registers

// How a launch splits the rows: `threads` (T) per row in blocks of `block`,
// `v` float4s per thread; v == 0: the row is too long, v5 runs it (G = 32).
struct Plan {
  int block, threads, v;
};

Plan plan(const Sizes& s) {
  const int c = C(s);
  if (c <= 128) return {kWarpRowsBlock, float4_lanes_per_row(c), 1};  // v5's G lanes, one float4 each
  if (c <= 32 * 4 * kMaxV) return {kWarpRowsBlock, 32, ceil_div(c, 4 * 32)};  // a warp, V in 2 .. 8
  if (c <= kMaxColumns) {  // a block: T * 32 >= C > T * 16, so V = ceil(C / 4T) in 5 .. 8
    int t = 64;
    while (t * 4 * kMaxV < c) t *= 2;
    return {t, t, ceil_div(c, 4 * t)};
  }
  return {kWarpRowsBlock, 32, 0};
}

// The instance with V = v for v in VLO .. kMaxV: each V is its own kernel,
// since V sizes the register array.
template <int BLOCK, int T, int VLO>
SoftmaxKernel with_v(int v) {
  if constexpr (VLO == kMaxV) {
    return softmax_row_in_registers<BLOCK, T, kMaxV>;
  } else {
    return v == VLO ? softmax_row_in_registers<BLOCK, T, VLO> : with_v<BLOCK, T, VLO + 1>(v);
  }
}

SoftmaxKernel instance(const Plan& p) {
  if (p.v == 0) return softmax_vectorized<kWarpRowsBlock, 32>;
  switch (p.threads) {
    case 1: return softmax_row_in_registers<kWarpRowsBlock, 1, 1>;
    case 2: return softmax_row_in_registers<kWarpRowsBlock, 2, 1>;
    case 4: return softmax_row_in_registers<kWarpRowsBlock, 4, 1>;
    case 8: return softmax_row_in_registers<kWarpRowsBlock, 8, 1>;
    case 16: return softmax_row_in_registers<kWarpRowsBlock, 16, 1>;
    case 32: return with_v<kWarpRowsBlock, 32, 1>(p.v);
    case 64: return with_v<64, 64, 5>(p.v);
    case 128: return with_v<128, 128, 5>(p.v);
    case 256: return with_v<256, 256, 5>(p.v);
    case 512: return with_v<512, 512, 5>(p.v);
    case 1024: return with_v<1024, 1024, 5>(p.v);
  }
  fail("softmax/06: no instance for ", p.threads, " threads per row");
}

Launch launch_shape(const Sizes& s) {
  const Plan p = plan(s);
  return Launch{dim3(ceil_div(N(s), p.block / p.threads)), dim3(p.block), 0};
}

const Registration row_in_registers{Kernel{
    .op = "softmax",
    .version = 6,
    .name = "row_in_registers",
    .precision = "fp32",
    .shape_text = "C <= 1024: block (256), grid (ceil(N / (256/T))), T = min(32, pow2 >= C/4) lanes per row; "
                  "C <= 32768: block (T), grid (N), T = pow2 >= C/32; V = ceil(C/4T) float4s per thread in "
                  "registers; C > 32768: v5's launch (G = 32)",
    .shape = launch_shape,
    .flops = flops,
    // Z read once and P written once; rows past 32768 go to v5, which reads Z twice.
    .bytes = [](const Sizes& s) { return pass_bytes(s, plan(s).v == 0 ? 2 : 1); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_softmax(s, l, b, instance(plan(s))); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::softmax_kernels
