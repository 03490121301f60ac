// What `warpnet train --precision` prints after training and records in the
// JSON report: the precision, fp16's loss scale and skipped steps, and each
// layer's fp8 amax and scale per operand.
#pragma once
#include <nlohmann/json.hpp>

#include "nn/trainer.hpp"

namespace warpnet::cli {

// Prints the lines (rank 0's job: the caller decides) and returns the record.
nlohmann::json report_precision(const nn::Trainer& trainer, ag::Precision precision, bool print);

}  // namespace warpnet::cli
