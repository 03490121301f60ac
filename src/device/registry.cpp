#include "device/registry.hpp"

#include <algorithm>
#include <cstdio>
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

}  // namespace

std::string Kernel::id() const {
  char number[16];
  std::snprintf(number, sizeof number, "%02d", version);
  return cat(op, "/", number, "_", name);
}

Registration::Registration(Kernel kernel) { kernel_list().push_back(std::move(kernel)); }
Registration::Registration(Op op) { op_map().emplace(op.name, std::move(op)); }

std::vector<const Kernel*> kernels(bool traced) {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_list())
    if (k.traced == traced) out.push_back(&k);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return std::tie(a->op, a->version) < std::tie(b->op, b->version); });
  return out;
}

const Op& op(const std::string& name) {
  auto it = op_map().find(name);
  WN_CHECK(it != op_map().end(), "kernel registry: no op named '", name, "'");
  return it->second;
}

const Kernel& find_kernel(const std::string& key, bool traced) {
  const auto all = kernels(traced);
  std::vector<const Kernel*> hits;
  for (const Kernel* k : all)
    if (k->id() == key || cat(k->op, "/", k->version) == key || k->name == key) hits.push_back(k);
  if (hits.size() == 1) return *hits.front();
  std::string known;
  for (const Kernel* k : all) known += cat(known.empty() ? "" : ", ", k->id());
  fail("kernel registry: ", hits.empty() ? "no kernel matches '" : "more than one kernel matches '", key,
       "'; registered", traced ? " (traced)" : "", ": ", known.empty() ? "none" : known);
}

std::string describe_sizes(const Op& op, const Sizes& sizes) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i)
    out += cat(i ? " " : "", i < op.size_names.size() ? op.size_names[i] : "?", "=", sizes[i]);
  return out;
}

}  // namespace warpnet::device
