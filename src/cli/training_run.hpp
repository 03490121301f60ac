// What `warpnet train` and `warpnet tour` share: choosing a data set, and a
// training run that prints progress, results and the memory split.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "datasets/dataset.hpp"
#include "datasets/idx.hpp"
#include "nn/trainer.hpp"

namespace warpnet::cli {

struct DataSplits {
  data::Dataset train, test;
};

// --data-dir's help, `train`'s and `tour`'s.
inline const std::string kDataDirHelp = std::string(
    "Directory with the Fashion-MNIST .gz files (default: $WARPNET_FASHION_MNIST, else ") + data::kFashionMnistPackageDir + ")";

// "fashion-mnist" (from `dir`, or the default directory when empty),
// "spirals", "blobs" or "squares" (generated from the seed). `limit` > 0 keeps
// the first `limit` training and limit/6 test examples, for quick runs.
DataSplits load_data(const std::string& name, const std::string& dir, int64_t limit, uint64_t seed);

// Trains with a progress bar, prints each epoch's results and the memory by
// tag at the end, and returns a JSON report of the run.
nlohmann::json run_training(const nn::TrainOptions& options, const DataSplits& data, int threads);

}  // namespace warpnet::cli
