// Checkpoints: a model's weights, the optimizer's state and where training
// stood, in a versioned binary file with a CRC-32, written atomically.
//
// Layout (little-endian):
//   "WARPNETC"  u32 version  u64 body_bytes  u32 crc32(body)  body
// body:
//   str model  str optimizer  i64 epoch  i64 steps  u64 seed  str data  u32 count
//   count × { str name  u8 dtype  u32 rank  i64 dims[rank]  u64 bytes  data }
// where str is u32 length + bytes. Version 1 had no `data`.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "core/atomic_file.hpp"
#include "nn/module.hpp"
#include "nn/optim.hpp"

namespace warpnet::nn {

inline constexpr uint32_t kCheckpointVersion = 2;
// What every checkpoint begins with, for the outputs that write one.
inline constexpr FileKind kCheckpointFile{"a warpnet checkpoint", "WARPNETC"};
// More epochs than any run trains (`warpnet train --epochs` stops at 1000):
// a checkpoint claiming more is damaged or forged, and refused.
inline constexpr int64_t kMaxCheckpointEpoch = 1000000;
// Optimizer steps: Adam's bias correction takes the count as a double, exact
// up to 2^53, and the next step adds one; a forged 2^63 − 1 wrapped to a
// negative count and the loss became NaN, blamed on the learning rate.
inline constexpr int64_t kMaxCheckpointSteps = int64_t(1) << 53;

struct Checkpoint {
  std::string model;      // "lenet5"
  std::string optimizer;  // "adam", or empty when not saved
  int64_t epoch = 0;      // epochs completed
  int64_t steps = 0;      // optimizer steps taken
  uint64_t seed = 0;
  std::string data;  // the training set, "spirals[:600], 600 examples, contents <data hash>"; empty in version 1 files
  // "param/<name>", "optim/<name>/<slot>"; the trainer adds "train/<setting>"
  // (nn/trainer.cpp) and "precision/..." (nn/precision_state.hpp).
  std::map<std::string, Tensor> tensors;
};

void save_checkpoint(const std::string& path, const Checkpoint& checkpoint);
// Rejects, naming the file and the fault: missing file, wrong magic, a newer
// version, truncation, checksum mismatch, malformed records.
Checkpoint load_checkpoint(const std::string& path);

// Gathers the model's parameters (and the optimizer's state when given).
Checkpoint capture(const std::string& model_name, Module& model, const Optimizer* optimizer, int64_t epoch,
                   uint64_t seed, const std::string& data);
// The first weight or optimizer value that is not finite, as "'optim/fc1.bias/v'
// holds inf at element 3", or "" when there is none: restore refuses a
// checkpoint that holds one, so a run checks before it saves.
std::string first_nonfinite(const Checkpoint& checkpoint);
// Copies weights (and optimizer state when given) back; every parameter must
// be present with the same shape, else an error names the first that is not.
void restore(const Checkpoint& checkpoint, Module& model, Optimizer* optimizer);

}  // namespace warpnet::nn
