// .npy read/write (format version 1.0/2.0) for NumPy and PyTorch interop.
#pragma once
#include <string>

#include "core/atomic_file.hpp"
#include "core/tensor.hpp"

namespace warpnet {

// Reads '<f4', '<f8', '<i4', '<i8' and '|u1' arrays, in C or Fortran order
// (returned in C order). Errors name the file and the fault (missing, bad
// magic, unsupported dtype, truncated data).
Tensor read_npy(const std::string& path);
// What every .npy file begins with, for the outputs that write one.
inline constexpr FileKind kNpyFile{"a .npy array", "\x93NUMPY"};

// Writes a tensor (made contiguous) atomically: temp file, then rename.
void write_npy(const std::string& path, const Tensor& tensor);

}  // namespace warpnet
