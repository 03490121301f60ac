#include "device/kernels/pool/pool_registration.hpp"

namespace {
#include "kernels/pool/01_direct.cu"
}  // namespace

namespace warpnet::device::pool {
namespace {

const float* in(Buffers b, int i) { return static_cast<const float*>(b[i]); }
float* out(Buffers b, int i) { return static_cast<float*>(b[i]); }

// Buffers {x, y}.
const Registration max_pool2d{Kernel{
    .op = "max_pool2d",
    .version = 1,
    .name = "direct",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*C*P*Q/256)): one thread per output, scanning its window",
    .shape = [](const Sizes& s) { return one_thread_each(outputs(shape_of(s))); },
    // One comparison per pixel of each (clipped) window.
    .flops = [](const Sizes& s) { return double(shape_of(s).planes) * window_pixels(shape_of(s)); },
    // Each window's pixels read once, each y written once.
    .bytes = [](const Sizes& s) {
      const Pool2dShape g = shape_of(s);
      return 4.0 * (g.planes * window_pixels(g) + outputs(g));
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(max_pool2d_direct<kBlock>, l.grid, l.block, l.dynamic_shared, shape_of(s), in(b, 0), out(b, 1));
      check_launch();
    },
    .copy = kThisCopy,
}};

// Buffers {x, dy, dx}.
const Registration max_pool2d_backward{Kernel{
    .op = "max_pool2d_backward",
    .version = 1,
    .name = "direct",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*C*H*W/256)): one thread per input pixel, recomputing the winner of "
                  "each window that covers it",
    .shape = [](const Sizes& s) { return one_thread_each(inputs(shape_of(s))); },
    // The rescans' comparisons and one add per window (by its winner).
    .flops = [](const Sizes& s) {
      const Pool2dShape g = shape_of(s);
      return g.planes * window_pixels_squared(g) + outputs(g);
    },
    // x: each window rescanned by each of its pixels' threads, |window|²
    // loads; dy: each window's read once, by the thread of its winner (every
    // window has exactly one, inside it); dx written once.
    .bytes = [](const Sizes& s) {
      const Pool2dShape g = shape_of(s);
      return 4.0 * (g.planes * window_pixels_squared(g) + outputs(g) + inputs(g));
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(max_pool2d_backward_direct<kBlock>, l.grid, l.block, l.dynamic_shared, shape_of(s), in(b, 0),
                    in(b, 1), out(b, 2));
      check_launch();
    },
    .copy = kThisCopy,
}};

// Buffers {x, y}.
const Registration avg_pool2d{Kernel{
    .op = "avg_pool2d",
    .version = 1,
    .name = "direct",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*C*P*Q/256)): one thread per output, summing its window",
    .shape = [](const Sizes& s) { return one_thread_each(outputs(shape_of(s))); },
    // One add per window pixel, one multiply per output.
    .flops = [](const Sizes& s) {
      const Pool2dShape g = shape_of(s);
      return g.planes * window_pixels(g) + outputs(g);
    },
    .bytes = [](const Sizes& s) {
      const Pool2dShape g = shape_of(s);
      return 4.0 * (g.planes * window_pixels(g) + outputs(g));
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(avg_pool2d_direct<kBlock>, l.grid, l.block, l.dynamic_shared, shape_of(s), in(b, 0), out(b, 1));
      check_launch();
    },
    .copy = kThisCopy,
}};

// Buffers {dy, dx}.
const Registration avg_pool2d_backward{Kernel{
    .op = "avg_pool2d_backward",
    .version = 1,
    .name = "direct",
    .precision = "fp32",
    .shape_text = "block (256), grid (ceil(N*C*H*W/256)): one thread per input pixel, summing dy over the windows "
                  "that cover it",
    .shape = [](const Sizes& s) { return one_thread_each(inputs(shape_of(s))); },
    // One add per (pixel, covering window) pair — Σ over windows of their
    // pixels — and one multiply per pixel.
    .flops = [](const Sizes& s) {
      const Pool2dShape g = shape_of(s);
      return g.planes * window_pixels(g) + inputs(g);
    },
    // dy read once per (pixel, covering window) pair, dx written once.
    .bytes = [](const Sizes& s) {
      const Pool2dShape g = shape_of(s);
      return 4.0 * (g.planes * window_pixels(g) + inputs(g));
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      launch_kernel(avg_pool2d_backward_direct<kBlock>, l.grid, l.block, l.dynamic_shared, shape_of(s), in(b, 0),
                    out(b, 1));
      check_launch();
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::pool
