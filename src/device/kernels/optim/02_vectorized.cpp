#include "device/kernels/optim/optim_registration.hpp"

namespace {
#include "kernels/optim/02_vectorized.cu"
}  // namespace

namespace warpnet::device::optim_kernels {
namespace {

constexpr const char* kShapeText = "block (256), grid (min(ceil(n/1024), 1056)): grid-stride loop, a float4 of "
                                   "each tensor per thread per iteration, the last n % 4 elements scalar";
// One thread per float4 (the tail needs at most 3 threads, which the first
// block always has).
Launch shape(const Sizes& s) { return capped_grid((int64_t(n(s)) + 3) / 4); }

const Registration sgd_momentum{Kernel{
    .op = "sgd_momentum",
    .version = 2,
    .name = "vectorized",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = shape,
    .flops = [](const Sizes& s) { return kSgdFlops * n(s); },
    // v1's bytes, in a quarter of the memory instructions.
    .bytes = [](const Sizes& s) { return sgd_bytes(s, shape(s)); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_sgd(s, l, b, sgd_momentum_vectorized<kBlock>); },
    .copy = kThisCopy,
}};

const Registration adam{Kernel{
    .op = "adam",
    .version = 2,
    .name = "vectorized",
    .precision = "fp32",
    .shape_text = kShapeText,
    .shape = shape,
    .flops = [](const Sizes& s) { return kAdamFlops * n(s); },
    .bytes = [](const Sizes& s) { return adam_bytes(s, shape(s)); },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) { launch_adam(s, l, b, adam_vectorized<kBlock>); },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::optim_kernels
