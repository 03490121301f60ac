// IDX files (the MNIST family's format), gzip-compressed or raw, and
// Fashion-MNIST as Debian's dataset-fashion-mnist package installs it.
#pragma once
#include <string>

#include "datasets/dataset.hpp"

namespace warpnet::data {

// Reads one IDX file of unsigned bytes (type code 0x08) into a u8 tensor with
// the file's dimensions. Errors name the file and the fault: missing,
// wrong magic, unsupported type, zero or absurd (> 2^31 elements) extents,
// truncated data, more data than the header announces, corrupt gzip.
// max_items > 0 reads only the first max_items records along the first
// dimension (a --limit then costs its own memory, not the whole file's);
// damage past them then goes unseen, as it is never read.
Tensor read_idx(const std::string& path, int64_t max_items = 0);

// Where the Debian package dataset-fashion-mnist puts the IDX files.
inline constexpr const char* kFashionMnistPackageDir = "/usr/share/datasets/fashion-mnist";

// Where Fashion-MNIST is read from: $WARPNET_FASHION_MNIST if set, else
// kFashionMnistPackageDir.
std::string fashion_mnist_dir();

// The training (60000) or test (10000) split: inputs f32 (N,1,28,28) scaled
// to [0,1], labels i32 (N). Image and label counts must agree.
// max_items > 0: only the first max_items examples (read_idx).
Dataset load_fashion_mnist(const std::string& dir, bool train, int64_t max_items = 0);

// Reads an images file (N,H,W) and a labels file (N) as one data set; every
// label must be below num_classes (the error names the first offender's index).
Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path, std::string name,
                      int num_classes = 10, int64_t max_items = 0);

}  // namespace warpnet::data
