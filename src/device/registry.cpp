#include "device/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "core/error.hpp"

namespace warpnet::device {
namespace {

// Function-local statics: registrations run during static initialization, in
// whatever order the linker put the files.
std::vector<Kernel>& kernel_list() {
  static std::vector<Kernel> list;
  return list;
}
std::map<std::string, Op>& op_map() {
  static std::map<std::string, Op> ops;
  return ops;
}
// The file that registered each entry of kernel_list and op_map, for the
// errors that name both files of a clash.
std::vector<std::string>& kernel_files() {
  static std::vector<std::string> files;
  return files;
}
std::map<std::string, std::string>& op_files() {
  static std::map<std::string, std::string> files;
  return files;
}
// The registrations refused, one line each: thrown by every lookup
// (require_no_clash), since an exception during static initialization would
// end the program before main with no test or command named.
std::vector<std::string>& clashes() {
  static std::vector<std::string> lines;
  return lines;
}

// "src/device/kernels/matmul/05_2d_blocktiling.cpp": the path from the
// source tree's src/ on, not the build machine's folders.
std::string source_name(const char* file) {
  if (!file) return "a file not known";
  const std::string path = file;
  const size_t src = path.rfind("/src/");
  return src == std::string::npos ? path : path.substr(src + 1);
}

void require_no_clash() {
  if (clashes().empty()) return;
  std::string lines;
  for (const std::string& line : clashes()) lines += cat("\n  ", line);
  fail("kernel registry: ", clashes().size(), " registration(s) refused:", lines);
}

}  // namespace

const char* to_string(Copy copy) {
  switch (copy) {
    case Copy::emulator: return "emulator";
    case Copy::traced: return "traced emulator";
    case Copy::cuda: return "cuda";
  }
  return "?";
}

std::string Kernel::id() const {
  char number[16];
  std::snprintf(number, sizeof number, "%02d", version);
  return cat(op, "/", number, "_", name);
}

double Kernel::accumulation_widening() const {
  WN_CHECK(accumulator_bits >= 2 && accumulator_bits <= 24, id(), ": accumulator_bits is ", accumulator_bits,
           ", outside 2..24");
  // The emulator's copies add in fp32 (simt/wgmma.cpp too): only
  // the GPU's hardware keeps fewer bits, so only its check is widened.
  return copy == Copy::cuda ? std::ldexp(1.0, 24 - accumulator_bits) : 1.0;
}

double Kernel::output_rounding() const {
  return output_format ? std::ldexp(1.0, -(output_format->mantissa + 1)) : 0.0;
}

std::string registration_clash(const Kernel& a, const std::string& a_file, const Kernel& b,
                               const std::string& b_file) {
  if (a.copy != b.copy || a.op != b.op) return "";  // each copy registers every kernel once
  if (a.id() == b.id())
    return cat(b.id(), " is registered twice, by ", a_file, " and by ", b_file, " (a copied registration: give "
               "the new one its own version number and name)");
  // Version 0, the vendor library, has one registration per precision (cublas, cublas_bf16, ...).
  if (a.version == b.version && a.version != 0)
    return cat(b.op, " version ", b.version, " is registered twice: ", a.id(), " by ", a_file, " and ", b.id(),
               " by ", b_file, " (each version has a number of its own: kernels/", b.op, "/NN_<name>.cu)");
  return "";
}

Registration::Registration(Kernel kernel, const char* file) {
  const std::string where = source_name(file);
  for (size_t i = 0; i < kernel_list().size(); ++i) {
    const std::string clash = registration_clash(kernel_list()[i], kernel_files()[i], kernel, where);
    if (clash.empty()) continue;
    // The three copies of a registration file clash alike: one line says it.
    if (std::find(clashes().begin(), clashes().end(), clash) == clashes().end()) clashes().push_back(clash);
    return;
  }
  kernel_list().push_back(std::move(kernel));
  kernel_files().push_back(where);
}

Registration::Registration(Op op, const char* file) {
  const std::string where = source_name(file);
  if (op_map().contains(op.name)) {
    clashes().push_back(cat("op ", op.name, " is registered twice, by ", op_files()[op.name], " and by ", where));
    return;
  }
  op_files()[op.name] = where;
  op_map().emplace(op.name, std::move(op));
}

std::vector<const Kernel*> kernels(Copy copy) {
  require_no_clash();
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_list())
    if (k.copy == copy) out.push_back(&k);
  // By name within a version: an op's version-0 kernels of one format come in
  // a fixed order, and the first is its yardstick (conv2d/00_cudnn before
  // 00_cudnn_implicit_gemm).
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) {
    return std::tie(a->op, a->version, a->name) < std::tie(b->op, b->version, b->name);
  });
  return out;
}

const Op& op(const std::string& name) {
  require_no_clash();
  auto it = op_map().find(name);
  if (it == op_map().end()) {
    std::string names;
    for (const auto& [known, o] : op_map()) names += (names.empty() ? "" : ", ") + known;
    fail("kernel registry: no op named '", name, "' (the ops: ", names, ")");
  }
  return it->second;
}

const Kernel& find_kernel(const std::string& key, Copy copy) {
  const auto all = kernels(copy);
  std::vector<const Kernel*> hits;
  for (const Kernel* k : all)
    if (k->id() == key || k->id().substr(0, k->op.size() + 3) == key || cat(k->op, "/", k->version) == key ||
        k->name == key)  // "matmul/03_smem_tiled", "matmul/03", "matmul/3", "smem_tiled"
      hits.push_back(k);
  if (hits.size() == 1) return *hits.front();
  // An op's name alone ("relu"): list its versions only.
  std::string versions;
  for (const Kernel* k : all)
    if (k->op == key) versions += cat(versions.empty() ? "" : ", ", k->id());
  WN_CHECK(versions.empty(), "kernel registry: '", key, "' is an op; name one of its versions (", to_string(copy),
           "): ", versions);
  // "matmul/99": the versions of that op only, not every kernel there is.
  const std::string op_named = key.substr(0, key.find('/'));
  const bool op_known = key.find('/') != std::string::npos &&
                        std::any_of(all.begin(), all.end(), [&](const Kernel* k) { return k->op == op_named; });
  std::string known;
  if (hits.size() > 1)  // ambiguous ("naive"): the kernels it matches, not every kernel there is
    for (const Kernel* k : hits) known += cat(known.empty() ? "" : ", ", k->id());
  else
    for (const Kernel* k : all)
      if (!op_known || k->op == op_named) known += cat(known.empty() ? "" : ", ", k->id());
  fail("kernel registry: ", hits.size() > 1 ? cat("'", key, "' matches more than one kernel: ", known)
                                            : cat("no kernel matches '", key, "'; registered (", to_string(copy),
                                                  op_known ? cat(", ", op_named) : "", "): ",
                                                  known.empty() ? "none" : known));
}

Sizes complete_sizes(const Op& op, const Sizes& given) {
  std::string names;
  for (const std::string& n : op.size_names) names += cat(names.empty() ? "" : ",", n);
  WN_CHECK(!given.empty() && given.size() <= op.defaults.size(), op.name, " takes 1 to ", op.defaults.size(),
           " sizes (", names, "), got ", given.size());
  Sizes out = given;
  out.insert(out.end(), op.defaults.begin() + std::ptrdiff_t(given.size()), op.defaults.end());
  require_launchable(op, out);
  return out;
}

void require_launchable(const Op& op, const Sizes& sizes) {
  WN_CHECK(sizes.size() == op.size_names.size(), op.name, " takes ", op.size_names.size(), " sizes, got ",
           sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i)  // the kernels take their sizes as int
    WN_CHECK(sizes[i] <= std::numeric_limits<int32_t>::max(), op.name, ": ", op.size_names[i], " = ", sizes[i],
             " at ", describe_sizes(op, sizes), ": at most 2^31 - 1 (the kernels take int sizes)");
  if (op.check_sizes) op.check_sizes(op, sizes);
}

void require_indexable(const Op& op, const Sizes& sizes, const Shape& shape, const char* what) {
  WN_CHECK(shape.numel() <= kMaxIndexedElements, op.name, ": ", what, " of ", shape, " at ",
           describe_sizes(op, sizes), " has ", shape.numel(), " elements, more than 2^31 - 1024 (the kernels index "
           "in int, and a last block's threads form indices up to a block past the end)");
}

std::string cannot_run_on(const Kernel& kernel, int major, int minor) {
  const int sm = 10 * major + minor;
  if (kernel.arch_specific && sm != kernel.min_sm)
    return cat(kernel.id(), " runs on sm_", kernel.min_sm, " only (", kernel.precision, ": code built for sm_",
               kernel.min_sm, "a runs on that architecture alone); this GPU is sm_", major, minor);
  if (sm < kernel.min_sm)
    return cat(kernel.id(), " needs sm_", kernel.min_sm, " or newer (", kernel.precision, "); this GPU is sm_", major,
               minor);
  return "";
}

void every_size_at_least_1(const Op& op, const Sizes& sizes) {
  require_at_least(op, sizes, Sizes(sizes.size(), 1));
  require_indexable(op, sizes, Shape(std::vector<int64_t>(sizes.begin(), sizes.end())), "the tensor");
}

void require_at_least(const Op& op, const Sizes& sizes, const Sizes& minimum) {
  for (size_t i = 0; i < minimum.size() && i < sizes.size(); ++i)
    WN_CHECK(sizes[i] >= minimum[i], op.name, ": ", op.size_names[i], " = ", sizes[i], " at ",
             describe_sizes(op, sizes), ": it must be at least ", minimum[i]);
}

std::string describe_sizes(const Op& op, const Sizes& sizes) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i)
    out += cat(i ? " " : "", i < op.size_names.size() ? op.size_names[i] : "?", "=", sizes[i]);
  return out;
}

}  // namespace warpnet::device
