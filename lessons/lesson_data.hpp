// The images the chapters that train read: the first images of Fashion-MNIST,
// standardized with the training images' mean and spread as `warpnet train`
// does; when the files cannot be read, the synthetic squares set instead, with
// the reason, so the program still runs (and says its accuracies mean little).
#pragma once
#include <cstdint>
#include <exception>
#include <string>

#include "datasets/dataset.hpp"
#include "datasets/idx.hpp"
#include "datasets/synthetic.hpp"

namespace warpnet::lesson {

struct LessonData {
  data::Dataset train, test;
  std::string dir;            // where Fashion-MNIST was read; empty for the squares
  std::string why_synthetic;  // why it could not be, when it could not
  bool fashion() const { return !dir.empty(); }
};

inline LessonData load_fashion_mnist_or_squares(int64_t n_train, int64_t n_test, int classes = 10) {
  LessonData d;
  try {
    d.dir = data::fashion_mnist_dir();
    d.train = data::head(data::load_fashion_mnist(d.dir, true), n_train);
    d.test = data::head(data::load_fashion_mnist(d.dir, false), n_test);
  } catch (const std::exception& e) {
    d.dir.clear();
    d.why_synthetic = e.what();
    d.train = data::make_squares(n_train, classes, 28, 11);
    d.test = data::make_squares(n_test, classes, 28, 12);
  }
  const data::Standardization s = data::input_statistics(d.train);
  d.train = data::standardized(d.train, s);
  d.test = data::standardized(d.test, s);
  return d;
}

}  // namespace warpnet::lesson
