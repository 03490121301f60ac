#include <numeric>

#include "device/kernels/optim/optim_registration.hpp"

namespace {
#include "kernels/optim/03_multi_tensor.cu"
}  // namespace

namespace warpnet::device::optim_kernels {
namespace {

constexpr const char* kShapeText = "block (256), grid (one block per 2048-element chunk of every tensor): a table "
                                   "argument maps each block to its tensor and chunk, v2's float4 loop within";

int chunks(int64_t elements) { return int(ceil_div(elements, kOptimChunk)); }

// The registry checks an op on one tensor of n elements; v3 is for many. So
// its single-tensor launch cuts the tensor into pieces of 3·k³ elements
// (k = 1, 2, ...: 3, 24, 81, 192, ...; the first pieces start at offsets
// that are not multiples of 4, so they take the scalar path), the last
// piece the rest, at most 20 pieces (two launches, kOptimMaxTensors per
// table), and updates them as separate tensors.
std::vector<int64_t> pieces(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t k = 1; n > 0; ++k) {
    const int64_t piece = k == 20 ? n : std::min(n, 3 * k * k * k);
    out.push_back(piece);
    n -= piece;
  }
  return out;
}

// The blocks of the launches that update `counts`, kOptimMaxTensors per launch.
Launch shape_of(std::span<const int64_t> counts) {
  int64_t blocks = 0;
  for (int64_t c : counts) blocks += chunks(c);
  return Launch{dim3(unsigned(std::max<int64_t>(blocks, 1))), dim3(kBlock), 0};
}
Launch shape(const Sizes& s) { return shape_of(pieces(n(s))); }

// One table per kOptimMaxTensors tensors: fills it with `set(table, slot,
// tensor)` and launches `run(table, blocks, hyper)`. `per` buffers per tensor.
template <class Table, class Set, class Run>
void launch_tables(std::span<const int64_t> counts, Buffers b, size_t per, size_t hyper_at, Set set, Run run) {
  WN_CHECK(b.size() == counts.size() * per, "multi-tensor update: ", counts.size(), " tensors need ",
           counts.size() * per, " buffers, given ", b.size());
  for (size_t first = 0; first < counts.size(); first += kOptimMaxTensors) {
    Table table{};
    int blocks = 0;
    const void* hyper = b[first * per + hyper_at];
    for (size_t i = first; i < counts.size() && table.count < kOptimMaxTensors; ++i) {
      WN_CHECK(counts[i] >= 0 && counts[i] <= INT32_MAX, "multi-tensor update: tensor ", i, " has ", counts[i],
               " elements; the kernel indexes at most 2^31 − 1");
      WN_CHECK(b[i * per + hyper_at] == hyper, "multi-tensor update: tensor ", i,
               " has other hyperparameters than the first; one launch reads one set");
      const int slot = table.count++;
      table.first_block[slot] = blocks;
      table.n[slot] = int(counts[i]);
      set(table, slot, b.subspan(i * per, per));
      blocks += chunks(counts[i]);
    }
    table.first_block[table.count] = blocks;
    if (blocks > 0) run(table, blocks, static_cast<const float*>(hyper));
  }
}

// Buffers per tensor {w, v, g, hyper, w', v'}.
void sgd_many(std::span<const int64_t> counts, Buffers b) {
  launch_tables<SgdTensors>(
      counts, b, 6, 3,
      [](SgdTensors& t, int i, Buffers x) {
        t.w[i] = static_cast<const float*>(x[0]);
        t.v[i] = static_cast<const float*>(x[1]);
        t.g[i] = static_cast<const float*>(x[2]);
        t.w_out[i] = static_cast<float*>(x[4]);
        t.v_out[i] = static_cast<float*>(x[5]);
      },
      [](const SgdTensors& t, int blocks, const float* hyper) {
        launch_dependent_kernel(sgd_momentum_multi_tensor<kBlock>, dim3(blocks), dim3(kBlock), 0, t, hyper);
        check_launch();
      });
}

// Buffers per tensor {w, m, v, g, hyper, w', m', v'}.
void adam_many(std::span<const int64_t> counts, Buffers b) {
  launch_tables<AdamTensors>(
      counts, b, 8, 4,
      [](AdamTensors& t, int i, Buffers x) {
        t.w[i] = static_cast<const float*>(x[0]);
        t.m[i] = static_cast<const float*>(x[1]);
        t.v[i] = static_cast<const float*>(x[2]);
        t.g[i] = static_cast<const float*>(x[3]);
        t.w_out[i] = static_cast<float*>(x[5]);
        t.m_out[i] = static_cast<float*>(x[6]);
        t.v_out[i] = static_cast<float*>(x[7]);
      },
      [](const AdamTensors& t, int blocks, const float* hyper) {
        launch_dependent_kernel(adam_multi_tensor<kBlock>, dim3(blocks), dim3(kBlock), 0, t, hyper);
        check_launch();
      });
}

// The single-tensor launch of the registry's checks: pieces() as separate
// tensors, each with the pieces' offsets into every buffer.
template <size_t Per>
void launch_pieces(const Sizes& s, Buffers b, void (*many)(std::span<const int64_t>, Buffers), size_t hyper_at) {
  WN_CHECK(b.size() == Per, "multi-tensor update: ", Per, " buffers expected, given ", b.size());
  const std::vector<int64_t> counts = pieces(n(s));
  std::vector<void*> all;
  int64_t offset = 0;
  for (int64_t c : counts) {
    for (size_t k = 0; k < Per; ++k)
      all.push_back(k == hyper_at ? b[k] : static_cast<void*>(static_cast<float*>(b[k]) + offset));
    offset += c;
  }
  many(counts, all);
}

const Registration sgd_momentum{Kernel{
    .op = "sgd_momentum",
    .version = 3,
    .name = "multi_tensor",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = shape,
    .flops = [](const Sizes& s) { return kSgdFlops * n(s); },
    // v2's bytes; every thread reads the hyperparameters.
    .bytes = [](const Sizes& s) { return sgd_bytes(s, shape(s)); },
    .launch = [](const Sizes& s, const Launch&, Buffers b) { launch_pieces<6>(s, b, sgd_many, 3); },
    .copy = kThisCopy,
    .launch_many = sgd_many,
}};

const Registration adam{Kernel{
    .op = "adam",
    .version = 3,
    .name = "multi_tensor",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = shape,
    .flops = [](const Sizes& s) { return kAdamFlops * n(s); },
    .bytes = [](const Sizes& s) { return adam_bytes(s, shape(s)); },
    .launch = [](const Sizes& s, const Launch&, Buffers b) { launch_pieces<8>(s, b, adam_many, 4); },
    .copy = kThisCopy,
    .launch_many = adam_many,
}};

}  // namespace
}  // namespace warpnet::device::optim_kernels
