// Half sums — where a long sum is kept: a dot product accumulated in fp32
// (FFMA), or in 16-bit pairs themselves (__hfma2, one HFMA2 instruction for
// two multiply-adds), by one thread or by a warp's 32 lanes and a shuffle
// butterfly; lesson 07 runs them on the emulator against an exact sum.
//
// Idea: a 16-bit float keeps 11 significant bits (fp16) or 8 (bf16). Once a
//   running sum is large, a term smaller than half its spacing changes
//   nothing when added, and terms a little larger are rounded to a whole
//   spacing: the sum drifts and then stalls. fp32's 24 bits push that point
//   far past any sum here, which is why tensor cores take 16-bit inputs and
//   keep fp32 sums. Splitting one sum among 32 lanes keeps each partial 32
//   times smaller (so 32 times finer), and the butterfly adds partials of
//   equal size, which lose little: how a warp's sum is ordered changes how
//   much a narrow accumulator loses.
// Changed: first version.
// Measured: not measured on a GPU (teaching kernels: the sums are the same
//   bits on any GPU that rounds HFMA2 once, as the emulator does).
// Run: build/bin/lesson07 (part 7)
#include <type_traits>

#include "kernels/common/cuda_compat.hpp"

// (lo, hi) as a Pair (__half2 or __nv_bfloat162), each rounded to nearest.
template <class Pair>
__device__ __forceinline__ Pair pair_of(float lo, float hi) {
  if constexpr (std::is_same_v<Pair, __half2>) {
    return __floats2half2_rn(lo, hi);
  } else {
    return __floats2bfloat162_rn(lo, hi);
  }
}

// x, y: (n,) floats, n even, each exactly representable in the Pair's
// format; out: (1,) the sum of x[i]·y[i]. One block of 1 or 32 threads:
// thread t keeps two running sums in one Pair (the even and the odd
// elements) over the pairs t, t + blockDim.x, ...; a warp then adds its
// lanes' Pairs by __shfl_xor_sync. The pair's two sums are added last, in fp32.
template <class Pair>
__global__ void dot_in_pairs(const float* __restrict__ x, const float* __restrict__ y, int n,
                             float* __restrict__ out) {
  Pair sum = pair_of<Pair>(0.0f, 0.0f);
  for (int p = threadIdx.x; p < n / 2; p += blockDim.x)
    sum = __hfma2(pair_of<Pair>(x[2 * p], x[2 * p + 1]), pair_of<Pair>(y[2 * p], y[2 * p + 1]), sum);
  if (blockDim.x == 32)
    for (int offset = 16; offset > 0; offset /= 2) sum = __hadd2(sum, __shfl_xor_sync(0xffffffffu, sum, offset));
  if (threadIdx.x == 0) out[0] = __low2float(sum) + __high2float(sum);
}

// The same dot product with an fp32 running sum (one fmaf per element), for
// the same 1 or 32 threads and the same butterfly.
__global__ void dot_in_fp32(const float* __restrict__ x, const float* __restrict__ y, int n,
                            float* __restrict__ out) {
  float sum = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum = fmaf(x[i], y[i], sum);
  if (blockDim.x == 32)
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (threadIdx.x == 0) out[0] = sum;
}
