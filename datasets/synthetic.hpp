// Synthetic sets that need no files and train in seconds.
#pragma once
#include <cstdint>

#include "datasets/dataset.hpp"

namespace warpnet::data {

// Example i has class i % classes in all three, so any prefix is balanced.

// `classes` interleaved spiral arms in the plane: inputs f32 (n,2) within the
// unit disk; `noise` is the standard deviation of each point's angle (radians).
Dataset make_spirals(int64_t n, int classes, uint64_t seed, double noise = 0.1);
// `classes` Gaussian blobs in `dims` dimensions: inputs f32 (n,dims); centres
// uniform in [-5,5]^dims, `spread` the standard deviation around them.
Dataset make_blobs(int64_t n, int classes, int dims, uint64_t seed, double spread = 0.5);
// Small 1-channel images (n,1,size,size) in [0,1] whose class is the position of a
// bright square: lets the convolutional models train in seconds in tests. Needs
// size >= 2*ceil(sqrt(classes)).
Dataset make_squares(int64_t n, int classes, int size, uint64_t seed);

}  // namespace warpnet::data
