// Synthetic sets. Example i belongs to class i % classes, so classes are
// balanced and interleaved: any prefix (head(), an unshuffled batch) holds
// every class. All randomness comes from one Rng(seed), drawn in a fixed
// order, so a seed reproduces the set exactly on every platform.
#include "datasets/synthetic.hpp"

#include <cmath>
#include <numbers>

namespace warpnet::data {

namespace {

void check_counts(const char* what, int64_t n, int classes) {
  WN_CHECK(n >= 0, what, ": example count must be non-negative, got ", n);
  WN_CHECK(classes >= 1, what, ": need at least one class, got ", classes);
}

Tensor interleaved_labels(int64_t n, int classes) {
  Tensor labels = Tensor::empty({n}, DType::i32);
  int32_t* l = labels.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) l[i] = static_cast<int32_t>(i % classes);
  return labels;
}

}  // namespace

Dataset make_spirals(int64_t n, int classes, uint64_t seed, double noise) {
  check_counts("make_spirals", n, classes);
  Rng rng(seed);
  Dataset d{"spirals", Tensor::empty({n, 2}), interleaved_labels(n, classes), classes, {}, {}};
  float* x = d.inputs.data<float>();  // (n,2)
  const int64_t per_class = (n + classes - 1) / classes;
  for (int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(i % classes);
    // t walks each arm from the centre (0) to the rim (1); the arm turns
    // 4 radians on the way, and the arms start evenly spaced around the circle.
    const double t = per_class > 1 ? double(i / classes) / double(per_class - 1) : 0.0;
    const double angle = 2.0 * std::numbers::pi * c / classes + 4.0 * t + noise * rng.normal();
    x[2 * i] = static_cast<float>(t * std::cos(angle));
    x[2 * i + 1] = static_cast<float>(t * std::sin(angle));
  }
  return d;
}

Dataset make_blobs(int64_t n, int classes, int dims, uint64_t seed, double spread) {
  check_counts("make_blobs", n, classes);
  WN_CHECK(dims >= 1, "make_blobs: need at least one dimension, got ", dims);
  Rng rng(seed);
  // Centres uniform in [-5,5]^dims: with the default spread of 0.5 most blobs
  // are well apart, as in scikit-learn's make_blobs (box ±10, std 1).
  std::vector<double> centres(static_cast<size_t>(classes) * dims);
  for (double& c : centres) c = rng.uniform(-5.0, 5.0);
  Dataset d{"blobs", Tensor::empty({n, dims}), interleaved_labels(n, classes), classes, {}, {}};
  float* x = d.inputs.data<float>();  // (n,dims)
  for (int64_t i = 0; i < n; ++i) {
    const double* centre = centres.data() + (i % classes) * dims;
    for (int j = 0; j < dims; ++j) x[i * dims + j] = static_cast<float>(centre[j] + spread * rng.normal());
  }
  return d;
}

Dataset make_squares(int64_t n, int classes, int size, uint64_t seed) {
  check_counts("make_squares", n, classes);
  // The image is cut into a grid x grid array of cells; class c's square lies
  // somewhere in cell c, half a cell wide, so classes never overlap.
  const int grid = static_cast<int>(std::ceil(std::sqrt(double(classes))));
  const int cell = size / grid;
  WN_CHECK(cell >= 2, "make_squares: ", size, "x", size, " images are too small for ", classes,
           " classes (need at least ", 2 * grid, " pixels a side)");
  const int side = cell / 2;
  Rng rng(seed);
  Dataset d{"squares", Tensor::empty({n, 1, size, size}), interleaved_labels(n, classes), classes, {}, {}};
  float* x = d.inputs.data<float>();  // (n,1,size,size)
  for (int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(i % classes);
    float* img = x + i * size * size;
    // Dim noise everywhere, so the models must find the square, not any lit pixel.
    for (int p = 0; p < size * size; ++p) img[p] = static_cast<float>(rng.uniform(0.0, 0.2));
    const int top = (c / grid) * cell + static_cast<int>(rng.below(cell - side + 1));
    const int left = (c % grid) * cell + static_cast<int>(rng.below(cell - side + 1));
    for (int r = top; r < top + side; ++r)
      for (int q = left; q < left + side; ++q) img[r * size + q] = static_cast<float>(rng.uniform(0.8, 1.0));
  }
  return d;
}

}  // namespace warpnet::data
