// The registration of an autotuned conv version (conv2d/07-11,
// conv2d_dgrad/03-07, conv2d_wgrad/03-04) from its candidates
// (AutotunedConv, conv_registration.hpp): the choice for some sizes is the
// candidate a tuner measured fastest on this GPU for them, else the
// version's table; the registered shape, bytes, launch and error bound all
// follow that choice, and on a GPU Kernel::tune times the candidates
// (conv_tune.hpp).
// Each copy of a registration (plain, traced, nvcc; ../copy.hpp) keeps its
// own winners, so an anonymous namespace as the other registration headers.
#pragma once
#include "device/kernels/conv/conv_registration.hpp"
#include "device/kernels/conv/winograd_bound.hpp"
#include "device/kernels/tuned_choices.hpp"
#if defined(__CUDACC__)
#include "device/kernels/conv/conv_tune.hpp"
#endif

namespace warpnet::device::conv {
namespace {

// The winners the tuner measured for `version`, per sizes.
template <const AutotunedConv& version>
TunedChoices& tuned() {
  static TunedChoices t;
  return t;
}

template <const AutotunedConv& version>
int choice(const Sizes& s) {
  return tuned<version>().find(s).value_or(version.table_choice(shape_of(s)));
}

// How the registry lists a version: kernels/conv/<file> <version>_<name>,
// its launch shapes in words.
struct Listing {
  int version;
  const char* name;
  const char* shape_text;
};

// The fp32 kernel `listing` names, with the op, shape, FLOPs (the
// forward's: each pass sums the same products another way), bytes, launch,
// error bound and tune of `version`'s candidates.
template <const AutotunedConv& version>
Kernel autotuned_kernel(const Listing& listing) {
  Kernel kernel{.op = op_name(version.pass),
                .version = listing.version,
                .name = listing.name,
                .precision = "fp32",
                .shape_text = listing.shape_text,
                .shape = nullptr,
                .flops = flops,
                .bytes = nullptr,
                .launch = nullptr};
  kernel.shape = [](const Sizes& s) { return version.shape(choice<version>(s), s); };
  kernel.bytes = [](const Sizes& s) { return version.bytes(choice<version>(s), s); };
  kernel.launch = [](const Sizes& s, const Launch& l, Buffers b) {
    version.launch(choice<version>(s), s, l, b);
    check_launch();
  };
  kernel.candidate = [](const Sizes& s) { return version.name(choice<version>(s)); };
  // A Winograd candidate's checks allow its own bound, the others the op's.
  if constexpr (version.winograd != nullptr)
    kernel.tolerance = [](const Sizes& s, const std::vector<Tensor>& in) {
      const WinogradTile tile = version.winograd(choice<version>(s));
      if (tile == WinogradTile::none) return op(op_name(version.pass)).tolerance(s, in);
      return version.pass == ConvPass::forward ? winograd_bound::forward_tolerance(s, in, tile)
                                               : winograd_bound::dgrad_tolerance(s, in, tile);
    };
  kernel.copy = kThisCopy;
#if defined(__CUDACC__)
  kernel.tune = [](const Sizes& given) { return tune_conv(version, given, tuned<version>()); };
#endif
  return kernel;
}

}  // namespace
}  // namespace warpnet::device::conv
