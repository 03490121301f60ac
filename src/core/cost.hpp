// FLOP and byte counts per op: the arithmetic a layer does and the memory it
// must move at least once. Their ratio (arithmetic intensity) tells whether an
// op is limited by compute or by bandwidth — why FLOPs alone do not decide speed.
#pragma once
#include <cstdint>

namespace warpnet {

struct OpCost {
  double flops = 0;          // multiply and add count as two
  double bytes_read = 0;     // each input read once
  double bytes_written = 0;  // each output written once
  double bytes() const { return bytes_read + bytes_written; }
  double intensity() const { return bytes() > 0 ? flops / bytes() : 0; }  // FLOP per byte
  OpCost& operator+=(const OpCost& o) {
    flops += o.flops;
    bytes_read += o.bytes_read;
    bytes_written += o.bytes_written;
    return *this;
  }
};

// C(M,N) = A(M,K) · B(K,N)
inline OpCost matmul_cost(int64_t m, int64_t n, int64_t k, int elem_bytes = 4) {
  return {2.0 * m * n * k, double(elem_bytes) * (m * k + k * n), double(elem_bytes) * m * n};
}

// y(N,K,P,Q) = conv(x(N,C,H,W), w(K,C,R,S)): each output is a C·R·S dot product.
inline OpCost conv2d_cost(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s,
                          int64_t p, int64_t q, int elem_bytes = 4) {
  return {2.0 * n * k * p * q * c * r * s, double(elem_bytes) * (n * c * h * w + k * c * r * s),
          double(elem_bytes) * n * k * p * q};
}

// An elementwise op over `count` values doing `flops_per_value` each.
inline OpCost elementwise_cost(int64_t count, double flops_per_value, int elem_bytes = 4) {
  return {flops_per_value * count, double(elem_bytes) * count, double(elem_bytes) * count};
}

// Pooling: one compare or add per window element.
inline OpCost pool2d_cost(int64_t n, int64_t c, int64_t h, int64_t w, int64_t window, int64_t p, int64_t q,
                          int elem_bytes = 4) {
  return {double(n) * c * p * q * window, double(elem_bytes) * n * c * h * w, double(elem_bytes) * n * c * p * q};
}

// The backward pass of a matmul or convolution computes two products of the
// forward's size (input gradient and weight gradient): twice the FLOPs.
inline OpCost backward_of(const OpCost& forward) {
  return {2.0 * forward.flops, 2.0 * forward.bytes_read + forward.bytes_written, forward.bytes_read};
}

}  // namespace warpnet
