#include "device/backend.hpp"

#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "device/graph.hpp"
#include "device/run.hpp"

namespace warpnet::device {

Copy copy_for(Device device) {
  WN_CHECK(device != Device::cpu, "device backend: the CPU runs cpu:: ops, not registry kernels");
  return device == Device::emu ? Copy::emulator : Copy::cuda;
}

namespace {

// The runnable fp32 kernels of `op` on `device`, by version.
std::vector<const Kernel*> fp32_kernels(const std::string& op, Device device) {
  const Copy copy = copy_for(device);
  std::vector<const Kernel*> out;
  for (const Kernel* k : kernels(copy))  // sorted by op, then version
    if (k->op == op && !k->input_format && (copy == Copy::cuda || k->emulator)) out.push_back(k);
  return out;
}

struct KernelChoice {
  std::string text = "best";
  int every = -1;                   // a version limit for every op; -1: best
  std::map<std::string, int> ops;   // op -> exact version
};
KernelChoice& choice() {
  static KernelChoice c;
  return c;
}

// Kernel id -> the candidates it ran (empty for a one-kernel version).
std::map<std::string, std::set<std::string>>& launched() {
  static std::map<std::string, std::set<std::string>> ids;
  return ids;
}

uint64_t& launch_count() {
  static uint64_t n = 0;
  return n;
}

void note_launch(const Kernel& kernel, const Sizes* sizes) {
  ++launch_count();
  std::set<std::string>& candidates = launched()[kernel.id()];
  if (kernel.candidate && sizes) candidates.insert(kernel.candidate(*sizes));
}

struct Tunings {
  std::mutex mutex;
  std::set<std::pair<std::string, Sizes>> met;  // (kernel id, sizes) already tuned or being tuned
  TuningLog log;
};
Tunings& tunings() {
  static Tunings t;
  return t;
}

// See kernels_tuned() in the header. A tuner that throws (no candidate ran,
// or a candidate's output was wrong) ends the launch with its error.
void tune_at_first_use(const Kernel& k, const Sizes& sizes) {
  if (!k.tune || capturing()) return;
  Tunings& t = tunings();
  {
    const std::lock_guard lock(t.mutex);
    if (!t.met.insert({k.id(), sizes}).second) return;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string chose = k.tune(sizes);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::lock_guard lock(t.mutex);
  t.log.lines.push_back(cat(k.id(), " at ", describe_sizes(op(k.op), sizes), ": ", chose));
  t.log.seconds += seconds;
}

}  // namespace

TuningLog kernels_tuned() {
  const std::lock_guard lock(tunings().mutex);
  return tunings().log;
}

const Kernel& best_kernel(const std::string& op, Device device) {
  const std::vector<const Kernel*> all = fp32_kernels(op, device);
  WN_CHECK(!all.empty(), "device backend: no fp32 ", op, " kernel is registered for ", name_of(device),
           device == Device::cuda ? " (this build has no CUDA copy of the kernels)" : "");
  const auto have = [&] {  // for the errors only: this runs at every launch
    std::string ids;
    for (const Kernel* k : all) ids += cat(ids.empty() ? "" : ", ", k->id());
    return ids;
  };
  const auto best = best_versions().find(op);
  WN_CHECK(best != best_versions().end(), "device backend: ", op,
           " has no best version: src/device/best_versions.cpp names one per op, chosen by hand (its fp32 versions: ",
           have(), ")");
  for (const Kernel* k : all)
    if (k->version == best->second) return *k;
  fail("device backend: src/device/best_versions.cpp names ", op, " version ", best->second, ", which is not an fp32 ",
       op, " version ", name_of(device), " runs (its fp32 versions: ", have(), ")");
}

void set_kernel_choice(const std::string& text) {
  KernelChoice c;
  c.text = text;
  auto version = [&](const std::string& v) {
    size_t used = 0;
    int n = -1;
    try {
      n = std::stoi(v, &used);
    } catch (const std::exception&) {
    }
    WN_CHECK(used == v.size() && n >= 0, "--kernels: '", v, "' is not a version number (in '", text,
             "'; expected best, a version such as 1, or op=version pairs such as matmul=3,conv2d=1)");
    return n;
  };
  if (text != "best" && text.find('=') == std::string::npos) {
    c.every = version(text);
    WN_CHECK(c.every >= 1, "--kernels ", text, ": a version limit is at least 1 (every op's ladder starts at 1)");
  } else if (text != "best") {
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      const std::string pair = text.substr(start, comma - start);
      const size_t eq = pair.find('=');
      WN_CHECK(eq != std::string::npos, "--kernels: '", pair, "' is not op=version (in '", text, "')");
      const std::string name = pair.substr(0, eq);
      WN_CHECK(!name.empty(), "--kernels: '", pair, "' names no op (in '", text, "'; expected op=version)");
      op(name);  // throws naming the registered ops when there is no such op
      WN_CHECK(!c.ops.contains(name), "--kernels: ", name, " is chosen twice (in '", text, "'); name each op once");
      c.ops[name] = version(pair.substr(eq + 1));
      // Checked now, not at the op's first launch, after the data has loaded.
      std::string versions;
      bool registered = false;
      for (const Kernel* k : kernels(Copy::emulator))
        if (k->op == name) {
          registered = registered || k->version == c.ops[name];
          versions += cat(versions.empty() ? "" : ", ", k->version);
        }
      WN_CHECK(registered, "--kernels ", pair, ": ", name, " has no version ", c.ops[name], " (its versions: ",
               versions, ")");
      start = comma + 1;
    }
  }
  choice() = std::move(c);
}

const std::string& kernel_choice() { return choice().text; }

std::vector<std::string> kernels_launched() {
  std::vector<std::string> ids;
  for (const auto& [id, candidates] : launched()) ids.push_back(id);
  return ids;
}

uint64_t kernel_launches() { return launch_count(); }

std::vector<std::string> kernels_launched_with_candidates() {
  std::vector<std::string> out;
  for (const auto& [id, candidates] : launched()) {
    std::string line = id;
    for (const std::string& c : candidates) line += cat(c == *candidates.begin() ? " (" : "; ", c);
    out.push_back(candidates.empty() ? line : line + ")");
  }
  return out;
}

std::vector<std::string> chosen_ops_not_launched() {
  std::vector<std::string> out;
  for (const auto& [name, version] : choice().ops) {
    bool ran = false;
    for (const auto& [id, candidates] : launched()) ran = ran || id.starts_with(name + "/");
    if (!ran) out.push_back(cat(name, "=", version));
  }
  return out;
}

const Kernel& chosen_kernel(const std::string& op, Device device) {
  const KernelChoice& c = choice();
  const auto exact = c.ops.find(op);
  if (exact == c.ops.end() && c.every < 0) return best_kernel(op, device);
  const std::vector<const Kernel*> all = fp32_kernels(op, device);
  WN_CHECK(!all.empty(), "device backend: no fp32 ", op, " kernel is registered for ", name_of(device));
  if (exact != c.ops.end()) {
    for (const Kernel* k : all)
      if (k->version == exact->second) return *k;
    std::string have;
    for (const Kernel* k : all) have += cat(have.empty() ? "" : ", ", k->version);
    fail("--kernels ", c.text, ": ", op, " has no fp32 version ", exact->second, " that runs on ", name_of(device),
         " (it has ", have, ")");
  }
  // Every op at its highest version <= N; an op whose ladder starts above N at its first.
  const Kernel* pick = all.front();
  for (const Kernel* k : all)
    if (k->version <= c.every) pick = k;
  return *pick;
}

namespace {

// Checks launch_op's tensors (on `device`, contiguous, f32 or i32, each
// output of the op's shape at `sizes`) and appends their buffers, inputs
// first. Returns the number of output elements.
int64_t collect_buffers(const std::string& op_name, Device device, const Sizes& sizes,
                        std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs,
                        std::vector<void*>& buffers) {
  const std::vector<Shape> shapes = op(op_name).output_shapes(sizes);
  WN_CHECK(shapes.size() == outputs.size(), "device backend: ", op_name, " has ", shapes.size(), " outputs, given ",
           outputs.size());
  auto check = [&](const Tensor& t, const char* role) {
    WN_CHECK(t.device() == device && t.is_contiguous(), "device backend: ", op_name, ": an ", role, " is ",
             t.describe(), "; every tensor must be contiguous and on ", name_of(device));
    WN_CHECK(t.dtype() == DType::f32 || t.dtype() == DType::i32, "device backend: ", op_name, ": an ", role, " is ",
             t.describe(), "; the kernels take f32 (and i32 indices)");
  };
  for (const Tensor* t : inputs) {
    check(*t, "input");
    buffers.push_back(const_cast<void*>(t->raw()));
  }
  int64_t elements = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& t = *outputs[i];
    check(t, "output");
    // Kernels see flat buffers: an (N,C,H,W) activation is the {n} of an
    // elementwise op, so the element counts must agree, not the shapes.
    WN_CHECK(t.numel() == shapes[i].numel(), "device backend: ", op_name, ": output ", i, " is ", t.describe(),
             ", the op makes ", shapes[i], " at ", describe_sizes(op(op_name), sizes));
    elements += t.numel();
    buffers.push_back(t.raw());
  }
  return elements;
}

void launch_checked(const std::string& op_name, const Sizes& sizes, std::span<const Tensor* const> inputs,
                    std::span<Tensor* const> outputs) {
  WN_CHECK(!inputs.empty(), "device backend: ", op_name, " launched with no inputs");
  const Device device = inputs.front()->device();
  const Kernel& kernel = chosen_kernel(op_name, device);
  std::vector<void*> buffers;
  if (collect_buffers(op_name, device, sizes, inputs, outputs, buffers) == 0) return;  // a kernel need not handle empty grids
  tune_at_first_use(kernel, sizes);
  launch(kernel, sizes, buffers);
  note_launch(kernel, &sizes);
}

}  // namespace

void launch_op(const std::string& op_name, const Sizes& sizes, std::initializer_list<const Tensor*> inputs,
               std::initializer_list<Tensor*> outputs) {
  launch_checked(op_name, sizes, std::span(inputs.begin(), inputs.size()), std::span(outputs.begin(), outputs.size()));
}

void launch_op_many(const std::string& op_name, std::span<const OpTensors> entries) {
  if (entries.empty()) return;
  WN_CHECK(!entries.front().inputs.empty(), "device backend: ", op_name, " launched with no inputs");
  const Device device = entries.front().inputs.front()->device();
  const Kernel& kernel = chosen_kernel(op_name, device);
  if (!kernel.launch_many) {
    for (const OpTensors& e : entries) launch_checked(op_name, {e.inputs.at(0)->numel()}, e.inputs, e.outputs);
    return;
  }
  std::vector<int64_t> counts;
  std::vector<void*> buffers;
  for (const OpTensors& e : entries) {
    WN_CHECK(!e.inputs.empty(), "device backend: ", op_name, " launched with no inputs");
    counts.push_back(e.inputs.front()->numel());
    collect_buffers(op_name, device, {counts.back()}, e.inputs, e.outputs, buffers);
  }
  try {
    kernel.launch_many(counts, buffers);
  } catch (const Error& e) {
    fail(kernel.id(), " on ", counts.size(), " tensors: ", e.what());
  }
  note_launch(kernel, nullptr);
}

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, const Kernel* kernel) {
  const cpu::MatmulDims d = cpu::matmul_dims("device::matmul", a, b, trans_a, trans_b);
  WN_CHECK(a.dtype() == DType::f32, "device::matmul: the kernels take f32, got ", a.describe());
  WN_CHECK(a.device() == b.device() && a.device() != Device::cpu, "device::matmul: A is ", a.describe(), ", B is ",
           b.describe(), "; both must be on one device (emu or cuda)");
  const Kernel& k = kernel ? *kernel : chosen_kernel("matmul", a.device());
  WN_CHECK(k.op == "matmul" && k.copy == copy_for(a.device()) && !k.input_format, "device::matmul: ", k.id(),
           " (", to_string(k.copy), ", ", k.precision, ") cannot run an fp32 matmul on ", name_of(a.device()));
  Tensor c = Tensor::empty({d.m, d.n}, DType::f32, a.device());
  if (d.m == 0 || d.n == 0) return c;
  if (d.k == 0) return Tensor::zeros({d.m, d.n}).to(a.device());  // an empty sum; no kernel handles K = 0
  const Sizes sizes{d.m, d.n, d.k, trans_a, trans_b};
  const std::array<void*, 3> buffers{const_cast<void*>(a.raw()), const_cast<void*>(b.raw()), c.raw()};
  tune_at_first_use(k, sizes);
  launch(k, sizes, buffers);
  note_launch(k, &sizes);
  return c;
}

cpu::MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc, bool trans_a, bool trans_b,
                            bool need_da, bool need_db, const Kernel* kernel) {
  const cpu::MatmulDims d = cpu::matmul_dims("device::matmul_backward", a, b, trans_a, trans_b);
  WN_CHECK(dc.shape() == Shape({d.m, d.n}), "device::matmul_backward: dC is ", dc.shape(),
           " but op(A)·op(B) is (", d.m, ",", d.n, ")");
  // The same identities as cpu::matmul_backward; each product a kernel launch.
  cpu::MatmulGrads g;
  if (need_da)
    g.da = trans_a ? matmul(b, dc, trans_b, true, kernel)     // dA(K,M) = op(B)·dCᵀ
                   : matmul(dc, b, false, !trans_b, kernel);  // dA(M,K) = dC·op(B)ᵀ
  if (need_db)
    g.db = trans_b ? matmul(dc, a, true, trans_a, kernel)     // dB(N,K) = dCᵀ·op(A)
                   : matmul(a, dc, !trans_a, false, kernel);  // dB(K,N) = op(A)ᵀ·dC
  return g;
}

}  // namespace warpnet::device
