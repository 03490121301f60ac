#include "nn/checkpoint.hpp"

#include <zlib.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <set>

#include "core/atomic_file.hpp"

namespace warpnet::nn {

static_assert(std::endian::native == std::endian::little, "checkpoints are written little-endian");

namespace {

constexpr std::string_view kMagic = kCheckpointFile.magic;
constexpr size_t kHeaderBytes = 8 + 4 + 8 + 4;

class Writer {
 public:
  template <class T>
  void put(T value) {
    out_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_str(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    out_ += s;
  }
  void put_bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

// Bounds-checked reads over the body; every fault names the file.
class Reader {
 public:
  Reader(const std::string& path, std::string_view bytes) : path_(path), bytes_(bytes) {}
  template <class T>
  T get(const char* what) {
    T value;
    std::memcpy(&value, take(sizeof value, what), sizeof value);
    return value;
  }
  std::string get_str(const char* what) {
    uint32_t n = get<uint32_t>(what);
    return std::string(take(n, what), n);
  }
  const char* take(size_t n, const char* what) {
    if (n > bytes_.size() - pos_)
      fail(path_, ": malformed checkpoint: ", what, " needs ", n, " bytes at offset ", pos_, ", only ",
           bytes_.size() - pos_, " remain");
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  const std::string& path_;
  std::string_view bytes_;
  size_t pos_ = 0;
};

uint32_t crc_of(std::string_view body) {
  return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
}

}  // namespace

void save_checkpoint(const std::string& path, const Checkpoint& ck) {
  Writer body;
  body.put_str(ck.model);
  body.put_str(ck.optimizer);
  body.put<int64_t>(ck.epoch);
  body.put<int64_t>(ck.steps);
  body.put<uint64_t>(ck.seed);
  body.put_str(ck.data);
  body.put<uint32_t>(static_cast<uint32_t>(ck.tensors.size()));
  for (const auto& [name, tensor] : ck.tensors) {
    Tensor t = tensor.contiguous();
    body.put_str(name);
    body.put<uint8_t>(static_cast<uint8_t>(t.dtype()));
    body.put<uint32_t>(static_cast<uint32_t>(t.rank()));
    for (int64_t d : t.shape()) body.put<int64_t>(d);
    body.put<uint64_t>(static_cast<uint64_t>(t.nbytes()));
    body.put_bytes(t.raw(), static_cast<size_t>(t.nbytes()));
  }
  Writer file;
  file.put_bytes(kMagic.data(), kMagic.size());
  file.put<uint32_t>(kCheckpointVersion);
  file.put<uint64_t>(body.bytes().size());
  file.put<uint32_t>(crc_of(body.bytes()));
  file.bytes() += body.bytes();
  create_parent_directories(path, "checkpoint");
  write_file_atomically(path, file.bytes());
}

Checkpoint load_checkpoint(const std::string& path) {
  if (!path_exists(path)) fail(path, ": no such checkpoint file");
  const std::string bytes = read_file(path, kMagic);
  // A file shorter than the magic that begins as it does is cut short, not another format.
  if (std::string_view(bytes).substr(0, kMagic.size()) != kMagic.substr(0, bytes.size()))
    fail(path, ": not a warpnet checkpoint (bad magic)");
  if (bytes.size() < kHeaderBytes)
    fail(path, ": truncated: ", bytes.size(), " bytes, shorter than a checkpoint's ", kHeaderBytes, "-byte header");
  Reader header(path, std::string_view(bytes).substr(8, kHeaderBytes - 8));
  const uint32_t version = header.get<uint32_t>("version");
  const uint64_t body_bytes = header.get<uint64_t>("body size");
  const uint32_t crc = header.get<uint32_t>("checksum");
  if (version > kCheckpointVersion)
    fail(path, ": checkpoint version ", version, " is newer than this build reads (", kCheckpointVersion,
         "), or the header is damaged (the checksum covers the body only)");
  if (version == 0) fail(path, ": checkpoint version 0: no warpnet writes it (the first is 1)");
  if (bytes.size() - kHeaderBytes != body_bytes)
    fail(path, ": truncated or padded checkpoint: header says ", body_bytes, " body bytes, file has ",
         bytes.size() - kHeaderBytes);
  std::string_view body = std::string_view(bytes).substr(kHeaderBytes);
  if (crc_of(body) != crc) fail(path, ": checkpoint is corrupted (CRC-32 mismatch)");

  Reader in(path, body);
  Checkpoint ck;
  ck.model = in.get_str("model name");
  ck.optimizer = in.get_str("optimizer name");
  ck.epoch = in.get<int64_t>("epoch");
  ck.steps = in.get<int64_t>("steps");
  // Counts a run reached, not arbitrary numbers: a resumed run counts on from them.
  if (ck.epoch < 0 || ck.epoch > kMaxCheckpointEpoch)
    fail(path, ": checkpoint says ", ck.epoch, " epochs were completed (expected 0 to ", kMaxCheckpointEpoch, ")");
  if (ck.steps < 0 || ck.steps > kMaxCheckpointSteps)
    fail(path, ": checkpoint says ", ck.steps, " optimizer steps were taken (expected 0 to 2^53)");
  ck.seed = in.get<uint64_t>("seed");
  if (version >= 2) ck.data = in.get_str("data set");
  const uint32_t count = in.get<uint32_t>("tensor count");
  for (uint32_t i = 0; i < count; ++i) {
    std::string name = in.get_str("tensor name");
    const auto dtype = static_cast<DType>(in.get<uint8_t>("dtype"));
    if (dtype != DType::f32 && dtype != DType::f64 && dtype != DType::i32 && dtype != DType::i64 &&
        dtype != DType::u8)
      fail(path, ": tensor '", name, "' has an unknown dtype code ", int(dtype));
    const uint32_t rank = in.get<uint32_t>("rank");
    if (rank > 8) fail(path, ": tensor '", name, "' has rank ", rank, " (at most 8)");
    std::vector<int64_t> dims(rank);
    for (auto& d : dims) {
      d = in.get<int64_t>("dimension");
      if (d < 0) fail(path, ": tensor '", name, "' has a negative dimension");
    }
    const uint64_t nbytes = in.get<uint64_t>("data size");
    Shape shape(dims);
    int64_t expected = 0;  // a forged shape's product must not wrap to the bytes claimed
    try {
      expected = storage_bytes(shape, dtype);
    } catch (const Error& e) {
      fail(path, ": tensor '", name, "': ", e.what());
    }
    if (nbytes != static_cast<uint64_t>(expected))
      fail(path, ": tensor '", name, "' of shape ", shape, " claims ", nbytes, " bytes");
    const char* data = in.take(nbytes, "tensor data");
    Tensor t = Tensor::empty(shape, dtype);
    std::memcpy(t.raw(), data, nbytes);
    ck.tensors.emplace(std::move(name), std::move(t));
  }
  if (!in.done()) fail(path, ": malformed checkpoint: bytes left after the last tensor");
  return ck;
}

namespace {
// What a checkpoint holds of a tensor: itself on the CPU, a host copy of one
// on a device, charged to "other" rather than counted twice as a parameter.
Tensor on_host(const Tensor& t) {
  if (t.device() == Device::cpu) return t;
  Tensor h = t.to(Device::cpu);
  h.retag(MemTag::other, "checkpoint");
  return h;
}
}  // namespace

Checkpoint capture(const std::string& model_name, Module& model, const Optimizer* optimizer, int64_t epoch,
                   uint64_t seed, const std::string& data) {
  Checkpoint ck;
  ck.model = model_name;
  ck.epoch = epoch;
  ck.seed = seed;
  ck.data = data;
  for (Parameter* p : model.parameters()) ck.tensors["param/" + p->name] = on_host(p->var.value());
  if (optimizer) {
    ck.optimizer = optimizer->name();
    ck.steps = optimizer->steps();
    for (const auto& [key, t] : optimizer->state()) ck.tensors["optim/" + key] = on_host(t);
  }
  return ck;
}

namespace {
// "'key' holds v at element i" for t's first value that is not finite, else "".
std::string first_nonfinite_in(const std::string& key, const Tensor& t) {
  if (t.dtype() != DType::f32 && t.dtype() != DType::f64) return "";
  for (int64_t i = 0; i < t.numel(); ++i)
    if (const double v = t.item(i); !std::isfinite(v)) return cat("'", key, "' holds ", v, " at element ", i);
  return "";
}

// A checkpoint's values pass its CRC whatever they are: a run that diverged
// saved NaNs, and a forged file can hold anything. Restored, either trains
// to NaN and blames the learning rate; refused, the error names the tensor.
void require_finite(const std::string& key, const Tensor& t) {
  const std::string bad = first_nonfinite_in(key, t);
  WN_CHECK(bad.empty(), "checkpoint: ", bad, " (saved by a run that diverged, or a damaged file)");
}

// Every tensor under `prefix` must be one that `expected` holds: a file with
// more was written for another model or optimizer, or forged.
void require_known(const Checkpoint& ck, const std::string& prefix, const std::set<std::string>& expected,
                   const std::string& owner) {
  for (const auto& [key, t] : ck.tensors)
    WN_CHECK(!key.starts_with(prefix) || expected.contains(key.substr(prefix.size())), "checkpoint: '", key,
             "' matches nothing in ", owner, " (saved from model '", ck.model, "', optimizer '", ck.optimizer, "')");
}
}  // namespace

std::string first_nonfinite(const Checkpoint& ck) {
  for (const auto& [key, t] : ck.tensors)
    if (key.starts_with("param/") || key.starts_with("optim/"))
      if (std::string bad = first_nonfinite_in(key, t); !bad.empty()) return bad;
  return "";
}

void restore(const Checkpoint& ck, Module& model, Optimizer* optimizer) {
  std::set<std::string> names;
  for (Parameter* p : model.parameters()) names.insert(p->name);
  require_known(ck, "param/", names, "the model's parameters");
  for (Parameter* p : model.parameters()) {
    auto it = ck.tensors.find("param/" + p->name);
    WN_CHECK(it != ck.tensors.end(), "checkpoint: no weights for ", p->name, " (saved from model '", ck.model,
             "')");
    Tensor& dst = p->var.value();
    WN_CHECK(it->second.shape() == dst.shape() && it->second.dtype() == dst.dtype(), "checkpoint: ", p->name,
             " is ", it->second.describe(), " in the file but ", dst.describe(), " in the model");
    require_finite(it->first, it->second);
    dst.copy_from(it->second);
  }
  if (!optimizer) return;
  WN_CHECK(ck.optimizer == optimizer->name(), "checkpoint: saved with optimizer '", ck.optimizer,
           "', resuming with '", optimizer->name(), "'");
  std::map<std::string, Tensor> state;
  const std::string prefix = "optim/";
  std::set<std::string> slots;
  for (const auto& [key, t] : optimizer->state()) slots.insert(key);
  require_known(ck, prefix, slots, cat("the ", optimizer->name(), " optimizer's state"));
  for (const auto& [key, t] : ck.tensors)
    if (key.starts_with(prefix)) {
      require_finite(key, t);
      state[key.substr(prefix.size())] = t;
    }
  optimizer->load_state(state, ck.steps);
}

}  // namespace warpnet::nn
