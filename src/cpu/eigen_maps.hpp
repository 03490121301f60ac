// Internal to src/cpu: Eigen views of warpnet tensors. A Tensor is row-major,
// so every map here is a row-major Eigen matrix over the tensor's own bytes:
// no copy is made, and writes through a map land in the tensor.
#pragma once
#include <cstdint>

// GCC 12 reports -Wmaybe-uninitialized inside Eigen 3.4's AVX-512 GEMM
// packing (a false positive: ptranspose fills every lane). The warning is
// raised where the code is instantiated, so it is silenced for the rest of
// each src/cpu file that includes this header, not only around the include.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

namespace warpnet::cpu {

template <class T>
using MatrixR = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MapR = Eigen::Map<MatrixR<T>, Eigen::Unaligned>;
template <class T>
using ConstMapR = Eigen::Map<const MatrixR<T>, Eigen::Unaligned>;
template <class T>
using ConstMapVec = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>, Eigen::Unaligned>;

// p: (rows,cols) row-major
template <class T>
MapR<T> map_matrix(T* p, int64_t rows, int64_t cols) {
  return MapR<T>(p, rows, cols);
}
template <class T>
ConstMapR<T> map_matrix(const T* p, int64_t rows, int64_t cols) {
  return ConstMapR<T>(p, rows, cols);
}

}  // namespace warpnet::cpu
