// A mixed-precision run's state in a checkpoint: which precision trained it,
// fp16's loss scale and fp8's amax histories, so a resumed run continues
// with the scales the uninterrupted one would have used. The master weights
// and the optimizer's state are fp32 in every precision and are saved as
// always (nn/checkpoint.hpp); these ride along as extra tensors:
//   precision/<name>                       u8 (1): the marker (fp32, tf32, bf16, fp16, fp8)
//   precision/loss_scale                   f64 (3): scale, clean steps, skipped steps (fp16)
//   precision/fp8/<layer>/<operand>        f32 (k): amax history, oldest first (fp8)
//   precision/fp8_scale/<layer>/<operand>  f32 (1): the scale in use (fp8; absent before
//                                          2026-12-02, then computed from the history)
// A checkpoint without a marker was written before precisions existed: fp32.
#pragma once
#include "autograd/precision.hpp"
#include "nn/checkpoint.hpp"
#include "nn/loss_scaler.hpp"

namespace warpnet::nn {

void save_precision_state(Checkpoint& ck, ag::Precision precision, const ag::MixedPrecision* policy,
                          const DynamicLossScaler* scaler);
// The precision a checkpoint was trained in.
ag::Precision precision_of(const Checkpoint& ck);
// Rejects a checkpoint of another precision, naming both; restores the
// loss scale, the amax histories and the fp8 scales.
void restore_precision_state(const Checkpoint& ck, const std::string& path, ag::Precision precision,
                             ag::MixedPrecision* policy, DynamicLossScaler* scaler);

}  // namespace warpnet::nn
