#include "device/kernels/optim/optim_registration.hpp"

namespace {
#include "kernels/optim/01_grid_stride.cu"
}  // namespace

namespace warpnet::device::optim_kernels {
namespace {

constexpr const char* kShapeText = "block (256), grid (min(ceil(n/256), 1056)): grid-stride loop, one element per "
                                   "thread per iteration, hyperparameters from a device buffer";
Launch shape(const Sizes& s) { return capped_grid(n(s)); }

const Registration sgd_momentum{Kernel{
    .op = "sgd_momentum",
    .version = 1,
    .name = "grid_stride",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = shape,
    .flops = [](const Sizes& s) { return kSgdFlops * n(s); },
    .bytes = [](const Sizes& s) { return sgd_bytes(s, shape(s)); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_sgd(s, l, b, sgd_momentum_grid_stride<kBlock>); },
    .copy = kThisCopy,
}};

const Registration adam{Kernel{
    .op = "adam",
    .version = 1,
    .name = "grid_stride",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = shape,
    .flops = [](const Sizes& s) { return kAdamFlops * n(s); },
    .bytes = [](const Sizes& s) { return adam_bytes(s, shape(s)); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_adam(s, l, b, adam_grid_stride<kBlock>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::optim_kernels
